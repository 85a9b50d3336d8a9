"""Every admin list and change page runs a bounded number of queries, whatever the rows."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group
from django.urls import reverse
from rest_framework.authtoken.models import Token

from agents.models import Agent, AgentSkill, Turn
from catalog.models import (
    BundleSkill,
    BundleVersion,
    Installation,
    Plan,
    SkillRevision,
    WorkspaceSkill,
)
from catalog.services import bundle_version_publish
from egress.models import CredentialRequirement, EgressRule
from pixie.core.models import Membership
from tests.factories import (
    add_local_contact,
    make_bundle_version,
    make_publisher,
    make_skill_version,
    make_user,
    make_workspace,
)
from tests.module_rows import rows_for_the_module

pytestmark = pytest.mark.django_db
ROWS = 55
MAX_QUERIES = 20


@pytest.fixture(scope="module")
def catalog_of_many(django_db_setup, django_db_blocker):
    """55 of every kind of row, and one bundle version with 55 skills, made once for the
    module's tests (they read them; tests/module_rows.py)."""
    with rows_for_the_module(django_db_blocker):
        yield _catalog_of_many(make_user("olivia", is_staff=True, is_superuser=True))


@pytest.fixture
def operator(catalog_of_many):
    """The superuser who made the module's rows (tests/conftest.py's operator otherwise)."""
    return catalog_of_many["operator"]


def _catalog_of_many(operator):
    from django.utils import timezone

    make_publisher()
    skill_versions = [
        make_skill_version(f"skill-{i}", body=f"Step {i}: use @query-ledger.") for i in range(ROWS)
    ]
    big = make_bundle_version("big-bundle", skills=skill_versions)
    for i in range(ROWS):
        make_bundle_version(f"bundle-{i}", skills=[skill_versions[i]])
    bundle_version_publish(bundle_version=big, actor=operator)

    workspace = make_workspace("acme", owner=operator)
    for i in range(ROWS):
        Membership.objects.create(workspace=workspace, user=make_user(f"member-{i}"))
    agent = Agent.objects.create(workspace=workspace, slug="collections", name="Collections")
    now = timezone.now()
    for i in range(ROWS):
        skill = WorkspaceSkill.objects.create(workspace=workspace, slug=f"local-{i}")
        revision = SkillRevision.objects.create(
            skill=skill,
            number=1,
            name=f"Local {i}",
            short_description="Local skill.",
            body="Body.",
            upstream=skill_versions[i],
            created_by=operator,
        )
        skill.head = revision
        skill.save(update_fields=["head"])
        AgentSkill.objects.create(agent=agent, skill=skill, position=i, pinned_revision=revision)
        Turn.objects.create(agent=agent)
        EgressRule.objects.create(
            workspace=workspace, host=f"h{i}.example.com", approved_by=operator, approved_at=now
        )
        CredentialRequirement.objects.create(workspace=workspace, name=f"TOKEN_{i}")
        Plan.objects.create(workspace=workspace, kind="install", bundle_version=big)
    installation = Installation.objects.create(
        workspace=workspace, bundle=big.bundle, bundle_version=big, installed_by=operator
    )
    # Installed skills, as a published collection leaves them: each list row names its
    # installation (and so the installation's workspace).
    WorkspaceSkill.objects.filter(workspace=workspace).update(installation=installation)
    _contacts_and_messages(workspace, operator)
    _sources(big, BundleVersion.objects.get(bundle__slug="bundle-0"))
    Group.objects.get_or_create(name="auditors")
    Token.objects.create(user=operator)
    return {"big": big, "workspace": workspace, "agent": agent, "operator": operator}


def _contacts_and_messages(workspace, owner):
    """A contact each way and 55 delivered messages (the sharing admin's rows)."""
    from pixie.sharing import services as sharing
    from pixie.sharing.dispatch import message_dispatch

    neighbour = make_workspace("globex", owner=owner)
    to_acme = add_local_contact(workspace=neighbour, other_slug="acme", actor=owner)
    add_local_contact(workspace=workspace, other_slug="globex", actor=owner)
    for i in range(ROWS):
        sent = sharing.text_send(
            workspace=neighbour, contact=to_acme, text=f"Note {i}", actor=owner
        )
        message_dispatch(message_pk=sent.pk, final_attempt=True)
    from pixie.sharing.models import BlockedSender

    BlockedSender.objects.bulk_create(
        BlockedSender(
            workspace=workspace,
            sender_tag=f"{i:032x}",
            claimed_name=f"Pest {i}",
            fingerprint="0000 0000 0000 0000 0000",
            blocked_by=owner,
        )
        for i in range(ROWS)
    )
    from pixie.core.models import LoginLockout

    LoginLockout.objects.bulk_create(
        LoginLockout(kind="account", username=f"guessed-{i}", address="203.0.113.7",
                     failures=5, seconds=900)
        for i in range(ROWS)
    )  # fmt: skip


def _sources(big, draft):
    """Sources the catalog follows (pixie.sources), each with its bundle and a waiting draft."""
    from pixie.sources.models import Source

    Source.objects.bulk_create(
        Source(url=f"https://example.com/skills-{i}.git", ref="main", bundle=big.bundle,
               waiting_draft=draft, last_result="draft")
        for i in range(ROWS)
    )  # fmt: skip


def registered_models():
    return sorted(admin.site._registry, key=lambda model: model._meta.label)


@pytest.mark.parametrize("model", registered_models(), ids=lambda m: m._meta.label)
def test_every_admin_list_is_bounded(
    model, catalog_of_many, operator_client, django_assert_max_num_queries
):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    with django_assert_max_num_queries(MAX_QUERIES):
        response = operator_client.get(url)
    assert response.status_code == 200


@pytest.mark.parametrize("model", registered_models(), ids=lambda m: m._meta.label)
def test_every_admin_change_page_is_bounded(
    model, catalog_of_many, operator_client, django_assert_max_num_queries
):
    # The object with the most related rows is the one that would show an N+1.
    special = {
        BundleVersion: catalog_of_many["big"],
        Agent: catalog_of_many["agent"],
    }
    obj = special.get(model) or model.objects.order_by("pk").last()
    assert obj is not None, f"the fixture makes no {model.__name__} rows"
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])
    with django_assert_max_num_queries(MAX_QUERIES):
        response = operator_client.get(url, follow=True)  # a plan's page is its review
    assert response.status_code == 200


def test_a_draft_bundle_version_with_many_skills_is_bounded(
    operator_client, django_assert_max_num_queries
):
    skills = [make_skill_version(f"draft-{i}") for i in range(ROWS)]
    draft = make_bundle_version("draft-bundle", skills=skills)
    url = reverse("admin:catalog_bundleversion_change", args=[draft.pk])
    # + the findings scan of a draft: its skills, their Markdown files, hosts, credentials.
    with django_assert_max_num_queries(MAX_QUERIES + 4):
        response = operator_client.get(url)
    assert response.status_code == 200
    assert BundleSkill.objects.filter(bundle_version=draft).count() == ROWS
    # Read, not edited: every skill's text is on the page, and no form field of the draft.
    page = response.content.decode()
    assert page.count('<details class="skill-text" id="text-draft-') == ROWS
    assert 'name="skills-' not in page


def test_history_pages_show_who_changed_what(catalog_of_many, operator_client, operator):
    big = catalog_of_many["big"]
    url = reverse("admin:catalog_bundleversion_history", args=[big.pk])
    page = operator_client.get(url).content.decode()
    assert f"Published {big}" in page
    assert operator.username in page
