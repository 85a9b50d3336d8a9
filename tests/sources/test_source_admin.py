"""Sources in the admin, as an operator works them: add one (every field checked, each
problem named at its field, nothing saved), check it, read its draft, discard or publish
it, pause it, accept a rewritten history, delete it; every change in the history. Other
roles: auditors read, members are not offered the pages."""

import pytest
from django.test import Client, TestCase
from django.urls import reverse
from reversion.models import Version

from catalog.models import BundleVersion, SkillVersion
from catalog.roles import auditors_group_ensure, operators_group_ensure
from pixie.sources.models import Source
from tests import clients
from tests.factories import make_user

pytestmark = pytest.mark.django_db

ADD = reverse("admin:sources_source_add")
METADATA = 'slug = "acme-skills"\nname = "Acme skills"\npublisher = "acme"\n'


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def opal():
    """An operator who is not a superuser: what the group gives is what she may do."""
    user = make_user("opal", is_staff=True)
    user.groups.add(operators_group_ensure())
    return user


class Committing(Client):
    """The admin as a browser meets it: what a request queues once its transaction
    commits (a check: run at once on the defaults, with no worker) runs before the
    answer. The test's own transaction would otherwise hold it back."""

    def post(self, *args, **kwargs):
        with TestCase.captureOnCommitCallbacks(execute=True):
            return super().post(*args, **kwargs)


def admin_for(user) -> Committing:
    return clients.admin_for(user, client_class=Committing)


def form(upstream, **changes) -> dict:
    data = {
        "kind": "git", "url": upstream.url, "ref": "main", "folder": "skills", "skills": "",
        "metadata": METADATA, "credential_variable": "", "interval": "01:00:00", "bundle": "",
    }  # fmt: skip
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def two_skills(upstream):
    upstream.skill("invoice-chase", "Chase the invoice politely.")
    upstream.skill("payment-reminder", "Remind them of the payment.")
    upstream.commit("Add the skills")
    upstream.push()


def added(client, upstream, **changes) -> Source:
    response = client.post(ADD, form(upstream, **changes))
    assert response.status_code == 302, response.context["adminform"].form.errors
    return Source.objects.get()


def test_an_operator_adds_a_source_and_its_first_check_makes_a_draft(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)

    source = added(client, upstream)

    assert source.last_result == "draft", source.last_message
    assert source.metadata == {"slug": "acme-skills", "name": "Acme skills", "publisher": "acme"}
    page = client.get(reverse("admin:sources_source_change", args=[source.pk]))
    text = page.content.decode()
    assert "A draft was made" in text
    draft_url = reverse("admin:catalog_bundleversion_change", args=[source.waiting_draft_id])
    assert f'href="{draft_url}"' in text and "Review acme-skills 1.0.0" in text
    assert 'id="source-check-now"' in text and 'id="source-accept"' not in text
    bundle_page = client.get(reverse("admin:catalog_bundle_change", args=[source.bundle_id]))
    source_url = reverse("admin:sources_source_change", args=[source.pk])
    assert f'href="{source_url}"' in bundle_page.content.decode()
    history = Version.objects.get_for_object(source)
    assert history.count() == 2  # added, then checked
    assert history.last().revision.comment == f"Added the source {upstream.url}"


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"url": "ftp://example.com/skills.git"}, "url", "must be an https:// URL"),
        ({"url": "https://tok:secret@example.com/s.git"}, "url", "must not hold a user"),
        ({"ref": "main..evil"}, "ref", "not a branch or tag name"),
        ({"folder": "../etc"}, "folder", "without empty, '.' or '..' parts"),
        ({"skills": "ok\nok"}, "skills", "'ok' is listed twice"),
        ({"credential_variable": "ghp_abc123"}, "credential_variable", "never the token"),
        ({"metadata": 'slug = "x"\ncolour = "red"'}, "metadata", "'colour' is not one of"),
        ({"metadata": 'slug = "Not A Slug"'}, "metadata", "'slug'"),
        ({"metadata": "slug = "}, "metadata", "not valid TOML"),
        ({"interval": "00:00:10"}, "interval", "between 1 minute and 30 days"),
    ],
)
def test_bad_fields_are_named_at_their_field_and_nothing_is_saved(
    upstream, opal, changes, field, words
):
    response = admin_for(opal).post(ADD, form(upstream, **changes))

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert words in " ".join(errors.get(field, [])), errors
    assert not Source.objects.exists()


def test_a_loopback_repository_is_refused_when_the_setting_is_off(upstream, opal, settings):
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False

    response = admin_for(opal).post(ADD, form(upstream))

    errors = response.context["adminform"].form.errors
    assert "plain http:// is turned off" in " ".join(errors["url"]).lower()
    assert not Source.objects.exists()


def test_a_draft_is_discarded_with_the_skill_versions_only_it_held(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)
    draft = source.waiting_draft
    own = list(SkillVersion.objects.filter(bundle_entries__bundle_version=draft))
    page = client.get(reverse("admin:catalog_bundleversion_change", args=[draft.pk]))
    assert 'id="discard-confirm"' in page.content.decode()

    response = client.post(reverse("admin:catalog_bundleversion_discard", args=[draft.pk]))

    assert response.status_code == 302
    assert not BundleVersion.objects.filter(pk=draft.pk).exists()
    assert not SkillVersion.objects.filter(pk__in=[v.pk for v in own]).exists()
    source.refresh_from_db()
    assert source.waiting_draft_id is None
    # Recorded before it went: the history keeps the draft.
    kept = Version.objects.get_deleted(BundleVersion)
    assert [v.object_id for v in kept] == [str(draft.pk)]
    # Upstream has not moved: checking again makes nothing.
    client.post(reverse("admin:sources_source_check", args=[source.pk]))
    source.refresh_from_db()
    assert (source.last_result, source.waiting_draft_id) == ("unchanged", None)


def test_a_published_version_is_never_discarded(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    draft = added(client, upstream).waiting_draft
    client.post(
        reverse("admin:catalog_bundleversion_changelist"),
        {"action": "publish", "_selected_action": [draft.pk], "post": "yes"},
    )
    draft.refresh_from_db()
    assert draft.status == "published"
    page = client.get(reverse("admin:catalog_bundleversion_change", args=[draft.pk]))
    assert 'id="discard-confirm"' not in page.content.decode()

    response = client.post(reverse("admin:catalog_bundleversion_discard", args=[draft.pk]))

    assert response.status_code == 403
    assert BundleVersion.objects.filter(pk=draft.pk, status="published").exists()


def test_a_force_push_is_reported_and_accepting_it_compares_the_content(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)
    client.post(reverse("admin:catalog_bundleversion_discard", args=[source.waiting_draft_id]))
    upstream.skill("invoice-chase", "Chase it in a new way.")
    upstream.git("commit", "--quiet", "--all", "--amend", "-m", "Rewritten")
    upstream.push(force=True)
    client.post(reverse("admin:sources_source_check", args=[source.pk]))
    source.refresh_from_db()
    assert source.last_result == "rewritten"
    page = client.get(reverse("admin:sources_source_change", args=[source.pk])).content.decode()
    assert 'id="source-accept"' in page and "rewritten" in page

    client.post(reverse("admin:sources_source_accept", args=[source.pk]))

    source.refresh_from_db()
    assert source.last_result == "draft", source.last_message
    assert source.waiting_draft.provenance.commit == upstream.head()


def test_accepting_is_refused_when_nothing_was_rewritten(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)

    response = client.post(reverse("admin:sources_source_accept", args=[source.pk]), follow=True)

    assert "found no rewritten history to accept" in response.content.decode()
    source.refresh_from_db()
    assert source.last_commit == upstream.head()


def test_pausing_stops_checks_and_resuming_makes_it_due(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)
    pause = reverse("admin:sources_source_pause", args=[source.pk])

    client.post(pause, {"paused": "1"})
    source.refresh_from_db()
    assert source.paused
    page = client.get(reverse("admin:sources_source_change", args=[source.pk])).content.decode()
    assert 'id="source-check-now"' not in page and "none while paused" in page
    checked = client.post(reverse("admin:sources_source_check", args=[source.pk]), follow=True)
    assert "is paused: resume it to check it" in checked.content.decode()

    client.post(pause, {"paused": "0"})
    source.refresh_from_db()
    assert not source.paused and source.next_check_at is not None


def test_changing_the_folder_reads_the_repository_afresh(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)
    assert source.last_commit

    response = client.post(
        reverse("admin:sources_source_change", args=[source.pk]),
        form(upstream, skills="invoice-chase", bundle=source.bundle_id),
    )

    assert response.status_code == 302
    source.refresh_from_db()
    assert (source.skills, source.last_commit) == (["invoice-chase"], "")
    comment = Version.objects.get_for_object(source).first().revision.comment
    assert comment.endswith(": skills"), comment
    # Upstream has not moved, but what the source takes has: the check reads it again.
    client.post(reverse("admin:sources_source_check", args=[source.pk]))
    source.refresh_from_db()
    assert source.last_result == "draft", source.last_message
    assert [e.skill_version.package.slug for e in source.waiting_draft.skills.all()] == [
        "invoice-chase"
    ]


def test_an_index_source_needs_no_ref_and_a_check_says_what_it_found(upstream, opal):
    two_skills(upstream)
    index_url = upstream.url.removesuffix(".git") + "/.well-known/agent-skills/index.json"

    source = added(admin_for(opal), upstream, kind="index", url=index_url, ref="")

    assert (source.kind, source.ref, str(source)) == ("index", "", f"{index_url} (index)")
    assert source.last_result == "failed"
    assert "index" in source.last_message.lower()


def test_deleting_a_source_keeps_its_versions_provenance(upstream, opal, settings):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)
    draft = source.waiting_draft
    mirror = settings.DATA_DIR / "sources" / f"{source.pk}.git"
    assert mirror.is_dir()

    response = client.post(
        reverse("admin:sources_source_delete", args=[source.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert not Source.objects.exists()
    assert not mirror.exists()
    draft.refresh_from_db()
    assert draft.provenance.repository == upstream.url
    assert Version.objects.get_deleted(Source).count() == 1


def test_auditors_read_sources_and_members_are_not_offered_them(upstream, opal):
    two_skills(upstream)
    source = added(admin_for(opal), upstream)
    auditor = make_user("aud", is_staff=True)
    auditor.groups.add(auditors_group_ensure())
    member = make_user("mia", is_staff=True)
    change = reverse("admin:sources_source_change", args=[source.pk])

    read = admin_for(auditor).get(change)
    assert read.status_code == 200
    assert 'id="source-check-now"' not in read.content.decode()
    assert admin_for(auditor).post(reverse("admin:sources_source_check", args=[source.pk]))\
        .status_code == 403  # fmt: skip
    assert admin_for(auditor).post(change, form(upstream)).status_code == 403

    member_client = admin_for(member)
    assert b"Sources" not in member_client.get(reverse("admin:index")).content
    assert member_client.get(change).status_code == 403
    assert member_client.post(reverse("admin:sources_source_check", args=[source.pk]))\
        .status_code == 403  # fmt: skip


def test_the_sources_list_stays_within_its_queries(upstream, opal, django_assert_max_num_queries):
    two_skills(upstream)
    client = admin_for(opal)
    added(client, upstream)
    for n in range(30):
        Source.objects.create(url=f"{upstream.url}?{n}", ref="main")

    with django_assert_max_num_queries(12):
        response = client.get(reverse("admin:sources_source_changelist"))

    assert response.status_code == 200
    assert "Review acme-skills 1.0.0" in response.content.decode()


def test_discarding_keeps_the_skill_versions_a_published_version_shares(upstream, opal):
    two_skills(upstream)
    client = admin_for(opal)
    source = added(client, upstream)
    client.post(
        reverse("admin:catalog_bundleversion_changelist"),
        {"action": "publish", "_selected_action": [source.waiting_draft_id], "post": "yes"},
    )
    upstream.skill("invoice-chase", "Chase the invoice, then call.")
    upstream.commit("A call after the chase")
    upstream.push()
    client.post(reverse("admin:sources_source_check", args=[source.pk]))
    source.refresh_from_db()
    draft = source.waiting_draft
    assert draft.version == "1.0.1", source.last_message
    shared, own = [], []
    for entry in draft.skills.select_related("skill_version"):
        holders = entry.skill_version.bundle_entries.count()
        (shared if holders > 1 else own).append(entry.skill_version_id)
    assert len(shared) == 1 and len(own) == 1

    client.post(reverse("admin:catalog_bundleversion_discard", args=[draft.pk]))

    assert SkillVersion.objects.filter(pk__in=shared).count() == 1
    assert not SkillVersion.objects.filter(pk__in=own).exists()
    assert BundleVersion.objects.get(version="1.0.0").skills.count() == 2
