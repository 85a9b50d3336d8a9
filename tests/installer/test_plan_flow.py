"""Owners install, upgrade and uninstall bundles through plans they approve."""

import pytest
from reversion.models import Version

from agents.models import AgentSkill
from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from egress.models import CredentialRequirement, EgressRule
from pixie.core.errors import PermissionRefused, StateError, ValidationFailed
from pixie.installer.plans import plan_create
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db

AR_SKILLS = ["ar-ground-rules", "invoice-chase", "take-payment", "apply-credit-note"]


def steps_of(plan, kind):
    return [s for s in plan.steps if s["type"] == kind]


def test_an_install_plan_lists_every_effect_and_changes_nothing_yet(
    acme, owner, agents, demo_catalog
):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
        agents=agents,
    )  # fmt: skip
    assert plan.status == Plan.State.PROPOSED
    assert [s["slug"] for s in steps_of(plan, "skill.create")] == AR_SKILLS
    assert steps_of(plan, "egress.add")[0]["host"] == "ledger.example.com"
    (credential,) = steps_of(plan, "credential.require")
    assert (credential["name"], credential["confirmed"]) == ("LEDGER_API_TOKEN", False)
    operations = {s["operation"] for s in steps_of(plan, "approval.rule")}
    assert operations == {"take-payment", "apply-credit-note"}
    assert [s["agent"] for s in steps_of(plan, "agent.attach")] == [
        "Collections agent",
        "Front desk agent",
    ]
    assert plan.expands_reach is True
    assert plan.summary.startswith("Expands reach: adds 1 host and 1 credential")
    assert not WorkspaceSkill.objects.exists() and not EgressRule.objects.exists()


def test_approving_applies_the_whole_install(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    plan = install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    assert plan.status == Plan.State.APPLIED, plan.error
    assert list(WorkspaceSkill.objects.order_by("pk").values_list("slug", flat=True)) == AR_SKILLS
    rule = EgressRule.objects.get()
    assert (rule.host, rule.approved_by, rule.plan) == ("ledger.example.com", owner, plan)
    assert CredentialRequirement.objects.get().name == "LEDGER_API_TOKEN"
    for agent in agents:
        attached = AgentSkill.objects.filter(agent=agent).order_by("position")
        assert [a.skill.slug for a in attached] == AR_SKILLS
        assert all(a.pinned_revision_id == a.skill.head_id for a in attached)
    revision = Version.objects.get_for_object(Installation.objects.get()).first().revision
    assert (revision.user, revision.comment) == (owner, f"Applied plan #{plan.pk}")


def test_upgrade_reports_the_fork_new_host_and_credential(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    skill_edit(
        skill=chase, actor=owner, body=chase.head.body + "\n\nAlways copy the account manager."
    )
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    (fork,) = steps_of(plan, "skill.fork")
    assert fork["slug"] == "invoice-chase" and fork["choice"] == "keep"
    assert set(fork["choices"]) <= {"keep", "take", "merge"}
    assert [s["slug"] for s in steps_of(plan, "skill.create")] == ["payment-plan"]
    assert {s["slug"] for s in steps_of(plan, "skill.unchanged")} == {
        "ar-ground-rules",
        "take-payment",
        "apply-credit-note",
    }
    assert [s["host"] for s in steps_of(plan, "egress.add")] == ["payments.example.com"]
    new_credentials = [s["name"] for s in steps_of(plan, "credential.require") if s["new"]]
    assert new_credentials == ["PAYMENTS_API_KEY"]
    assert plan.expands_reach is True
    assert "keeps 1 fork" in plan.summary
    # The fork is kept, so no pinned revision is replaced yet.
    assert steps_of(plan, "agent.pinned") == []


def test_upgrade_lists_agents_pinned_to_replaced_revisions_and_followers(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    AgentSkill.objects.filter(agent=agents[1], skill__slug="invoice-chase").update(
        pinned_revision=None
    )
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    assert [(s["agent"], s["slug"], s["revision"]) for s in steps_of(plan, "agent.pinned")] == [
        ("Collections agent", "invoice-chase", 1)
    ]
    assert [(s["agent"], s["slug"]) for s in steps_of(plan, "agent.follows")] == [
        ("Front desk agent", "invoice-chase")
    ]


@pytest.mark.parametrize("choice", ["keep", "take", "merge"])
def test_each_fork_choice_applies_as_chosen(
    choice, acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    mine = chase.head.body + "\n\nAlways copy the account manager."
    skill_edit(skill=chase, actor=owner, body=mine)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner,
        fork_choices={"invoice-chase": choice},
    )  # fmt: skip
    fork = steps_of(plan, "skill.fork")[0]
    assert "merge" in fork["choices"], fork["merge_text"]
    # Its reason speaks of the choice made, not of keeping yours whatever was chosen.
    outcome = {"keep": "is kept unless", "take": "replaces yours", "merge": "are merged"}
    assert outcome[choice] in fork["reason"], fork["reason"]
    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
    chase.refresh_from_db()
    new_body = demo_catalog["2.2.0"].skills.get(skill_version__package__slug="invoice-chase")
    new_body = new_body.skill_version.body
    expected = {"keep": mine, "take": new_body, "merge": fork["merged_body"]}[choice]
    assert chase.head.body == expected
    if choice == "merge":
        assert "Always copy the account manager." in expected and "@payment-plan" in expected
    assert chase.revisions.filter(body=mine).exists()  # mine stays in history
    assert Installation.objects.get().bundle_version == demo_catalog["2.2.0"]


def test_uninstall_archives_skills_and_reinstall_revives_them(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    plan = plan_create(
        workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    assert {s["slug"] for s in steps_of(plan, "skill.remove")} == set(AR_SKILLS)
    assert [s["host"] for s in steps_of(plan, "egress.remove")] == ["ledger.example.com"]
    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
    assert not Installation.objects.exists()
    assert not AgentSkill.objects.exists()
    assert not EgressRule.objects.exists()
    assert WorkspaceSkill.objects.filter(archived_at__isnull=False).count() == 4

    again = install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    assert again.status == Plan.State.APPLIED, again.error
    assert WorkspaceSkill.objects.count() == 4
    assert not WorkspaceSkill.objects.filter(archived_at__isnull=False).exists()


def test_a_hand_written_rule_survives_uninstall(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    EgressRule.objects.create(
        workspace=acme, host="ledger.example.com", port=443, approved_by=owner,
        approved_at=timezone.now(),
    )  # fmt: skip
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    plan = plan_create(
        workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    assert steps_of(plan, "egress.remove") == []
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert EgressRule.objects.filter(host="ledger.example.com").exists()


def test_an_incoming_skill_is_reslugged_around_a_local_one_and_mentions_follow(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    from catalog.services.workspace_skills import skill_create

    skill_create(
        workspace=acme, slug="take-payment", name="Our own payments", short_description="Ours.",
        body="Our way.", actor=owner,
    )  # fmt: skip
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    (reslug,) = steps_of(plan, "skill.reslug")
    assert (reslug["from"], reslug["to"]) == ("take-payment", "take-a-payment")
    chase = next(s for s in steps_of(plan, "skill.create") if s["slug"] == "invoice-chase")
    assert "@take-a-payment" in chase["body"] and "@take-payment" not in chase["body"]
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert WorkspaceSkill.objects.get(slug="take-payment").head.body == "Our way."


def test_refusals_name_the_problem_and_create_no_plan(
    acme, owner, member, demo_catalog, django_capture_on_commit_callbacks
):
    from catalog.services import bundle_version_yank

    with pytest.raises(PermissionRefused):
        plan_create(
            workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=member
        )
    with pytest.raises(ValidationFailed, match="not installed"):
        plan_create(
            workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
        )
    bundle_version_yank(bundle_version=demo_catalog["2.2.0"], actor=owner, reason="Broken")
    with pytest.raises(ValidationFailed, match="yanked"):
        plan_create(
            workspace=acme, kind="install", bundle_version=demo_catalog["2.2.0"], actor=owner
        )
    with pytest.raises(ValidationFailed, match="merge, not a choice|must be keep"):
        plan_create(
            workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
            fork_choices={"invoice-chase": "overwrite"},
        )  # fmt: skip
    assert not Plan.objects.exists()


def test_a_second_approval_is_refused_and_a_member_cannot_approve(
    acme, owner, member, demo_catalog, django_capture_on_commit_callbacks
):
    from pixie.installer.plans import plan_approve

    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    with pytest.raises(PermissionRefused):
        plan_approve(plan=plan, actor=member)
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    with pytest.raises(StateError, match="already applied"):
        plan_approve(plan=plan, actor=owner)


def test_a_skill_edited_between_plan_and_apply_makes_the_plan_stale(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body="Rewritten after the plan.")
    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.STALE
    assert "skill @invoice-chase changed after it was computed" in plan.error
    assert Installation.objects.get().bundle_version == demo_catalog["2.1.0"]
    assert not WorkspaceSkill.objects.filter(slug="payment-plan").exists()


def test_a_newer_plan_supersedes_the_proposed_one(acme, owner, demo_catalog):
    first = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.2.0"], actor=owner)
    first.refresh_from_db()
    assert first.status == Plan.State.SUPERSEDED
