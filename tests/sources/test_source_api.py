"""Sources over the API, as an operator works them, against a real git repository on
loopback: add one (its first check makes a draft), change, pause, resume and delete it,
accept a rewritten history; every refused field named, nothing saved; every change in the
history. Other roles: auditors read, everyone else is refused, a token limited to a
workspace too."""

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from reversion.models import Version

from catalog.roles import auditors_group_ensure, operators_group_ensure
from catalog.services.drafts import bundle_version_draft_discard
from pixie.core.models import AuditEntry
from pixie.sources.models import Source
from tests.clients import api_for, token_client
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

LIST = "/api/sources/"
METADATA = {"slug": "acme-skills", "name": "Acme skills", "publisher": "acme"}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def opal():
    """An operator who is not a superuser: what the group gives is what she may do."""
    user = make_user("opal")
    user.groups.add(operators_group_ensure())
    return user


@pytest.fixture
def api(opal):
    """The operator's own token, as a script would hold it."""
    return token_client(opal)


def committed(call, *args, **kwargs):
    """A request whose queued work (a check: run at once with no worker) runs before the
    answer is read, as outside the test's own transaction."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return call(*args, format="json", **kwargs)


def body(upstream, **changes) -> dict:
    data = {"url": upstream.url, "ref": "main", "folder": "skills", "metadata": METADATA}
    data.update(changes)
    return data


def two_skills(upstream):
    upstream.skill("invoice-chase", "Chase the invoice politely.")
    upstream.skill("payment-reminder", "Remind them of the payment.")
    upstream.commit("Add the skills")
    upstream.push()


def added(api, upstream, **changes) -> Source:
    response = committed(api.post, LIST, body(upstream, **changes))
    assert response.status_code == 201, response.json()
    return Source.objects.get(pk=response.json()["id"])


def detail(source) -> str:
    return f"{LIST}{source.pk}/"


def test_an_operator_adds_a_source_and_its_first_check_makes_a_draft(upstream, api):
    two_skills(upstream)

    response = committed(api.post, LIST, body(upstream))

    assert response.status_code == 201, response.json()
    made = response.json()
    assert (made["url"], made["ref"], made["folder"]) == (upstream.url, "main", "skills")
    assert made["metadata"] == METADATA and made["interval"] == 3600
    shown = api.get(f"{LIST}{made['id']}/").json()
    assert shown["last_result"] == "draft", shown["last_message"]
    assert shown["bundle"] == "acme-skills" and shown["last_commit"] == upstream.head()
    source = Source.objects.get()
    draft = shown["waiting_draft"]
    assert draft == {
        "id": source.waiting_draft_id,
        "bundle": "acme-skills",
        "version": "1.0.0",
        "url": "/api/bundles/acme-skills/versions/1.0.0/",
        "admin_url": reverse("admin:catalog_bundleversion_change", args=[draft["id"]]),
    }
    assert api.get(draft["url"]).json()["status"] == "draft"
    history = Version.objects.get_for_object(source)
    assert history.count() == 2  # added, then checked
    added_entry = history.last().revision
    assert added_entry.comment == f"Added the source {upstream.url}"
    assert AuditEntry.objects.get(revision=added_entry).channel == "api"


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"url": "ftp://example.com/skills.git"}, "url", "must be an https:// URL"),
        ({"url": "https://tok:secret@example.com/s.git"}, "url", "must not hold a user"),
        ({"ref": "main..evil"}, "ref", "not a branch or tag name"),
        ({"folder": "../etc"}, "folder", "without empty, '.' or '..' parts"),
        ({"skills": ["ok", "ok"]}, "skills", "'ok' is listed twice"),
        ({"skills": [f"s{n}" for n in range(501)]}, "skills", "at most 500 skill folders"),
        ({"credential_variable": "ghp_abc123"}, "credential_variable", "never the token"),
        ({"metadata": {"slug": "x", "colour": "red"}}, "metadata", "'colour' is not one of"),
        ({"metadata": {"slug": "Not A Slug"}}, "metadata", "'slug'"),
        ({"metadata": ["slug", "x"]}, "metadata", "must be a table"),
        ({"metadata": "slug = 'x'"}, "metadata", "must be a table"),
        ({"interval": 10}, "interval", "between 1 minute and 30 days"),
        ({"interval": 0}, "interval", "between 1 minute and 30 days"),
        ({"interval": 10**30}, "interval", "between 1 minute and 30 days"),
        ({"kind": "svn"}, "kind", "is not a kind of source"),
        ({"bundle": "no-such-bundle"}, "bundle", "There is no bundle no-such-bundle."),
        ({"colour": "red"}, "colour", "Unknown field."),
    ],
)
def test_bad_fields_are_refused_by_field_and_nothing_is_saved(upstream, api, changes, field, words):
    response = committed(api.post, LIST, body(upstream, **changes))

    assert response.status_code == 400
    refusal = response.json()
    assert refusal["code"] == "invalid"
    assert words in " ".join(refusal["fields"][field]), refusal
    assert any(problem.startswith(f"{field}: ") for problem in refusal["problems"]), refusal
    assert not Source.objects.exists()
    assert not Version.objects.get_for_model(Source).exists()


def test_a_url_is_required_and_a_loopback_one_refused_when_the_setting_is_off(
    upstream, api, settings
):
    assert api.post(LIST, {}, format="json").json()["fields"] == {
        "url": ["This field is required."]
    }
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False

    response = api.post(LIST, body(upstream), format="json")

    assert response.status_code == 400
    assert "plain http:// is turned off" in " ".join(response.json()["fields"]["url"]).lower()
    assert not Source.objects.exists()


def test_a_change_is_recorded_and_reads_the_repository_afresh(upstream, api):
    two_skills(upstream)
    source = added(api, upstream)
    assert source.last_commit

    response = api.patch(
        detail(source), {"skills": ["invoice-chase"], "interval": 7200}, format="json"
    )

    assert response.status_code == 200, response.json()
    shown = response.json()
    assert (shown["skills"], shown["interval"], shown["last_commit"]) == (
        ["invoice-chase"], 7200, ""
    )  # fmt: skip
    source.refresh_from_db()
    assert source.skills == ["invoice-chase"] and source.interval.total_seconds() == 7200
    changed = Version.objects.get_for_object(source).first().revision
    assert changed.comment == f"Changed the source #{source.pk}: skills, interval"
    assert AuditEntry.objects.get(revision=changed).channel == "api"


def test_a_bad_change_is_refused_by_field_and_changes_nothing(upstream, api):
    two_skills(upstream)
    source = added(api, upstream)
    versions = Version.objects.get_for_object(source).count()

    response = api.patch(
        detail(source), {"ref": "-evil", "credential_variable": "ghp_abc123"}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"ref", "credential_variable"}
    source.refresh_from_db()
    assert (source.ref, source.credential_variable) == ("main", "")
    assert Version.objects.get_for_object(source).count() == versions


def test_pausing_stops_checks_and_resuming_makes_it_due(upstream, api):
    two_skills(upstream)
    source = added(api, upstream)

    paused = committed(api.post, f"{detail(source)}pause/")
    assert paused.status_code == 200 and paused.json()["paused"] is True
    checked = committed(api.post, f"{detail(source)}check/")
    assert checked.status_code == 409
    assert checked.json()["detail"] == f"Source #{source.pk} is paused: resume it to check it"

    resumed = committed(api.post, f"{detail(source)}resume/")

    assert resumed.status_code == 200 and resumed.json()["paused"] is False
    assert resumed.json()["next_check_at"] is not None
    comments = [v.revision.comment for v in Version.objects.get_for_object(source)[:2]]
    assert comments == [f"Resumed the source #{source.pk}", f"Paused the source #{source.pk}"]


def test_a_check_asked_for_finds_what_changed_upstream(upstream, api):
    two_skills(upstream)
    source = added(api, upstream)
    upstream.skill("invoice-chase", "Chase it in a new way.")
    upstream.commit("Change a skill")
    upstream.push()

    response = committed(api.post, f"{detail(source)}check/")

    assert response.status_code == 202
    shown = api.get(detail(source)).json()
    assert shown["last_commit"] == upstream.head(), shown["last_message"]


def test_deleting_a_source_keeps_its_drafts_provenance(upstream, api, settings):
    two_skills(upstream)
    source = added(api, upstream)
    draft = source.waiting_draft
    mirror = settings.DATA_DIR / "sources" / f"{source.pk}.git"
    assert mirror.is_dir()

    response = committed(api.delete, detail(source))

    assert response.status_code == 204
    assert not Source.objects.exists() and not mirror.exists()
    draft.refresh_from_db()
    assert draft.status == "draft" and draft.provenance.repository == upstream.url
    assert Version.objects.get_deleted(Source).count() == 1
    gone = api.get(detail(source))
    assert gone.status_code == 404 and gone.json()["code"] == "not_found"


def test_accepting_a_rewrite_is_refused_when_nothing_was_rewritten(upstream, api):
    two_skills(upstream)
    source = added(api, upstream)
    versions = Version.objects.get_for_object(source).count()

    response = committed(api.post, f"{detail(source)}accept-rewrite/")

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "found no rewritten history to accept" in response.json()["detail"]
    source.refresh_from_db()
    assert source.last_commit == upstream.head()
    assert Version.objects.get_for_object(source).count() == versions


def test_a_force_push_is_reported_and_accepting_it_makes_a_draft(upstream, api, opal):
    two_skills(upstream)
    source = added(api, upstream)
    bundle_version_draft_discard(bundle_version=source.waiting_draft, actor=opal)
    upstream.skill("invoice-chase", "Chase it in a new way.")
    upstream.git("commit", "--quiet", "--all", "--amend", "-m", "Rewritten")
    upstream.push(force=True)
    assert committed(api.post, f"{detail(source)}check/").status_code == 202
    assert api.get(detail(source)).json()["last_result"] == "rewritten"

    response = committed(api.post, f"{detail(source)}accept-rewrite/")

    assert response.status_code == 202
    source.refresh_from_db()
    assert source.last_result == "draft", source.last_message
    assert source.waiting_draft.provenance.commit == upstream.head()


def test_unknown_and_impossible_ids_are_not_found(api):
    for pk in (1, 2**63, 10**30):
        response = api.get(f"{LIST}{pk}/")
        assert response.status_code == 404 and response.json()["code"] == "not_found"


# Who may: operators (above), auditors read; members, owners, staff logins and anyone
# through a token limited to a workspace are refused, reads too; nobody signed in: 401.

WRITES = [
    ("post", "", None),
    ("patch", "{id}/", {"interval": 7200}),
    ("delete", "{id}/", None),
    ("post", "{id}/check/", None),
    ("post", "{id}/pause/", None),
    ("post", "{id}/resume/", None),
    ("post", "{id}/accept-rewrite/", None),
]
READS = ["", "{id}/"]


@pytest.fixture
def following(upstream):
    """A source as a world holds it (never checked here)."""
    return Source.objects.create(url=upstream.url, ref="main", metadata=METADATA)


def _calls(client, source, upstream, calls):
    for method, path, data in calls:
        if method == "post" and not path:
            data = body(upstream)
        url = LIST + path.format(id=source.pk)
        yield method.upper(), url, committed(getattr(client, method), url, data)


def _unchanged(source):
    fresh = Source.objects.get(pk=source.pk)
    return (
        Source.objects.count() == 1
        and (fresh.interval, fresh.paused, fresh.last_commit)
        == (source.interval, source.paused, source.last_commit)
        and not Version.objects.get_for_model(Source).exists()
    )


def test_auditors_read_sources_and_change_nothing(upstream, following):
    auditor = make_user("aud")
    auditor.groups.add(auditors_group_ensure())
    client = api_for(auditor)

    listed = client.get(LIST).json()
    assert [row["id"] for row in listed["results"]] == [following.pk]
    assert client.get(f"{LIST}{following.pk}/").json()["url"] == upstream.url
    for method, url, response in _calls(client, following, upstream, WRITES):
        assert response.status_code == 403, (method, url)
        assert response.json()["code"] == "operator_required", (method, url)
    assert _unchanged(following)


@pytest.mark.parametrize("who", ["member", "owner", "staff"])
def test_everyone_else_is_refused_reads_too(upstream, following, who):
    person = make_user(who, is_staff=who == "staff")
    if who != "staff":
        make_workspace(owner=person) if who == "owner" else make_workspace(members=[person])
    client = api_for(person)

    calls = [("get", path, None) for path in READS] + WRITES
    for method, url, response in _calls(client, following, upstream, calls):
        assert response.status_code == 403, (method, url)
        refusal = response.json()
        assert refusal["code"] == "operator_required", (method, url)
        assert "operator" in refusal["detail"]
    assert _unchanged(following)


def test_nobody_signed_in_is_asked_to_sign_in(upstream, following):
    from rest_framework.test import APIClient

    calls = [("get", path, None) for path in READS] + WRITES
    for method, url, response in _calls(APIClient(), following, upstream, calls):
        assert response.status_code == 401, (method, url)
    assert _unchanged(following)


def test_an_operators_token_limited_to_a_workspace_reaches_no_source(upstream, opal, following):
    make_workspace("acme", members=[opal])
    client = token_client(opal, workspace="acme")

    calls = [("get", path, None) for path in READS] + WRITES
    for method, url, response in _calls(client, following, upstream, calls):
        assert response.status_code == 403, (method, url)
        assert response.json()["code"] == "token_workspace_limited", (method, url)
    assert _unchanged(following)


def test_an_operators_read_only_token_reads_and_changes_nothing(upstream, opal, following):
    client = token_client(opal, read_only=True)

    assert client.get(LIST).status_code == 200
    for method, url, response in _calls(client, following, upstream, WRITES):
        assert response.status_code == 403, (method, url)
        assert response.json()["code"] == "token_read_only", (method, url)
    assert _unchanged(following)


def test_the_list_costs_the_same_queries_for_1_source_as_for_30(
    upstream, opal, django_assert_max_num_queries
):
    two_skills(upstream)
    client = api_for(opal)
    first = added(client, upstream)

    def fresh():  # a user read afresh, as each request's is: nothing known of their groups
        return api_for(type(opal).objects.get(pk=opal.pk))

    client = fresh()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(LIST).status_code == 200
    few = len(queries)
    for n in range(29):
        Source.objects.create(
            url=f"{upstream.url}?{n}", ref="main", bundle=first.bundle,
            waiting_draft=first.waiting_draft,
        )  # fmt: skip
    client = fresh()
    with django_assert_max_num_queries(few):
        response = client.get(LIST)

    page = response.json()
    assert page["count"] == 30 and len(page["results"]) == 30
    assert all(row["waiting_draft"]["version"] == "1.0.0" for row in page["results"])
    assert few <= 3, few  # the person's groups, the count, the page
