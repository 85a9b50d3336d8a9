"""An operator publishes and yanks from a bundle version's own page, after a
confirmation that says what it touches: the workspaces that run the version, the agents
pinned to it, and (for a publish) the workspaces on another version."""

import pytest
from django.urls import reverse

from agents.models import AgentSkill
from catalog.models import BundleVersion, Status
from tests.clients import admin_for
from tests.factories import make_bundle_version, make_skill_version, make_user
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """acme runs 2.1.0, its collections agent pinned to it."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    AgentSkill.objects.filter(agent=agents[1]).update(pinned_revision=None)
    for attachment in AgentSkill.objects.filter(agent=agents[0]).select_related("skill"):
        attachment.pinned_revision_id = attachment.skill.head_id
        attachment.save(update_fields=["pinned_revision"])
    return demo_catalog


def test_a_yank_from_the_version_page_shows_who_runs_it_first(
    running, operator_client, django_assert_max_num_queries
):
    version = running["2.1.0"]
    page = operator_client.get(reverse("admin:catalog_bundleversion_change", args=[version.pk]))
    text = page.content.decode()
    assert 'id="release-yank"' in text and 'id="release-publish"' not in text
    changelist = reverse("admin:catalog_bundleversion_changelist")
    selected = {"action": "yank", "_selected_action": [str(version.pk)]}
    with django_assert_max_num_queries(20):
        confirm = operator_client.post(changelist, selected)
    text = confirm.content.decode()
    row = text[text.index(f'id="release-{version.pk}"') :]
    assert "1 workspace: Acme" in row
    assert "<td>1</td>" in row, row[:600]  # the pinned agent
    assert BundleVersion.objects.get(pk=version.pk).status == Status.PUBLISHED
    done = operator_client.post(
        changelist, {**selected, "post": "yes", "reason": "Charges twice"}, follow=True
    )
    assert f"Yanked {version}." in done.content.decode()
    assert BundleVersion.objects.get(pk=version.pk).yank_reason == "Charges twice"


def test_a_publish_confirmation_counts_the_workspaces_offered_the_upgrade(running, operator_client):
    draft = make_bundle_version(skills=[make_skill_version(body="Use @query-ledger.")])
    draft.bundle = running["2.1.0"].bundle
    draft.version = "3.0.0"
    draft.save()
    page = operator_client.get(reverse("admin:catalog_bundleversion_change", args=[draft.pk]))
    publish = reverse("admin:catalog_bundleversion_publish", args=[draft.pk])
    assert f'id="publish-draft" href="{publish}"' in page.content.decode()
    confirm = operator_client.get(publish).content.decode()
    row = confirm[confirm.index(f'id="release-{draft.pk}"') :]
    assert "no workspace" in row and "1 (offered the upgrade)" in row


def test_readers_of_the_catalog_are_offered_neither_button(running):
    from django.contrib.auth.models import Group

    auditor = make_user("aud")
    auditor.groups.add(Group.objects.get(name="auditors"))
    url = reverse("admin:catalog_bundleversion_change", args=[running["2.1.0"].pk])
    text = admin_for(auditor).get(url).content.decode()
    assert "release-yank" not in text and "publish-draft" not in text
