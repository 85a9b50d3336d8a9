"""A workspace promotes an agent's hand-built assembly to a bundle and installs it elsewhere."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from agents.models import Agent, AgentSkill
from agents.promote import assembly_promote
from agents.selectors import composed_prompt
from catalog.models import BundleVersion, CatalogReview, Status, WorkspaceSkill
from catalog.services.catalog_review import catalog_review_approve
from catalog.services.workspace_skills import skill_create, skill_edit
from pixie.core.errors import PermissionRefused, ValidationFailed
from pixie.installer.plans import plan_create
from tests.factories import make_workspace
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db


@pytest.fixture
def assembled(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """Collections agent: the AR bundle, one skill edited, one override, one local skill."""
    collections = agents[0]
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, [collections])
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\nCopy the account manager.")
    AgentSkill.objects.filter(agent=collections, skill=chase).update(pinned_revision=None)
    local = skill_create(
        workspace=acme, slug="month-end", name="Month end", short_description="Close the month.",
        body="At month end, list open invoices with @query-ledger and chase with @invoice-chase.",
        actor=owner,
    )  # fmt: skip
    AgentSkill.objects.create(
        agent=collections, skill=local, position=10, pinned_revision=local.head
    )
    take = AgentSkill.objects.get(agent=collections, skill__slug="take-payment")
    from agents.services import agent_skill_override

    agent_skill_override(attachment=take, body="Never take a payment on Fridays.", actor=owner)
    return collections


def test_promoting_and_installing_elsewhere_gives_the_same_composed_prompt(
    assembled, owner, operator, django_capture_on_commit_callbacks
):
    published = assembly_promote(
        agent=assembled, actor=owner, slug="acme-collections", name="Acme collections"
    )
    assert published.status == Status.PUBLISHED
    # Another workspace installs it once an operator has approved it for the catalog.
    assert published.catalog_review == CatalogReview.PENDING
    catalog_review_approve(bundle_version=published, actor=operator)
    assert published.bundle.publisher.workspace.slug == "acme"
    assert {h.host for h in published.hosts.all()} == {"ledger.example.com"}
    assert {c.name for c in published.credentials.all()} == {"LEDGER_API_TOKEN"}
    rules = {a["operation"] for e in published.skills.all() for a in e.skill_version.approvals}
    assert "apply-credit-note" in rules

    globex = make_workspace("globex", owner=owner)
    other = Agent.objects.create(workspace=globex, slug="closer", name="Closer")
    plan = plan_create(
        workspace=globex, kind="install", bundle_version=published, actor=owner, agents=[other]
    )
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    before = [(p.slug, p.body) for p in composed_prompt(assembled).parts]
    after = [(p.slug, p.body) for p in composed_prompt(other).parts]
    assert after == before
    assert composed_prompt(other).unresolved == []


def test_promote_refuses_bad_input_and_members(assembled, owner, member):
    with pytest.raises(PermissionRefused):
        assembly_promote(agent=assembled, actor=member, slug="kit", name="Kit")
    with pytest.raises(ValidationFailed) as refused:
        assembly_promote(agent=assembled, actor=owner, slug="Bad Slug", name="", version="one")
    assert len(refused.value.problems) == 3
    assert not BundleVersion.objects.filter(bundle__slug="kit").exists()
    from catalog.models import Publisher

    assert not Publisher.objects.filter(kind="workspace").exists()  # refused before any write


def test_owner_promotes_from_the_agent_page_and_the_api(assembled, owner):
    owner.is_staff = True
    owner.save()
    browser = Client()
    browser.force_login(owner)
    url = reverse("admin:agents_agent_promote", args=[assembled.pk])
    response = browser.post(url, {"slug": "kit", "name": "Kit", "version": "1.0.0"}, follow=True)
    assert "Published Kit 1.0.0 from the skills of Collections agent" in response.content.decode()
    api = APIClient()
    api.force_authenticate(owner)
    response = api.post(
        "/api/workspaces/acme/agents/collections/promote/",
        {"slug": "kit", "name": "Kit", "version": "1.0.0"},
        format="json",
    )
    assert response.status_code == 400 and "already exists" in str(response.json())
    response = api.post(
        "/api/workspaces/acme/agents/collections/promote/",
        {"slug": "kit", "name": "Kit", "version": "1.1.0"},
        format="json",
    )
    assert response.status_code == 201 and response.json()["status"] == "published"


@pytest.mark.parametrize(
    "lookalike",
    [
        "Аccounts Receivable",  # a Cyrillic А
        "Accounts Rеceivable",  # a Cyrillic е
        "Ａccounts Receivable",  # full width
        "𝐀ccounts Receivable",  # mathematical bold
        "Accounts Receivab1e",  # a digit one for the l
        "Accounts Receıvable",  # a dotless ı
        "ACCOUNTS RECEIVABLE",
    ],
)
def test_a_trusted_workspace_cannot_promote_a_lookalike_of_the_operators_bundle(
    assembled, owner, lookalike
):
    """From a trusted workspace a bundle reaches every catalog at once: a name that only
    looks different from the operator's Accounts Receivable is refused."""
    from catalog.models import Publisher

    publisher = Publisher.objects.create(
        slug="workspace-acme", name="Acme", kind=Publisher.Kind.WORKSPACE,
        workspace=assembled.workspace, trusted=True,
    )  # fmt: skip
    assert publisher.is_trusted
    answer = APIClient()
    answer.force_authenticate(owner)
    response = answer.post(
        f"/api/workspaces/acme/agents/{assembled.slug}/promote/",
        {"slug": "acme-ar", "name": lookalike},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "is the name of Pixie's bundle accounts-receivable" in str(response.json())
    assert not BundleVersion.objects.filter(bundle__slug="acme-ar").exists()
