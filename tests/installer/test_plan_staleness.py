"""The staleness check reads only what a plan's fingerprint covers, and still turns the plan
stale when any of it changed between the plan and its apply."""

import json

import pytest
from django.utils import timezone

from agents.models import AgentSkill
from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_create, skill_edit
from egress.models import CredentialRequirement, EgressRule
from pixie.installer.plan_apply import _bundle_id
from pixie.installer.plan_inputs import (
    fingerprint,
    read_plan_inputs,
    relevant_reads,
    staleness_reads,
    step_slugs,
)
from pixie.installer.plans import plan_create
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db


def current_installation(plan: Plan):
    """The installation the apply compares the plan with (as plan_apply.staleness finds it)."""
    return Installation.objects.filter(workspace=plan.workspace, bundle_id=_bundle_id(plan)).first()


def narrow(plan: Plan) -> dict:
    return staleness_reads(
        workspace=plan.workspace,
        kind=plan.kind,
        bundle_version=plan.bundle_version_id,
        installation=current_installation(plan),
        agent_ids=plan.options.get("agents", []),
        steps=plan.steps,
    )


def full(plan: Plan) -> dict:
    """The reads as the whole read gives them (what the staleness check read before)."""
    inputs, reads = read_plan_inputs(
        workspace=plan.workspace,
        kind=plan.kind,
        bundle_version=plan.bundle_version_id,
        installation=current_installation(plan),
        agent_ids=plan.options.get("agents", []),
        fork_choices=plan.options.get("fork_choices", {}),
        leave_out=plan.options.get("leave_out", []),
        only_slugs=step_slugs(plan.steps),
        diffs=False,
    )
    return relevant_reads(reads, plan.steps, inputs)


def as_stored(reads: dict) -> dict:
    return json.loads(json.dumps(reads))


def test_the_narrow_read_gives_the_reads_the_plan_stored(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    skill_create(workspace=acme, slug="take-payment", actor=owner, name="Ours",
                 short_description="Our own", body="Local text.")  # fmt: skip
    plan = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                       actor=owner, agents=agents)  # fmt: skip
    assert any(s["type"] == "skill.reslug" for s in plan.steps)
    assert as_stored(narrow(plan)) == plan.reads
    assert fingerprint(narrow(plan)) == plan.fingerprint
    approve_and_apply(plan, owner, capture)
    upgrade = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    assert any(s["type"] == "agent.gains" for s in upgrade.steps)
    assert "holders" in upgrade.reads
    assert as_stored(narrow(upgrade)) == upgrade.reads
    uninstall = plan_create(
        workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    assert as_stored(narrow(uninstall)) == uninstall.reads
    approve_and_apply(uninstall, owner, capture)
    reinstall = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                            actor=owner, agents=agents)  # fmt: skip
    assert any(s["type"] == "skill.update" or s["type"] == "skill.unchanged"
               for s in reinstall.steps)  # fmt: skip
    assert as_stored(narrow(reinstall)) == reinstall.reads


def _edit_a_skill_the_upgrade_changes(acme, owner, agents):
    skill_edit(skill=WorkspaceSkill.objects.get(slug="invoice-chase"), actor=owner,
               body="Rewritten after the plan.")  # fmt: skip


def _take_the_new_skill_s_slug(acme, owner, agents):
    skill_create(workspace=acme, slug="payment-plan", actor=owner, name="Ours",
                 short_description="Our own", body="Local text.")  # fmt: skip


def _add_an_egress_rule(acme, owner, agents):
    EgressRule.objects.create(workspace=acme, host="other.example.com", port=443,
                              approved_by=owner, approved_at=timezone.now())  # fmt: skip


def _confirm_a_new_credential(acme, owner, agents):
    CredentialRequirement.objects.create(workspace=acme, name="OTHER_TOKEN")


def _a_new_agent_holds_the_bundle(acme, owner, agents):
    from agents.models import Agent

    late = Agent.objects.create(workspace=acme, slug="late", name="Late agent")
    AgentSkill.objects.create(agent=late, skill=WorkspaceSkill.objects.get(slug="invoice-chase"))


CHANGES = {
    "an installed skill's head": (_edit_a_skill_the_upgrade_changes, "skill @invoice-chase"),
    "a slug the plan creates": (_take_the_new_skill_s_slug, "skill @payment-plan"),
    "the egress rules": (_add_an_egress_rule, "the egress rules changed"),
    "the credentials": (_confirm_a_new_credential, "the credentials changed"),
    "the holders": (_a_new_agent_holds_the_bundle, "the workspace changed"),
}


@pytest.mark.parametrize("change", CHANGES)
def test_each_read_the_fingerprint_covers_makes_the_upgrade_stale(
    change, acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture, agents)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    make, words = CHANGES[change]
    make(acme, owner, agents)
    # The narrow read still sees what the whole read sees, and it differs from the plan's.
    assert as_stored(narrow(plan)) == as_stored(full(plan)) != plan.reads
    plan = approve_and_apply(plan, owner, capture)
    assert plan.status == Plan.State.STALE
    assert words in plan.error
    assert Installation.objects.get().bundle_version == demo_catalog["2.1.0"]


def test_an_attachment_to_a_chosen_agent_makes_the_install_stale(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    local = skill_create(workspace=acme, slug="our-notes", actor=owner, name="Notes",
                         short_description="Ours", body="Local text.")  # fmt: skip
    plan = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                       actor=owner, agents=agents)  # fmt: skip
    AgentSkill.objects.create(agent=agents[0], skill=local)
    assert as_stored(narrow(plan)) == as_stored(full(plan)) != plan.reads
    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.STALE
    assert "the agents' skills changed" in plan.error
    assert not Installation.objects.exists()


def test_a_change_outside_what_the_plan_depends_on_leaves_it_applicable(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    plan = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                       actor=owner, agents=agents)  # fmt: skip
    skill_create(workspace=acme, slug="unrelated", actor=owner, name="Unrelated",
                 short_description="Ours", body="Local text.")  # fmt: skip
    assert as_stored(narrow(plan)) == plan.reads
    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
