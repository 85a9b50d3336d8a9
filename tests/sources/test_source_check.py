"""A source checked against a real repository served on loopback: an upstream change
becomes a draft with its provenance, nothing upstream makes nothing, and what cannot be
trusted (a force-push, a listed folder gone, a private address) is reported in words."""

from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from reversion.models import Version

from catalog.api.serializers import BundleVersionSerializer
from catalog.manifest import ManifestFile, ManifestSkill, Provenance, canonical, manifest_of
from catalog.models import BundleVersion
from catalog.services import bundle_version_publish
from catalog.services.signing import ContentNotAsSigned, bundle_version_verify
from pixie.core.models import Notification
from pixie.sources.models import Source
from pixie.sources.services import source_check
from pixie.sources.tasks import check_due_sources
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

METADATA = {"slug": "acme-skills", "name": "Acme skills", "publisher": "acme"}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def operator():
    user = make_user("olga", is_superuser=True, is_staff=True, email="olga@example.com")
    make_workspace("ops", owner=user)
    return user


def a_source(upstream, **fields) -> Source:
    return Source.objects.create(url=upstream.url, ref="main", metadata=METADATA, **fields)


def two_skills(upstream, message="Add the skills"):
    upstream.skill("invoice-chase", "Chase the invoice politely.")
    upstream.skill("payment-reminder", "Remind them of the payment.")
    sha = upstream.commit(message)
    upstream.push()
    return sha


def skills_of(version: BundleVersion) -> dict[str, int]:
    return {
        entry.skill_version.package.slug: entry.skill_version_id
        for entry in version.skills.select_related("skill_version__package")
    }


def test_the_first_check_makes_a_draft_with_its_provenance(upstream, operator):
    sha = two_skills(upstream, message="Add the skills\n\nTwo to start.")
    source = a_source(upstream)

    checked = source_check(source, actor=operator)

    assert checked.last_result == "draft", checked.last_message
    draft = checked.waiting_draft
    assert (draft.bundle.slug, draft.version, draft.status) == ("acme-skills", "1.0.0", "draft")
    assert checked.bundle_id == draft.bundle_id
    assert set(skills_of(draft)) == {"invoice-chase", "payment-reminder"}
    assert draft.provenance == Provenance(
        repository=upstream.url,
        ref="main",
        commit=sha,
        committed_at=datetime(2024, 5, 1, 10, 0, tzinfo=UTC),
        author="Ada Upstream",
        message="Add the skills\n\nTwo to start.",
    )
    assert checked.last_commit == sha
    assert checked.next_check_at == checked.last_checked_at + checked.interval
    assert "draft acme-skills 1.0.0 made" in checked.last_message
    told = Notification.objects.get(user=operator, kind="source_draft_waiting")
    assert "acme-skills 1.0.0" in told.title
    # In the history, with the operator's name.
    assert Version.objects.get_for_object(checked).first().revision.user == operator


def test_a_change_to_one_skill_makes_a_draft_with_only_that_skill_new(upstream, operator):
    two_skills(upstream)
    source = a_source(upstream)
    first = source_check(source, actor=operator).waiting_draft
    bundle_version_publish(bundle_version=first, actor=operator)
    upstream.skill("invoice-chase", "Chase the invoice, firmly this time.")
    upstream.commit("Firmer")
    upstream.push()

    checked = source_check(source, actor=operator)

    assert checked.last_result == "draft", checked.last_message
    draft = checked.waiting_draft
    assert draft.version == "1.0.1"
    before, after = skills_of(first), skills_of(draft)
    assert after["payment-reminder"] == before["payment-reminder"]  # reused
    assert after["invoice-chase"] != before["invoice-chase"]


def test_a_semantic_version_tag_names_the_draft(upstream, operator):
    two_skills(upstream)
    upstream.tag("v1.2.0")
    upstream.push()

    checked = source_check(a_source(upstream), actor=operator)

    assert checked.waiting_draft.version == "1.2.0"


def test_a_commit_outside_the_skill_folders_makes_nothing(upstream, operator):
    two_skills(upstream)
    source = a_source(upstream)
    bundle_version_publish(bundle_version=source_check(source).waiting_draft, actor=operator)
    upstream.write("README.md", "# Our skills\n")
    readme = upstream.commit("A readme")
    upstream.push()

    checked = source_check(source, actor=operator)

    assert checked.last_result == "unchanged", checked.last_message
    assert checked.last_commit == readme
    assert checked.waiting_draft is None
    assert BundleVersion.objects.count() == 1
    # And a check with nothing new upstream at all.
    assert source_check(source).last_result == "unchanged"
    assert BundleVersion.objects.count() == 1


def test_a_force_push_is_reported_and_makes_no_draft(upstream, operator):
    first = two_skills(upstream)
    source = a_source(upstream)
    bundle_version_publish(bundle_version=source_check(source).waiting_draft, actor=operator)
    upstream.skill("invoice-chase", "Another history.")
    upstream.reset(first)
    upstream.skill("invoice-chase", "A rewritten history.")
    upstream.git("commit", "--quiet", "--amend", "-a", "-m", "Rewritten")
    upstream.push(force=True)

    checked = source_check(source, actor=operator)

    assert checked.last_result == "rewritten"
    assert "force-pushed" in checked.last_message
    assert checked.last_commit == first  # still the last commit it trusted
    assert BundleVersion.objects.count() == 1
    assert Notification.objects.filter(user=operator, kind="source_failed").exists()


def test_a_newer_change_replaces_the_waiting_draft_and_the_history_keeps_it(upstream, operator):
    two_skills(upstream)
    source = a_source(upstream)
    old = source_check(source, actor=operator).waiting_draft
    upstream.skill("payment-reminder", "Remind them twice.")
    upstream.commit("Twice")
    upstream.push()

    checked = source_check(source, actor=operator)

    new = checked.waiting_draft
    assert new.pk != old.pk and new.version == "1.0.0"
    assert not BundleVersion.objects.filter(pk=old.pk).exists()
    assert "replacing the waiting draft 1.0.0 (kept in the history)" in checked.last_message
    kept = Version.objects.get_deleted(BundleVersion).filter(object_id=str(old.pk))
    assert kept.exists()


def test_a_listed_skill_folder_that_vanished_is_reported(upstream, operator):
    two_skills(upstream)
    source = a_source(upstream, skills=["invoice-chase", "payment-reminder"])
    bundle_version_publish(bundle_version=source_check(source).waiting_draft, actor=operator)
    upstream.remove("skills/payment-reminder")
    upstream.commit("Drop one")
    upstream.push()

    checked = source_check(source, actor=operator)

    assert checked.last_result == "folder_gone"
    assert "payment-reminder" in checked.last_message
    assert BundleVersion.objects.count() == 1


def test_a_loopback_source_is_refused_when_the_setting_is_off(upstream, settings):
    two_skills(upstream)
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False

    checked = source_check(a_source(upstream))

    assert checked.last_result == "failed"
    assert "PIXIE_SOURCES_ALLOW_PRIVATE" in checked.last_message or "http" in checked.last_message
    assert not BundleVersion.objects.exists()


def test_a_failure_leaves_nothing_half_made(upstream):
    upstream.skill("invoice-chase", "Use @no-such-skill to chase.")
    upstream.commit("A dangling mention")
    upstream.push()
    source = a_source(upstream)

    checked = source_check(source)

    assert checked.last_result == "failed"
    assert "no-such-skill" in checked.last_message
    assert not BundleVersion.objects.exists()
    assert checked.last_commit == ""


def test_provenance_is_signed_verified_shown_and_served(upstream, operator, client):
    sha = two_skills(upstream)
    draft = source_check(a_source(upstream), actor=operator).waiting_draft

    published = bundle_version_publish(bundle_version=draft, actor=operator)

    assert '"source":{' in published.manifest and sha in published.manifest
    bundle_version_verify(bundle_version=published)
    call_command("bundle_verify", "acme-skills")
    data = BundleVersionSerializer(published).data
    assert data["provenance"]["commit"] == sha
    assert data["provenance"]["author"] == "Ada Upstream"
    client.force_login(operator)
    page = client.get(reverse("admin:catalog_bundleversion_change", args=[published.pk]))
    assert page.status_code == 200
    assert sha[:12] in page.content.decode()


def test_a_manifest_without_provenance_is_byte_for_byte_as_before():
    manifest = manifest_of(
        publisher="acme", bundle="kit", version="1.0.0", description="A kit", notes="",
        hosts=[("api.example.com", 443, "The API")], credentials=[],
        skills=[ManifestSkill("chase", "d" * 64, (ManifestFile("a.md", False, 3, "e" * 64),))],
    )  # fmt: skip

    assert canonical(manifest) == (
        b'{"bundle":"kit","credentials":[],"description":"A kit","format":'
        b'"pixie-bundle-manifest/1","hosts":[{"host":"api.example.com","port":443,'
        b'"purpose":"The API"}],"notes":"","publisher":"acme","skills":[{"digest":"'
        + b"d" * 64
        + b'","files":[{"executable":false,"path":"a.md","sha256":"'
        + b"e" * 64
        + b'","size":3}],"slug":"chase"}],"version":"1.0.0"}'
    )


def test_a_version_without_a_source_serves_no_provenance(upstream, operator):
    two_skills(upstream)
    draft = source_check(a_source(upstream), actor=operator).waiting_draft
    BundleVersion.objects.filter(pk=draft.pk).update(source_commit="")
    draft.refresh_from_db()

    assert BundleVersionSerializer(draft).data["provenance"] is None


def test_sources_check_checks_the_due_sources_one_line_each(upstream, capsys):
    two_skills(upstream)
    source = a_source(upstream)
    Source.objects.create(url=upstream.url, ref="main", metadata=METADATA, paused=True)

    call_command("sources_check")

    out = capsys.readouterr().out
    assert out.startswith(f"draft     #{source.pk} {upstream.url}")
    assert len(out.strip().splitlines()) == 1
    call_command("sources_check")  # checked just now: not due
    assert capsys.readouterr().out.strip() == "No source is due."
    call_command("sources_check", "--source", str(source.pk))
    assert capsys.readouterr().out.startswith(f"unchanged #{source.pk}")


def test_sources_check_exits_non_zero_when_a_check_fails(upstream, settings):
    two_skills(upstream)
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False
    a_source(upstream)

    with pytest.raises(CommandError, match="need an operator"):
        call_command("sources_check")


def test_the_beat_task_queues_a_check_of_each_due_source(upstream):
    two_skills(upstream)
    source = a_source(upstream)

    assert check_due_sources.delay().get() == [source.pk]
    source.refresh_from_db()
    assert source.last_result == "draft"


def test_bundle_verify_finds_a_provenance_changed_after_signing(upstream, operator):
    from django.db import connection

    two_skills(upstream)
    draft = source_check(a_source(upstream), actor=operator).waiting_draft
    published = bundle_version_publish(bundle_version=draft, actor=operator)
    with connection.cursor() as cursor:  # behind the models' guard, as a hand in the database
        cursor.execute(
            "UPDATE catalog_bundleversion SET source_commit = %s WHERE id = %s",
            ["f" * 40, published.pk],
        )

    with pytest.raises(CommandError, match="do not match what their publisher signed"):
        call_command("bundle_verify", "acme-skills")
    with pytest.raises(ContentNotAsSigned, match="the source .* does not match"):
        bundle_version_verify(bundle_version=published)
