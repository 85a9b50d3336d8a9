"""A workspace skill's history, as its members read it: every revision listed and opened
whole, any two compared field by field and file by file, in the API and the admin.

The story: Acme installs Accounts Receivable (revision 1 of @invoice-chase comes from
the catalog), then the owner edits the body (revision 2, a local edit with a comment).
"Who changed @invoice-chase, when, and what did it look like before?"
"""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from reversion.models import Version

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.core.models import Membership
from pixie.core.people.permissions import AUDITORS_GROUP, OPERATORS_GROUP
from tests.catalog.skill_folders import write
from tests.clients import admin_for, api_for, token_client
from tests.factories import make_user, make_workspace
from tests.installer.flow import approve_and_apply, install
from tests.installer.test_plan_files import ledger_bundle, publish, upgrade

pytestmark = pytest.mark.django_db

NEW_LINE = "Never chase an invoice that is under a payment plan."


@pytest.fixture
def edited(acme, owner, demo_catalog, django_capture_on_commit_callbacks):
    """@invoice-chase at revision 2: the owner's edit of the catalog's text."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    skill = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    body = skill.head.body.replace("\n\n", f"\n\n{NEW_LINE}\n\n", 1)
    skill_edit(skill=skill, actor=owner, body=body, comment="Payment plans first")
    return WorkspaceSkill.objects.select_related("head").get(pk=skill.pk)


URL = "/api/workspaces/acme/skills/invoice-chase"


def test_a_member_lists_every_revision_with_who_when_and_where_it_came_from(edited, member):
    response = api_for(member).get(f"{URL}/revisions/")
    assert response.status_code == 200
    newest, first = response.json()["results"]
    assert (newest["number"], newest["origin"], newest["created_by"]) == (2, "local", "owen")
    assert newest["comment"] == "Payment plans first" and newest["created_at"]
    assert (first["number"], first["origin"]) == (1, "catalog")
    assert first["upstream"] == "invoice-chase 2.1.0"
    assert first["url"] == f"{URL}/revisions/1/"


def test_a_revision_opens_whole(edited, member):
    response = api_for(member).get(f"{URL}/revisions/1/")
    assert response.status_code == 200
    revision = response.json()
    assert NEW_LINE not in revision["body"] and revision["body"]
    assert revision["name"] and revision["files"] == []
    assert isinstance(revision["frontmatter"], dict) and isinstance(revision["approvals"], list)


def test_the_comparison_shows_what_the_edit_changed_and_nothing_else(edited, member):
    response = api_for(member).get(f"{URL}/compare/")  # the latest with the one before it
    assert response.status_code == 200
    comparison = response.json()
    assert (comparison["before"]["number"], comparison["after"]["number"]) == (1, 2)
    assert comparison["identical"] is False
    changed = {field["field"]: field for field in comparison["fields"] if field["changed"]}
    assert set(changed) == {"body"}
    assert f"+{NEW_LINE}" in changed["body"]["diff"]
    assert comparison["files"] == []


def test_a_revision_compared_with_itself_is_identical(edited, member):
    response = api_for(member).get(f"{URL}/compare/?from=2&to=2")
    assert response.json()["identical"] is True
    assert all(not field["diff"] for field in response.json()["fields"])


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("from=first", 400, "'from' must be a revision number (1 or more), not 'first'"),
        ("to=0", 400, "'to' must be a revision number (1 or more), not '0'"),
        ("to=-1", 400, "'to' must be a revision number"),
        ("from=9&to=2", 404, "@invoice-chase has no revision 9; its revisions are 1 to 2"),
        (f"from={2**40}", 400, "'from' must be a revision number"),
    ],
)
def test_a_wrong_comparison_names_what_is_wrong(edited, member, query, status, words):
    response = api_for(member).get(f"{URL}/compare/?{query}")
    assert response.status_code == status
    assert words in response.json()["detail"]


def test_a_revision_that_does_not_exist_is_named(edited, member):
    response = api_for(member).get(f"{URL}/revisions/7/")
    assert response.status_code == 404
    assert response.json()["problems"] == [
        "@invoice-chase has no revision 7; its revisions are 1 to 2"
    ]


def test_another_workspace_reads_nothing_of_the_history(edited):
    stranger = make_user("sam")
    make_workspace("globex", owner=stranger)
    for path in ("revisions/", "revisions/1/", "compare/"):
        assert api_for(stranger).get(f"{URL}/{path}").status_code == 404


def test_history_reads_a_fixed_number_of_queries_however_many_revisions(
    edited, owner, member, django_assert_max_num_queries
):
    api = api_for(member)
    for n in range(30):
        skill_edit(skill=edited, actor=owner, body=f"{edited.head.body}\nStep {n}.")
    for path in ("revisions/", "revisions/3/", "compare/?from=1&to=31"):
        with django_assert_max_num_queries(8):
            response = api.get(f"{URL}/{path}")
        assert response.status_code == 200, path


HISTORY_READS = [
    "/api/workspaces/acme/history/",
    f"{URL}/revisions/",
    f"{URL}/revisions/1/",
    f"{URL}/compare/",
]


@pytest.mark.parametrize("role", ["superuser", OPERATORS_GROUP, AUDITORS_GROUP])
def test_a_token_limited_to_the_workspace_reads_its_history_as_a_plain_member(
    edited, acme, member, role
):
    """Operators and auditors read every workspace's history, but not through a token
    limited to one: there they read it as a plain member would, and once their
    membership has ended (other than by its removal, which revokes the token), not at
    all."""
    reader = make_user("rex", is_superuser=role == "superuser")
    if role != "superuser":
        reader.groups.add(Group.objects.get_or_create(name=role)[0])
    Membership.objects.create(workspace=acme, user=reader)
    unlimited, limited = token_client(reader), token_client(reader, workspace="acme")
    members = token_client(member, workspace="acme")
    for path in HISTORY_READS:
        assert limited.get(path).status_code == 200, path
    Membership.objects.filter(workspace=acme, user=reader).delete()
    for path in HISTORY_READS:
        assert unlimited.get(path).status_code == 200, path
        assert limited.get(path).status_code == 404, path
        assert members.get(path).status_code == 200, path


# --- files: an upgrade that changed a script ----------------------------------------

NEW_SCRIPT = "#!/usr/bin/env python3\nprint('statement, with the aged-debt columns')\n"


@pytest.fixture
def upgraded(acme, owner, tmp_path, django_capture_on_commit_callbacks):
    install(acme, publish(ledger_bundle(tmp_path, "1.0.0")), owner,
            django_capture_on_commit_callbacks)  # fmt: skip
    folder = ledger_bundle(tmp_path, "1.1.0")
    write(folder / "skills/ledger-export/scripts/export.py", NEW_SCRIPT, executable=True)
    plan = upgrade(acme, owner, publish(folder))
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    return WorkspaceSkill.objects.get(workspace=acme, slug="ledger-export")


def test_a_comparison_diffs_the_files_an_upgrade_changed(upgraded, member):
    response = api_for(member).get("/api/workspaces/acme/skills/ledger-export/compare/")
    comparison = response.json()
    assert (comparison["before"]["origin"], comparison["after"]["origin"]) == ("catalog",) * 2
    (script,) = comparison["files"]
    assert (script["path"], script["change"], script["content"]) == (
        "scripts/export.py", "changed", "text"
    )  # fmt: skip
    assert "+print('statement, with the aged-debt columns')" in script["diff"]
    revision = api_for(member).get("/api/workspaces/acme/skills/ledger-export/revisions/2/")
    paths = [f["path"] for f in revision.json()["files"]]
    assert paths == ["assets/logo.png", "references/statement-fields.md", "scripts/export.py"]


# --- the admin: the skill's page, a revision whole, two compared ----------------------


def skill_page(skill) -> str:
    return reverse("admin:catalog_workspaceskill_change", args=[skill.pk])


def test_each_revision_on_the_skill_page_opens_whole(edited, member):
    client = admin_for(member)
    page = client.get(skill_page(edited)).content.decode()
    first = reverse("admin:catalog_workspaceskill_text", args=[edited.pk, 1])
    compare = reverse("admin:catalog_workspaceskill_compare", args=[edited.pk])
    assert f'href="{first}"' in page and f'href="{compare}"' in page
    text = client.get(first).content.decode()
    assert "From the catalog as published" in text and NEW_LINE not in text
    assert f"{compare}?from=1&amp;to=2" in text  # "Compare with the latest"


def test_the_comparison_page_marks_the_words_that_changed(edited, member):
    client = admin_for(member)
    compare = reverse("admin:catalog_workspaceskill_compare", args=[edited.pk])
    response = client.get(compare)
    assert response.status_code == 200
    page = response.content.decode()
    assert "{#" not in page and "{%" not in page  # no template text leaks into the page
    main = page.split('id="content-main"', 1)[1]
    assert "<ins>" in main and NEW_LINE in main
    assert "SKILL.md body" in main and "<h3>Name</h3>" not in main
    assert "Payment plans first" in main and "owen" in main
    assert f'href="{compare}?from=1&amp;to=2"' in main  # the permalink
    assert "<form" in main and 'method="get"' in main  # picking two others changes nothing


def test_the_comparison_page_shows_an_upgrades_file_diff(upgraded, member):
    compare = reverse("admin:catalog_workspaceskill_compare", args=[upgraded.pk])
    main = admin_for(member).get(compare).content.decode().split('id="content-main"', 1)[1]
    assert "scripts/export.py" in main and "aged-debt columns" in main
    assert 'class="added"' in main


def test_a_wrong_comparison_in_the_admin_says_what_is_wrong(edited, member):
    compare = reverse("admin:catalog_workspaceskill_compare", args=[edited.pk])
    response = admin_for(member).get(f"{compare}?from=9")
    assert response.status_code == 200
    assert "@invoice-chase has no revision 9; its revisions are 1 to 2" in (
        response.content.decode()
    )


def test_another_workspace_meets_not_found_in_the_admin(edited):
    stranger = make_user("sam")
    make_workspace("globex", owner=stranger)
    client = admin_for(stranger)
    for url in (
        reverse("admin:catalog_workspaceskill_text", args=[edited.pk, 1]),
        reverse("admin:catalog_workspaceskill_compare", args=[edited.pk]),
    ):
        assert client.get(url).status_code == 404


def test_the_admin_history_pages_read_a_fixed_number_of_queries(
    edited, owner, member, django_assert_max_num_queries
):
    client = admin_for(member)
    for n in range(20):
        skill_edit(skill=edited, actor=owner, body=f"{edited.head.body}\nStep {n}.")
    urls = [
        reverse("admin:catalog_workspaceskill_text", args=[edited.pk, 3]),
        reverse("admin:catalog_workspaceskill_compare", args=[edited.pk]) + "?from=1&to=21",
    ]
    for url in urls:
        client.get(url)
        with django_assert_max_num_queries(14):
            assert client.get(url).status_code == 200


def test_the_skills_own_history_lists_the_owners_edit(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    """The edit made on the skill's Edit page shows on the skill's History page as well as
    in its revisions: the two records agree."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    skill = WorkspaceSkill.objects.select_related("head").get(workspace=acme, slug="invoice-chase")
    client = admin_for(owner)
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    form = {"name": skill.head.name, "short_description": skill.head.short_description,
            "body": skill.head.body + "\nOne more step.", "comment": "One more step"}  # fmt: skip
    assert client.post(edit, form).status_code == 302
    history = client.get(reverse("admin:catalog_workspaceskill_history", args=[skill.pk]))
    assert "One more step" in history.content.decode()
    version = Version.objects.get_for_object(skill).first()  # the newest
    assert version.field_dict["head_id"] == skill.revisions.get(number=2).pk


def test_the_skill_page_reads_as_many_queries_for_twenty_revisions_as_for_two(
    edited, owner, member
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = admin_for(member)
    url = skill_page(edited)

    def queries() -> int:
        client.get(url)  # warm the session and content type caches
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    two = queries()
    for n in range(20):
        skill_edit(skill=edited, actor=owner, body=f"{edited.head.body}\nStep {n}.")
    assert queries() == two


# --- restore: an earlier revision made the latest again, as a new recorded edit ---------


def test_an_owner_restores_the_catalog_text_as_a_new_revision(edited, owner, member):
    response = api_for(owner).post(f"{URL}/revisions/1/restore/")
    assert response.status_code == 200
    assert response.json()["revision"] == 3 and NEW_LINE not in response.json()["body"]
    restored = edited.revisions.get(number=3)
    first = edited.revisions.get(number=1)
    assert (restored.origin, restored.created_by, restored.comment) == (
        "local", owner, "Restored @invoice-chase revision 1"
    )  # fmt: skip
    assert restored.body == first.body and restored.upstream == first.upstream
    assert edited.revisions.get(number=2).body.count(NEW_LINE) == 1  # nothing earlier changed
    compare = api_for(member).get(f"{URL}/compare/?from=1&to=3").json()
    assert compare["identical"] is True


def test_a_member_may_not_restore_and_nothing_changes(edited, member):
    response = api_for(member).post(f"{URL}/revisions/1/restore/")
    assert response.status_code == 403
    assert "Only an owner" in response.json()["detail"]
    assert edited.revisions.count() == 2


def test_restoring_the_latest_text_writes_nothing(edited, owner):
    response = api_for(owner).post(f"{URL}/revisions/2/restore/")
    assert response.status_code == 200 and response.json()["revision"] == 2
    assert edited.revisions.count() == 2


def test_restoring_a_revision_that_does_not_exist_names_it(edited, owner):
    response = api_for(owner).post(f"{URL}/revisions/5/restore/")
    assert response.status_code == 404
    assert "has no revision 5; its revisions are 1 to 2" in response.json()["detail"]


def test_a_restore_that_would_mention_a_skill_renamed_since_is_refused(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    from catalog.services.workspace_skills import skill_rename

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    skill_rename(
        skill=WorkspaceSkill.objects.get(workspace=acme, slug="ar-ground-rules"),
        new_slug="house-rules",
        actor=owner,
    )
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    assert chase.revisions.count() == 2  # the rename rewrote its mention
    response = api_for(owner).post(f"{URL}/revisions/1/restore/")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "revision 1 mentions @ar-ground-rules, which is no longer a skill or tool here "
        "(renamed or removed since); edit the text instead"
    ]
    assert chase.revisions.count() == 2


def test_a_restore_brings_back_the_files_of_that_revision(upgraded, owner, member):
    response = api_for(owner).post("/api/workspaces/acme/skills/ledger-export/revisions/1/restore/")
    assert response.status_code == 200
    comparison = (
        api_for(member).get("/api/workspaces/acme/skills/ledger-export/compare/?from=1&to=3").json()
    )
    assert comparison["identical"] is True and comparison["files"] == []


def test_the_owner_restores_from_the_revision_page(edited, owner, member):
    page = reverse("admin:catalog_workspaceskill_text", args=[edited.pk, 1])
    restore = reverse("admin:catalog_workspaceskill_restore", args=[edited.pk, 1])
    assert restore not in admin_for(member).get(page).content.decode()  # not offered
    assert admin_for(member).post(restore).status_code == 302
    assert edited.revisions.count() == 2  # and refused
    client = admin_for(owner)
    assert restore in client.get(page).content.decode()
    response = client.post(restore, follow=True)
    assert "revision 1 is restored as revision 3" in response.content.decode()
    assert edited.revisions.count() == 3
    history = client.get(reverse("admin:catalog_workspaceskill_history", args=[edited.pk]))
    assert "Restored @invoice-chase revision 1" in history.content.decode()


def test_the_skill_page_offers_a_member_only_what_a_member_may_do(edited, owner, member):
    """Edit, Share, Rename and the planner's menu are an owner's (skill_set_advertised
    refuses anyone else); a member reads the revisions and the comparison."""
    owners = [
        reverse("admin:catalog_workspaceskill_edit", args=[edited.pk]),
        reverse("admin:catalog_workspaceskill_share", args=[edited.pk]),
        reverse("admin:catalog_workspaceskill_rename", args=[edited.pk]),
        reverse("admin:catalog_workspaceskill_advertise", args=[edited.pk]),
    ]
    readers = [
        reverse("admin:catalog_workspaceskill_compare", args=[edited.pk]),
    ]
    as_member = admin_for(member).get(skill_page(edited)).content.decode()
    as_owner = admin_for(owner).get(skill_page(edited)).content.decode()
    for url in owners:
        assert f'"{url}"' not in as_member and f'"{url}"' in as_owner, url
    for url in readers:
        assert f'"{url}"' in as_member and f'"{url}"' in as_owner, url


def test_lists_of_revisions_do_not_read_their_texts(edited, member):
    """The API's list and the comparison page's picker name each revision without reading
    every body: a long history of long skills stays a small read."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    compare = reverse("admin:catalog_workspaceskill_compare", args=[edited.pk])
    for client, url in ((api_for(member), f"{URL}/revisions/"), (admin_for(member), compare)):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        # The list reads every revision; the two compared ("number" IN (…)) are read whole.
        ordered = 'ORDER BY "catalog_skillrevision"."number" DESC'
        listing = [q["sql"] for q in captured if ordered in q["sql"] and " IN (" not in q["sql"]]
        assert listing and all('"catalog_skillrevision"."body"' not in sql for sql in listing)


# --- large edits: the comparison's work is bounded ---------------------------------------


def numbered(count: int, word: str) -> str:
    """``count`` lines, every other one the same (as blank lines are): the shape that made
    the alignment's cost grow faster than the square of the lines."""
    lines = (f"{word} line {n}: check the ledger before {word} {n * 7}" if n % 2 else "Then:"
             for n in range(count))  # fmt: skip
    return "\n".join(lines)


def test_two_six_thousand_line_edits_compare_promptly_and_say_how(edited, member, owner):
    """The attacker's case: two edits of 6,000 lines, every line different (19 s before)."""
    skill_edit(skill=edited, actor=owner, body=numbered(6_000, "alpha"), comment="A")
    skill_edit(skill=edited, actor=owner, body=numbered(6_000, "omega"), comment="B")
    compare = reverse("admin:catalog_workspaceskill_compare", args=[edited.pk])
    response = admin_for(member).get(f"{compare}?from=3&to=4")
    assert response.status_code == 200
    page = response.content.decode()
    assert (
        "Too many lines changed to align them one by one (6,000 and 6,000 lines): shown as "
        "the lines removed, then the lines added."
    ) in page
    assert "alpha line 5999" in page and "omega line 1:" in page
    api = api_for(member).get(f"{URL}/compare/?from=3&to=4")
    assert api.status_code == 200


@pytest.mark.xdist_group("timing")
def test_a_side_by_side_diff_costs_time_in_proportion_to_its_lines():
    """Four times the lines, every one changed, take about four times as long (sixteen
    were the alignment quadratic): the ratio, which a fast machine cannot hide."""
    from catalog.diff_display import side_by_side
    from tests.ratio import ratio

    def diffing(count):
        old, new = numbered(count, "alpha"), numbered(count, "omega")
        return lambda: side_by_side(old, new)

    assert ratio(diffing(8_000), diffing(2_000), repeats=3) < 8
