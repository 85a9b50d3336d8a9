"""Upgrades keep agents whole: a skill the new version adds goes to every agent that has
the installation's other skills, as each holds those (pinned, or following the latest),
unless the owner leaves the agent out; listed in the plan, through the API a user takes."""

import pytest

from agents.models import AgentSkill
from agents.selectors import composed_prompt
from catalog.models import Plan
from tests.clients import api_for
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db

UPGRADE = {"kind": "upgrade", "bundle": "accounts-receivable", "version": "2.2.0"}


@pytest.fixture
def installed(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """2.1.0 on both agents: collections pinned (as installed), front desk following."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    collections, front_desk = agents
    AgentSkill.objects.filter(agent=front_desk).update(pinned_revision=None)
    return collections, front_desk


def upgrade(owner, **extra):
    answer = api_for(owner).post("/api/workspaces/acme/plans/", {**UPGRADE, **extra},
                                 format="json")  # fmt: skip
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_an_upgrade_adds_its_new_skill_to_each_agent_as_it_holds_the_others(
    installed, owner, django_capture_on_commit_callbacks
):
    collections, front_desk = installed
    body = upgrade(owner)
    gains = {s["agent"]: s for s in body["steps"] if s["type"] == "agent.gains"}
    assert set(gains) == {"Collections agent", "Front desk agent"}
    assert gains["Collections agent"]["skills"] == ["payment-plan"]
    assert (gains["Collections agent"]["follows"], gains["Front desk agent"]["follows"]) == (
        False, True)  # fmt: skip
    plan = approve_and_apply(Plan.objects.get(pk=body["id"]), owner,
                             django_capture_on_commit_callbacks)  # fmt: skip
    assert plan.status == Plan.State.APPLIED, plan.error
    pinned = AgentSkill.objects.get(agent=collections, skill__slug="payment-plan")
    assert pinned.pinned_revision_id == pinned.skill.head_id
    following = AgentSkill.objects.get(agent=front_desk, skill__slug="payment-plan")
    assert following.pinned_revision_id is None
    # The agent that follows runs the new @invoice-chase, which mentions @payment-plan:
    # it now resolves.
    unresolved = {m for part in composed_prompt(front_desk).parts for m in part.unresolved}
    assert "payment-plan" not in unresolved


def test_an_owner_leaves_an_agent_out_and_it_gets_nothing(
    installed, owner, django_capture_on_commit_callbacks
):
    collections, front_desk = installed
    body = upgrade(owner, leave_out=[front_desk.slug])
    left = [s for s in body["steps"] if s["type"] == "agent.left_out"]
    assert [(s["agent"], s["skills"]) for s in left] == [("Front desk agent", ["payment-plan"])]
    plan = approve_and_apply(Plan.objects.get(pk=body["id"]), owner,
                             django_capture_on_commit_callbacks)  # fmt: skip
    assert plan.status == Plan.State.APPLIED, plan.error
    assert AgentSkill.objects.filter(agent=collections, skill__slug="payment-plan").exists()
    assert not AgentSkill.objects.filter(agent=front_desk, skill__slug="payment-plan").exists()


def test_leaving_out_an_agent_that_does_not_exist_is_named(installed, owner):
    answer = api_for(owner).post("/api/workspaces/acme/plans/",
                                 {**UPGRADE, "leave_out": ["nobody"]}, format="json")  # fmt: skip
    assert answer.status_code == 400
    assert "Acme has no agent 'nobody'" in answer.json()["detail"]
    assert not Plan.objects.filter(kind="upgrade").exists()
    # Nor an id of another workspace's agent, as a page could post it.
    from agents.models import Agent
    from catalog.models import BundleVersion
    from pixie.core.errors import ValidationFailed
    from pixie.installer.plans import plan_create
    from tests.factories import make_user, make_workspace

    elsewhere = make_workspace("globex", owner=make_user("gus"))
    stranger = Agent.objects.create(workspace=elsewhere, slug="theirs", name="Theirs")
    with pytest.raises(ValidationFailed, match="Every agent must belong to Acme"):
        plan_create(workspace=installed[0].workspace, kind="upgrade", actor=owner,
                    bundle_version=BundleVersion.objects.get(version="2.2.0"),
                    leave_out=[stranger.pk])  # fmt: skip
    assert not Plan.objects.filter(kind="upgrade").exists()


def test_an_agent_that_starts_holding_the_bundle_after_the_plan_makes_it_stale(
    installed, owner, acme, django_capture_on_commit_callbacks
):
    """Who gets the new skill was read when the plan was made: if that changes, the plan
    is stale rather than applied to a different set of agents."""
    from agents.models import Agent
    from catalog.models import WorkspaceSkill

    body = upgrade(owner)
    late = Agent.objects.create(workspace=acme, slug="late", name="Late agent")
    AgentSkill.objects.create(agent=late, skill=WorkspaceSkill.objects.get(slug="invoice-chase"))
    plan = approve_and_apply(Plan.objects.get(pk=body["id"]), owner,
                             django_capture_on_commit_callbacks)  # fmt: skip
    assert plan.status == Plan.State.STALE, plan.status
    assert not AgentSkill.objects.filter(skill__slug="payment-plan").exists()


def test_leaving_an_agent_out_on_the_plan_page_recomputes_before_approval(installed, owner):
    from django.urls import reverse

    from tests.clients import admin_for

    collections, front_desk = installed
    plan = Plan.objects.get(pk=upgrade(owner)["id"])
    client = admin_for(owner)
    page = client.get(reverse("admin:catalog_plan_review", args=[plan.pk])).content.decode()
    assert f'name="leave-out" value="{front_desk.pk}"' in page
    assert "Leave Front desk agent out" in page
    answer = client.post(reverse("admin:catalog_plan_approve", args=[plan.pk]),
                         {"leave-out-shown": "1", "leave-out": [str(front_desk.pk)]})  # fmt: skip
    newer = Plan.objects.latest("pk")
    assert answer["Location"] == reverse("admin:catalog_plan_review", args=[newer.pk])
    assert newer.options["leave_out"] == [front_desk.pk]
    assert Plan.objects.get(pk=plan.pk).status == Plan.State.SUPERSEDED
    assert newer.status == Plan.State.PROPOSED  # shown again, not approved


def test_an_agent_left_out_is_warned_of_the_mention_that_would_resolve_to_nothing(installed, owner):
    """The front desk follows @invoice-chase, whose 2.2.0 text mentions @payment-plan: left
    out of @payment-plan, its prompt would name a skill it lacks. The plan says so, naming
    the agent; an agent that gets @payment-plan is not warned."""
    collections, front_desk = installed
    body = upgrade(owner, leave_out=[front_desk.slug])
    warnings = [s for s in body["steps"] if s["type"] == "agent.unresolved"]
    assert [(w["slug"], w["mention"], w["agents"]) for w in warnings] == [
        ("invoice-chase", "payment-plan", ["Front desk agent"])
    ]
    assert warnings[0]["count"] == 1
    assert not [s for s in upgrade(owner)["steps"] if s["type"] == "agent.unresolved"]


def test_a_body_left_as_it_is_that_mentions_a_skill_the_plan_removes_is_warned(
    installed, acme, owner, django_assert_max_num_queries
):
    """The collections agent also runs the workspace's own @month-end, pinned, which says
    "run @invoice-chase"; the front desk runs it too, with an override that does not say
    so. Uninstalling takes @invoice-chase away from both: the plan warns for the agent
    whose body still names it, and only that one. A look-alike (@invoice-chaser) is not
    a mention of it."""
    from agents.services import agent_skill_override
    from catalog.services.workspace_skills import skill_create

    collections, front_desk = installed
    body = "First run @invoice-chase, then file @invoice-chaser."
    month_end = skill_create(workspace=acme, slug="month-end", actor=owner, name="Month end",
                             short_description="Close the month.", body=body)  # fmt: skip
    AgentSkill.objects.create(agent=collections, skill=month_end, position=9,
                              pinned_revision=month_end.head)  # fmt: skip
    on_desk = AgentSkill.objects.create(agent=front_desk, skill=month_end, position=9)
    agent_skill_override(attachment=on_desk, body="Close the books by hand.", actor=owner)
    with django_assert_max_num_queries(40):
        plan = api_for(owner).post("/api/workspaces/acme/plans/",
                                   {"kind": "uninstall", "bundle": "accounts-receivable"},
                                   format="json")  # fmt: skip
    assert plan.status_code == 201, plan.content
    warnings = [s for s in plan.json()["steps"] if s["type"] == "agent.unresolved"]
    assert [(w["slug"], w["mention"], w["agents"]) for w in warnings] == [
        ("month-end", "invoice-chase", ["Collections agent"]),
    ]
