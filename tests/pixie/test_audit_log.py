"""The audit log, as auditors and operators read it: the admin's page, GET /api/audit/
and the CSV and JSON Lines exports, with one set of filters and pages by position."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.urls import reverse

from catalog.models import WorkspaceSkill
from pixie.core.audit.api import AuditEntrySerializer, HistoryEntrySerializer
from pixie.core.audit.log import (
    LISTED_OBJECTS,
    AuditQuery,
    audit_entries,
    entries_data,
    entry_rows,
    keyset,
)
from pixie.core.audit.records import audited
from pixie.core.models import AuditEntry, Workspace
from pixie.core.people.permissions import AUDITORS_GROUP
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace
from tests.installer.flow import install
from tests.services import service_missing

pytestmark = pytest.mark.django_db

LOG = "/admin/pixie/auditentry/"


@pytest.fixture
def world(demo_catalog, django_capture_on_commit_callbacks):
    """acme with an install and 12 API edits by its owner; globex with one rename."""
    owner = make_user("olive")
    workspace = make_workspace("acme", owner=owner, members=[make_user("mia")])
    plan = install(workspace, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    for n in range(12):
        answer = api_for(owner).patch(
            "/api/workspaces/acme/skills/invoice-chase/", {"body": f"Chase {n}."}, format="json"
        )
        assert answer.status_code == 200
    gus = make_user("gus")
    globex = make_workspace("globex", owner=gus)
    with audited(actor=gus, comment="Renamed globex"):
        globex.name = "Globex Corp"
        globex.save()
    auditor = make_user("aud")
    auditor.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    return {"owner": owner, "plan": plan, "auditor": auditor, "workspace": workspace}


def ids(rows) -> list[int]:
    return [row["id"] for row in rows]


def api_all(client, **params) -> list[dict]:
    """Every entry the API lists for these filters, following its cursor."""
    answer = client.get("/api/audit/", params)
    assert answer.status_code == 200, answer.content
    rows, body = [], answer.json()
    rows += body["results"]
    while body["next"]:
        body = client.get(body["next"]).json()
        rows += body["results"]
    return rows


def test_each_filter_finds_what_it_names_in_the_api_and_the_page(world):
    reader = api_for(world["auditor"])
    everything = api_all(reader)
    assert len(everything) == AuditEntry.objects.count()
    by_olive = api_all(reader, person="olive")
    assert by_olive and {row["by"] for row in by_olive} == {"olive"}
    assert {row["workspace"] for row in api_all(reader, workspace="globex")} == {"globex"}
    catalog = api_all(reader, workspace="catalog")
    assert catalog and {row["where"] for row in catalog} == {"the catalog"}
    plan = world["plan"]
    of_plan = api_all(reader, plan=plan.pk)
    assert {row["plan"] for row in of_plan} == {plan.pk}
    assert any(row["comment"] == f"Applied plan #{plan.pk}" for row in of_plan)
    assert any(row["comment"].startswith("Approved plan") for row in of_plan)
    renames = api_all(reader, type="pixie.workspace")
    assert "Renamed globex" in {row["comment"] for row in renames}
    assert all(
        any(o["type"] == "pixie.workspace" for o in row["objects"]) or row["object_count"] > 20
        for row in renames
    )
    assert {row["channel"] for row in api_all(reader, channel="task")} == {"task"}
    assert api_all(reader, search="no comment says this") == []
    assert len(api_all(reader, search="edited skill @invoice")) == 12
    today = everything[0]["at"][:10]
    assert len(api_all(reader, since=today, until=today)) == len(everything)
    assert api_all(reader, until="2000-01-01") == []
    # The page shows the same rows for the same filters.
    page = admin_for(world["auditor"]).get(LOG, {"workspace": "globex"}).content.decode()
    assert "Renamed globex" in page and "Edited skill @invoice-chase" not in page


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"plan": "soon"}, "plan: 'soon' is not a plan number."),
        ({"channel": "fax"}, "channel: 'fax' is not a path; one of admin, api"),
        ({"type": "catalog.nothing"}, "type: 'catalog.nothing' is not a kind of object"),
        ({"workspace": "initech"}, "workspace: no workspace has the slug 'initech'"),
        ({"since": "yesterday"}, "since: 'yesterday' is not a date (YYYY-MM-DD)."),
        ({"since": "2026-12-02", "until": "2026-12-01"}, "since (2026-12-02) is after until"),
        ({"search": "x" * 201}, "search: at most 200 characters (201 given)."),
    ],
)
def test_a_bad_filter_is_named_and_shows_nothing(world, params, words):
    answer = api_for(world["auditor"]).get("/api/audit/", params)
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid" and words in answer.json()["detail"]
    page = admin_for(world["auditor"]).get(LOG, params)
    assert page.status_code == 200
    text = page.content.decode()
    assert words.replace("'", "&#x27;") in text
    assert 'id="audit-log"' not in text and "Nothing is shown until the filters are mended." in text
    export = api_for(world["auditor"]).get("/api/audit/export.csv", params)
    assert export.status_code == 400 and words in export.json()["detail"]


def test_the_page_walks_older_and_back_by_position_in_bounded_queries(
    world, django_assert_max_num_queries
):
    globex = Workspace.objects.get(slug="globex")
    for n in range(70):
        with audited(actor=None, comment=f"Renamed globex, take {n}"):
            globex.name = f"Globex {n}"
            globex.save()
    client = admin_for(world["auditor"])
    seen, url, pages = [], LOG, 0
    while url:
        with django_assert_max_num_queries(12):
            answer = client.get(url)
        pages += 1
        text = answer.content.decode()
        seen += [int(part.split('"')[0]) for part in text.split('<tr id="entry-')[1:]]
        older = answer.context["page"].older
        url = f"{LOG}?before={older}" if older else None
    assert pages >= 2
    newest_first = AuditEntry.objects.order_by("-revision_id")
    everything = list(newest_first.values_list("revision", flat=True))
    assert seen == everything  # newest first, each once, none left out
    # The second page's "Newer" leads back to the first.
    second = client.get(f"{LOG}?before={everything[49]}")
    back = client.get(f"{LOG}?after={second.context['page'].newer}")
    assert [e["id"] for e in back.context["page"].entries] == everything[:50]
    assert client.get(f"{LOG}?before=a-cursor").status_code == 200  # named, not a crash


def test_exports_hold_the_filtered_rows_whole_and_alike_from_admin_and_api(world):
    auditor = world["auditor"]
    wanted = AuditEntry.objects.filter(workspace__slug="acme").count()
    admin_csv = admin_for(auditor).get(f"{LOG}export.csv", {"workspace": "acme"})
    assert admin_csv.status_code == 200
    assert admin_csv["Content-Type"] == "text/csv; charset=utf-8"
    assert 'attachment; filename="pixie-audit-' in admin_csv["Content-Disposition"]
    admin_text = b"".join(admin_csv.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(admin_text)))
    assert len(rows) == wanted
    assert {row["workspace"] for row in rows} == {"acme"}
    # A cell a spreadsheet would run as a formula is kept as text: "@invoice-chase r3".
    edited = next(row for row in rows if row["comment"] == "Edited skill @invoice-chase")
    assert edited["objects"].startswith("catalog.") and "'@" not in edited["comment"]
    api_csv = api_for(auditor).get(
        "/api/audit/export.csv", {"workspace": "acme"}, HTTP_ACCEPT="text/csv"
    )
    assert api_csv.status_code == 200
    assert b"".join(api_csv.streaming_content).decode() == admin_text
    lines = b"".join(
        api_for(auditor).get("/api/audit/export.jsonl", {"workspace": "acme"}).streaming_content
    ).splitlines()
    assert [json.loads(line)["id"] for line in lines] == [int(row["id"]) for row in rows]
    assert ids(api_all(api_for(auditor), workspace="acme")) == [int(row["id"]) for row in rows]


def test_a_cell_starting_like_a_formula_is_exported_as_text(world):
    owner = world["owner"]
    skill = WorkspaceSkill.objects.get(workspace=world["workspace"], slug="invoice-chase")
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    answer = admin_for(owner).post(
        edit, {"name": "Invoice chase", "body": "Chase.", "comment": "=HYPERLINK(1)"}
    )
    assert answer.status_code == 302
    export = admin_for(world["auditor"]).get(f"{LOG}export.csv", {"search": "HYPERLINK"})
    text = b"".join(export.streaming_content).decode()
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["comment"] == "'=HYPERLINK(1)"


def test_a_formula_after_a_semicolon_stays_inside_its_quoted_cell(world):
    """A spreadsheet in a locale that splits on ";" reads no cell that starts a formula."""
    skill = WorkspaceSkill.objects.get(workspace=world["workspace"], slug="invoice-chase")
    answer = admin_for(world["owner"]).post(
        reverse("admin:catalog_workspaceskill_edit", args=[skill.pk]),
        {"name": "Invoice chase", "body": "Chase.", "comment": 'Paid;=HYPERLINK("x")'},
    )
    assert answer.status_code == 302
    export = admin_for(world["auditor"]).get(f"{LOG}export.csv", {"search": "HYPERLINK"})
    text = b"".join(export.streaming_content).decode()
    assert '"Paid;\'=HYPERLINK(""x"")"' in text
    for delimiter in (",", ";"):
        cells = [cell for row in csv.reader(io.StringIO(text), delimiter=delimiter) for cell in row]
        assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@")], delimiter


def test_only_auditors_and_operators_read_the_log(world):
    member = make_user("mo")
    Workspace.objects.get(slug="acme").memberships.create(user=member, role="owner")
    refused = api_for(member).get("/api/audit/")
    assert refused.status_code == 403 and refused.json()["code"] == "auditor_required"
    assert api_for(member).get("/api/audit/export.jsonl").status_code == 403
    assert admin_for(member).get(LOG).status_code == 403
    assert admin_for(member).get(f"{LOG}export.csv").status_code == 403
    assert api_for(member).get("/api/workspaces/acme/history/").status_code == 200  # theirs
    operator = make_user("opal")
    operator.groups.add(Group.objects.get(name="operators"))
    assert api_for(operator).get("/api/audit/").status_code == 200
    anonymous = api_for(None).get("/api/audit/")
    assert anonymous.status_code in (401, 403)


def test_a_person_s_words_do_not_file_a_change_under_a_plan(world):
    """Only Pixie's own record of a plan attaches a change to it, never a comment."""
    skill = WorkspaceSkill.objects.get(workspace=world["workspace"], slug="invoice-chase")
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    words = f"Undo plan #{world['plan'].pk}"
    form = {"name": "Invoice chase", "body": "Back.", "comment": words}
    admin_for(world["owner"]).post(edit, form)
    entry = AuditEntry.objects.select_related("revision").latest("revision_id")
    assert entry.revision.comment == f"Undo plan #{world['plan'].pk}"
    assert entry.plan_id is None


def test_a_large_change_lists_its_first_objects_and_counts_the_rest(world):
    owner = world["owner"]
    workspaces = [make_workspace(f"team-{n}", owner=owner) for n in range(30)]
    with audited(actor=owner, comment="Renamed thirty teams"):
        for workspace in workspaces:
            workspace.name = f"{workspace.name} (old)"
            workspace.save()
    (entry,) = api_all(api_for(world["auditor"]), search="Renamed thirty")
    assert entry["object_count"] == 30 and len(entry["objects"]) == 20
    assert entry["where"] == "several workspaces" and entry["workspace"] is None
    page = admin_for(world["auditor"]).get(LOG, {"search": "Renamed thirty"}).content.decode()
    assert "and 25 more" in page and "several workspaces" in page


def test_a_workspace_s_members_page_through_every_object_of_a_large_change(
    world, django_assert_max_num_queries
):
    workspace = world["workspace"]
    with audited(actor=world["owner"], comment="Invited a hundred and thirty people"):
        for n in range(130):
            workspace.memberships.create(user=make_user(f"guest-{n}"), role="member")
    applied = AuditEntry.objects.latest("revision_id")
    assert applied.workspace == workspace
    reader = api_for(workspace.memberships.first().user)
    url = f"/api/workspaces/acme/history/{applied.revision_id}/objects/"
    objects, next_url = [], url
    while next_url:
        with django_assert_max_num_queries(6):
            body = reader.get(next_url).json()
        objects += body["results"]
        next_url = body["next"]
    assert len(objects) == applied.object_count == 130
    assert len({o["id"] for o in objects}) == 130
    assert reader.get("/api/workspaces/acme/history/999999/objects/").status_code == 404
    stranger = api_for(make_user("sid"))
    assert stranger.get(url).status_code == 404


def test_the_api_lists_entries_exactly_as_its_serializers_declare_them(
    world, django_assert_max_num_queries
):
    """Both lists build their pages from plain values without running the serializer
    (pixie.core.audit.api.EntriesAsData); the serializer, run on the same data, must say
    the same, so the documented schema is what clients get."""
    auditor = world["auditor"]
    globex = Workspace.objects.get(slug="globex")
    with audited(actor=None, comment="Renamed by the system"):
        globex.name = "Globex"
        globex.save()
    with django_assert_max_num_queries(6):  # session, person, groups, entries, objects
        answer = api_for(auditor).get("/api/audit/")
    listed = answer.json()["results"]
    entries = entries_data(list(entry_rows(audit_entries(AuditQuery()))[:50]), LISTED_OBJECTS)
    assert listed == json.loads(json.dumps(AuditEntrySerializer(entries, many=True).data))
    assert {entry["where"] for entry in listed} >= {"Acme", "Globex", "the catalog"}
    assert any(entry["by"] is None for entry in listed)  # a change by no one: null, not ""

    member_view = api_for(world["owner"]).get("/api/workspaces/acme/history/").json()["results"]
    acme = audit_entries(AuditQuery(workspace="acme"))
    entries = entries_data(list(entry_rows(acme)[:50]), LISTED_OBJECTS)
    assert member_view == json.loads(json.dumps(HistoryEntrySerializer(entries, many=True).data))
    assert set(member_view[0]) == {
        "id", "at", "by", "comment", "channel", "plan", "object_count", "objects",
    }  # fmt: skip
    assert member_view[0]["at"].endswith("Z")  # UTC, as DRF writes it


def test_the_page_shows_people_s_words_as_text_and_links_what_the_reader_may_open(world):
    owner, workspace = world["owner"], world["workspace"]
    with audited(actor=owner, comment="Renamed acme"):
        workspace.name = 'Acme <b>&</b> "Co"'
        workspace.save()
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    words = "<script>alert(1)</script> & @invoice-chase"
    form = {"name": "Invoice chase", "body": "Chase.", "comment": words}
    assert admin_for(owner).post(edit, form).status_code == 302

    page = admin_for(world["auditor"]).get(LOG, {"workspace": "acme"}).content.decode()
    assert "<script>alert(1)</script>" not in page and "<b>&</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; @invoice-chase" in page
    assert "Acme &lt;b&gt;&amp;&lt;/b&gt; &quot;Co&quot;" in page
    row = page.split('<tr id="entry-')[1].split("</tr>")[0]  # the newest: the edit
    opens = reverse("admin:catalog_workspaceskill_change", args=[skill.pk])
    assert f'href="{opens}">@invoice-chase</a>' in row
    assert f'href="?person={owner.username}"' in row and 'href="?workspace=acme"' in row

    # An operator who is not acme's member reads the skill's history, not its page.
    operator = make_user("opal")
    operator.groups.add(Group.objects.get(name="operators"))
    theirs = admin_for(operator).get(LOG, {"workspace": "acme"}).content.decode()
    row = theirs.split('<tr id="entry-')[1].split("</tr>")[0]
    compare = reverse("admin:catalog_workspaceskill_compare", args=[skill.pk])
    assert f'href="{compare}">@invoice-chase</a>' in row and opens not in row


def test_a_search_reads_comments_and_people_by_index_on_postgresql(world):
    """On PostgreSQL the search's two sides are each an index's (the comments' trigram
    index, migration 0008, and the revisions' user_id), so a rare word does not walk the
    whole log newest first."""
    if connection.vendor != "postgresql":
        service_missing("the comments' trigram index is PostgreSQL's (pg_trgm)")
    owner = world["owner"]
    rows = entry_rows(audit_entries(AuditQuery(search=owner.username.upper())))[:51]
    found = {row["revision__user__username"] for row in rows}
    assert found == {owner.username}  # the person, whatever the case of the name
    renamed = list(entry_rows(audit_entries(AuditQuery(search="renamed GLOBEX"))))
    assert [row["revision__comment"] for row in renamed] == ["Renamed globex"]
    sql, params = rows.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a test's few rows: force the choice
        cursor.execute("SET LOCAL enable_indexscan = off")  # not the newest-first walk
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "pixie_revision_comment_search" in plan, plan
    assert "reversion_revision_user_id" in plan, plan


def _plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


def test_a_page_deep_in_the_log_reads_a_page_of_revisions_not_the_log_above_it(world):
    """Pages and export chunks go by keyset (pixie.core.audit.log.keyset): a page half-way down
    20,000 changes reads about a page of revisions, not the 10,000 above it."""
    if connection.vendor != "postgresql":
        service_missing("the plan read here is PostgreSQL's (EXPLAIN ANALYZE)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT MAX(id) FROM reversion_revision")
        (start,) = cursor.fetchone()
        span = [start + 1, start + 20_000]
        cursor.execute(
            "INSERT INTO reversion_revision (id, date_created, comment) "
            "SELECT n, now(), 'Bulk change ' || n FROM generate_series(%s, %s) n",
            span,
        )
        cursor.execute(
            "INSERT INTO pixie_auditentry (revision_id, scope, channel, object_count, chain, "
            "sequence, digest, form) SELECT n, 'catalog', 'command', 0, 'bulk', n, '', 2 "
            "FROM generate_series(%s, %s) n",
            span,
        )
        cursor.execute("ANALYZE reversion_revision")
        cursor.execute("ANALYZE pixie_auditentry")
    middle = start + 10_000
    page = keyset(entry_rows(audit_entries(AuditQuery())), middle, newer=False)[:51]
    assert [row["revision_id"] for row in page] == list(range(middle - 1, middle - 52, -1))
    sql, params = page.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        (plan,) = cursor.fetchone()[0]
    revisions_read = sum(
        node["Actual Rows"] * node["Actual Loops"]
        for node in _plan_nodes(plan["Plan"])
        if node.get("Relation Name") == "reversion_revision"
    )
    assert revisions_read <= 100, revisions_read
