"""History cannot rewrite what must not change: django-reversion's Revert and Recover
deleted, posted by a superuser for every model the admin keeps history of, change
nothing; each History entry opens the object as recorded, with nothing to submit."""

from io import StringIO

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from reversion.admin import VersionAdmin
from reversion.models import Version

from catalog.models import BundleVersion, Status, WorkspaceSkill
from catalog.services.publishing import bundle_version_publish, bundle_version_yank
from pixie.core.audit.admin_history import ReadOnlyHistoryAdmin
from tests.admin_forms import change_form_data
from tests.reliability.test_permission_matrix import digest
from tests.reliability.world import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(demo_catalog, django_capture_on_commit_callbacks):
    return build_world(demo_catalog, django_capture_on_commit_callbacks)


def history_admins():
    """Every admin that keeps history (django-reversion's VersionAdmin)."""
    return [
        model_admin
        for model_admin in admin.site._registry.values()
        if isinstance(model_admin, VersionAdmin)
    ]


def admin_url(model, view, *args):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def superuser_client(world) -> Client:
    client = Client()
    client.force_login(world.users["superuser"])
    return client


def revert_body(client, url) -> dict:
    """What a browser would post from the History entry's page: its form whole, where the
    page has one (reversion's Revert form did), else a bare Save."""
    page = client.get(url)
    if page.context and "adminform" in page.context:
        return change_form_data(page)
    return {"_save": "Save"}


def test_every_admin_with_history_is_read_only():
    replaying = [
        type(model_admin).__name__
        for model_admin in history_admins()
        if not isinstance(model_admin, ReadOnlyHistoryAdmin)
    ]
    assert replaying == []


def test_a_posted_revert_changes_nothing_for_any_model(world):
    client = superuser_client(world)
    before = digest()
    tried = []
    for model_admin in history_admins():
        model = model_admin.model
        version = Version.objects.get_for_model(model).order_by("pk").first()
        if version is None or not model.objects.filter(pk=version.object_id).exists():
            continue
        url = admin_url(model, "revision", quote(version.object_id), version.pk)
        response = client.post(url, revert_body(client, url), follow=True)
        assert response.status_code == 200, url
        assert response.redirect_chain[0][0] == admin_url(
            model, "history", quote(version.object_id)
        )
        assert "Nothing was reverted" in response.content.decode()
        tried.append(model._meta.label)
    # The world has recorded rows of every kind a workspace or the catalog writes.
    assert {"catalog.bundleversion", "catalog.workspaceskill", "catalog.plan"} <= {
        label.lower() for label in tried
    }, tried
    assert digest() == before


def test_recover_deleted_is_not_offered_and_a_posted_recovery_changes_nothing(world):
    client = superuser_client(world)
    before = digest()
    tried = told = 0
    for model_admin in history_admins():
        tried += 1
        model = model_admin.model
        listing = client.get(admin_url(model, "changelist"))
        assert listing.status_code == 200
        assert b"recoverlink" not in listing.content, model._meta.label
        version = Version.objects.get_for_model(model).order_by("pk").first()
        if version is None:
            continue
        response = client.post(admin_url(model, "recover", version.pk), follow=True)
        if response.status_code == 403:  # rows only services add (plans, messages)
            continue
        assert response.redirect_chain[-1][0] == admin_url(model, "changelist")
        assert "Deleted rows are not brought back from history" in response.content.decode()
        told += 1
    assert tried > 10 and told > 5
    assert digest() == before


def test_a_yanked_release_stays_published_with_its_skills_after_a_revert(world):
    """The attack the audit found: a version loaded as a draft, then published and yanked;
    Revert on its first History entry (the draft) made it a draft with 0 skills and erased
    its yank reason and publisher."""
    operator = world.users["superuser"]
    call_command("bundle_load", "catalog/demo/support-desk-1.0.0", stdout=StringIO())
    release = BundleVersion.objects.get(bundle__slug="support-desk")
    bundle_version_publish(bundle_version=release, actor=operator)
    bundle_version_yank(bundle_version=release, actor=operator, reason="Broken")
    release.refresh_from_db()
    skills, published = release.skills.count(), (release.published_at, release.published_by_id)
    draft = Version.objects.get_for_object(release).order_by("pk").first()
    assert draft.field_dict["status"] == Status.DRAFT
    client = superuser_client(world)

    url = admin_url(BundleVersion, "revision", release.pk, draft.pk)
    client.post(url, revert_body(client, url))

    release.refresh_from_db()
    assert release.status == Status.YANKED
    assert release.yank_reason == "Broken"
    assert (release.published_at, release.published_by_id) == published
    assert release.skills.count() == skills > 0


def test_a_history_entry_shows_the_object_as_recorded_with_nothing_to_submit(world):
    skill = WorkspaceSkill.objects.get(workspace=world.acme, slug="month-end")
    version = Version.objects.get_for_object(skill).order_by("pk").first()
    url = admin_url(WorkspaceSkill, "revision", skill.pk, version.pk)
    for role in ("member", "owner", "superuser"):
        client = Client()
        client.force_login(world.users[role])
        response = client.get(url)
        assert response.status_code == 200, role
        main = response.content.decode().split('id="content-main"', 1)[1]
        assert "as recorded then" in main and "month-end" in main
        assert "History is read-only" in main
        assert "<form" not in main and "Revert" not in main
    history = superuser_client(world).get(admin_url(WorkspaceSkill, "history", skill.pk))
    assert url in history.content.decode()
    assert "revert" not in history.content.decode().lower()


def test_a_history_entry_is_found_only_through_its_own_object(world, demo_catalog):
    """A version id of another object (or another model with the same id) is not found."""
    skill = WorkspaceSkill.objects.get(workspace=world.acme, slug="month-end")
    foreign = Version.objects.get_for_object(demo_catalog["2.1.0"]).first()
    client = superuser_client(world)
    response = client.get(admin_url(WorkspaceSkill, "revision", skill.pk, foreign.pk))
    assert response.status_code == 404


def test_another_workspaces_history_entry_is_not_found(world):
    skill = WorkspaceSkill.objects.get(workspace=world.acme, slug="month-end")
    version = Version.objects.get_for_object(skill).first()
    client = Client()
    client.force_login(world.users["stranger"])
    response = client.get(admin_url(WorkspaceSkill, "revision", skill.pk, version.pk))
    assert response.status_code == 404


def test_a_history_entry_reads_a_bounded_number_of_queries(
    world, demo_catalog, django_assert_max_num_queries
):
    release = demo_catalog["2.1.0"]
    version = Version.objects.get_for_object(release).order_by("-pk").first()
    client = superuser_client(world)
    client.get(admin_url(BundleVersion, "revision", release.pk, version.pk))  # warm caches
    with django_assert_max_num_queries(12):
        response = client.get(admin_url(BundleVersion, "revision", release.pk, version.pk))
    assert response.status_code == 200
