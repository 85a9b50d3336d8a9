"""Installing from the workspace home: the owner chooses the agents that get the skills
and, agent by agent, pinned to this version or following the latest; what they chose is
what the plan says and what the apply does. (Pinned agents then fall behind an edit, and
the composed prompt says so.)"""

import pytest
from django.urls import reverse

from agents.models import Agent, AgentSkill
from agents.selectors import composed_prompt
from catalog.models import Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from tests.clients import api_for
from tests.installer.flow import approve_and_apply
from tests.installer.test_plan_pages import browser

pytestmark = pytest.mark.django_db

ASKED = {"bundle": "accounts-receivable", "version": "2.1.0"}


def install_page(workspace) -> str:
    return reverse("admin:pixie_workspace_install", args=[workspace.pk])


def test_every_agent_is_offered_ticked_and_pinned_and_the_page_says_what_pinning_means(
    acme, owner, agents, demo_catalog
):
    page = browser(owner).get(install_page(acme), ASKED).content.decode()
    assert "Install Accounts Receivable 2.1.0 in Acme" in page
    assert "Your edits and later upgrades reach it only when you repoint it" in page
    for agent in agents:
        assert f'name="agents" value="{agent.pk}" id="agent-{agent.pk}" checked' in page
        assert f'<select name="use-{agent.pk}" aria-label="How {agent.name} uses them">' in page
    assert page.count('<option value="pin" selected>') == len(agents)


def test_an_agent_that_follows_gets_the_edits_at_once_and_a_pinned_one_is_told_it_is_behind(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    collections, front_desk = agents
    answer = browser(owner).post(
        install_page(acme),
        {**ASKED, "agents": [collections.pk, front_desk.pk], f"use-{front_desk.pk}": "follow"},
    )
    plan = Plan.objects.get()
    assert answer["Location"] == reverse("admin:catalog_plan_review", args=[plan.pk])
    attach = {s["agent"]: s["follows"] for s in plan.steps if s["type"] == "agent.attach"}
    assert attach == {"Collections agent": False, "Front desk agent": True}
    review = browser(owner).get(answer["Location"]).content.decode()
    assert "(pinned to these revisions)" in review and "(following the latest)" in review
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    pinned = AgentSkill.objects.filter(agent=collections, pinned_revision__isnull=False)
    assert pinned.count() == 4
    assert not AgentSkill.objects.filter(agent=front_desk, pinned_revision__isnull=False).exists()

    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\nCopy the manager.")
    ([followed], [behind]) = (
        [p for p in composed_prompt(agent).parts if p.slug == "invoice-chase"]
        for agent in (front_desk, collections)
    )
    assert "Copy the manager." in followed.body and followed.pin_words == "follows the latest"
    assert "Copy the manager." not in behind.body
    assert behind.pin_words == "pinned behind the latest (r1 of r2)"
    prompt = browser(owner).get(reverse("admin:agents_agent_prompt", args=[collections.pk]))
    assert "pinned behind the latest (r1 of r2)" in prompt.content.decode()


def test_an_install_that_gives_its_skills_to_no_agent_says_so(acme, owner, agents, demo_catalog):
    answer = browser(owner).post(install_page(acme), ASKED)  # every box unticked
    review = browser(owner).get(answer["Location"]).content.decode()
    assert "No agent gets these skills: they are in Acme, used by none of its agents" in review


def test_a_member_reads_why_not_and_a_stranger_finds_nothing(acme, member, agents, demo_catalog):
    page = browser(member).get(install_page(acme), ASKED).content.decode()
    assert "Only an owner of Acme can do this." in page and "Compute the plan" not in page
    refused = browser(member).post(install_page(acme), {**ASKED, "agents": [agents[0].pk]})
    assert "Only an owner of Acme can do this." in refused.content.decode()
    from tests.factories import make_user

    assert browser(make_user("stranger")).get(install_page(acme), ASKED).status_code == 404
    assert not Plan.objects.exists()


def test_a_version_that_is_not_there_is_named_on_the_home(acme, owner, demo_catalog):
    answer = browser(owner).get(
        install_page(acme), {"bundle": "accounts-receivable", "version": "9.9.9"}, follow=True
    )
    shown = [str(m) for m in answer.context["messages"]]
    assert "No published version 9.9.9 of accounts-receivable" in shown


def test_the_page_costs_the_same_for_many_agents(
    acme, owner, demo_catalog, django_assert_max_num_queries
):
    Agent.objects.bulk_create(
        Agent(workspace=acme, slug=f"agent-{n}", name=f"Agent {n:03}") for n in range(250)
    )
    client = browser(owner)
    with django_assert_max_num_queries(14):
        page = client.get(install_page(acme), ASKED).content.decode()
    assert "The first 200 of 250 agents, by name" in page


def test_the_api_takes_the_agents_that_follow_among_those_chosen(acme, owner, agents, demo_catalog):
    api = api_for(owner)
    asked = {"kind": "install", **ASKED, "agents": ["collections"], "follow": ["front-desk"]}
    refused = api.post("/api/workspaces/acme/plans/", asked, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "bad_agent"
    assert "must be one of the agents the skills go to" in refused.json()["detail"]
    asked["follow"] = ["collections"]
    plan = api.post("/api/workspaces/acme/plans/", asked, format="json").json()
    (attach,) = [s for s in plan["steps"] if s["type"] == "agent.attach"]
    assert attach["follows"] is True and "following the latest" in attach["reason"]
