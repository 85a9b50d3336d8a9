"""The workspace dashboard: what a member reads first, in a fixed number of queries."""

import pytest
from django.test import Client
from django.urls import reverse

from agents.models import Agent, AgentSkill
from catalog.models import Plan, WorkspaceSkill
from egress.models import CredentialRequirement
from pixie.installer.plans import plan_create
from tests.factories import make_user, make_workspace
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


def browser(user):
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def busy_acme(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """2.1.0 installed with pinned agents, 60 more pinned agents, 55 open plans, 52 credentials."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    old = chase.head
    more = Agent.objects.bulk_create(
        Agent(workspace=acme, slug=f"agent-{n}", name=f"Agent {n:02}") for n in range(60)
    )
    AgentSkill.objects.bulk_create(
        AgentSkill(agent=a, skill=chase, pinned_revision=old) for a in more
    )
    from catalog.services.workspace_skills import skill_edit

    skill_edit(skill=chase, actor=owner, body=old.body + "\n\nA local line.")  # pins now behind
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    for _ in range(54):
        plan.pk = None
        plan.save()
    CredentialRequirement.objects.bulk_create(
        CredentialRequirement(workspace=acme, name=f"TOKEN_{n}", host="api.example.com")
        for n in range(52)
    )
    return acme


def test_the_dashboard_shows_versions_open_plans_credentials_and_agents_behind(
    busy_acme, member, django_assert_max_num_queries
):
    client = browser(member)
    url = reverse("admin:pixie_workspace_dashboard", args=[busy_acme.pk])
    with django_assert_max_num_queries(14):
        page = client.get(url)
    html = page.content.decode()
    installations = html[html.index('id="dashboard-installations"') :]
    assert "Accounts Receivable" in installations and "2.1.0" in installations
    assert '<span class="newer">2.2.0</span>' in installations
    assert "ask for the upgrade" not in installations  # a member cannot ask
    assert html.count("upgrade Accounts Receivable 2.2.0</a>") == 55
    assert Plan.objects.filter(workspace=busy_acme, status="proposed").count() == 55
    assert "LEDGER_API_TOKEN" in html and "TOKEN_51" in html
    agents = html[html.index('id="dashboard-agents"') :]
    assert agents.count("/admin/agents/agent/") == 62  # 60 added + 2 from the install
    assert "Agent 59" in agents and "Collections agent" in agents


def test_only_members_see_a_workspace_dashboard(acme, owner):
    stranger = make_user("sam")
    make_workspace("initech", owner=stranger)
    url = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    assert browser(stranger).get(url).status_code == 404
    assert browser(owner).get(url).status_code == 200
