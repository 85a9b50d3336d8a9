"""An apply that fails at any step leaves the workspace exactly as it was."""

import pytest

from catalog.models import Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.installer.plan_apply import APPLY_FAILPOINTS, plan_apply
from pixie.installer.plans import plan_create
from tests.installer.digest import workspace_digest
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db


def upgrade_with_fork(acme, owner, demo_catalog, capture):
    install(acme, demo_catalog["2.1.0"], owner, capture)
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\nCopy the account manager.")
    return plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner,
        fork_choices={"invoice-chase": "take"},
    )  # fmt: skip


def fresh_install(acme, owner, demo_catalog, agents):
    return plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
        agents=agents,
    )  # fmt: skip


@pytest.mark.parametrize("failpoint", APPLY_FAILPOINTS)
@pytest.mark.parametrize("scenario", ["install", "upgrade"])
def test_a_failure_at_any_step_leaves_nothing_and_a_new_plan_applies(
    scenario, failpoint, acme, owner, agents, demo_catalog, settings,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    capture = django_capture_on_commit_callbacks
    if scenario == "install":
        plan = fresh_install(acme, owner, demo_catalog, agents)
    else:
        plan = upgrade_with_fork(acme, owner, demo_catalog, capture)
    before = workspace_digest()

    settings.PIXIE_FAILPOINTS = {failpoint}
    plan = approve_and_apply(plan, owner, capture)
    assert plan.status == Plan.State.FAILED
    assert plan.error == (
        f"Plan #{plan.pk} could not be applied: injected fault at {failpoint}. "
        "Nothing was changed; create a new plan."
    )
    assert workspace_digest() == before

    settings.PIXIE_FAILPOINTS = set()
    assert plan_apply(plan_id=plan.pk) == Plan.State.FAILED  # a failed plan stays failed
    retry = plan_create(
        workspace=acme, kind=plan.kind, bundle_version=plan.bundle_version, actor=owner,
        agents=plan.options["agents"], fork_choices=plan.options["fork_choices"],
    )  # fmt: skip
    retry = approve_and_apply(retry, owner, capture)
    assert retry.status == Plan.State.APPLIED, retry.error
    assert workspace_digest() != before


def test_applying_twice_changes_nothing_the_second_time(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    plan = fresh_install(acme, owner, demo_catalog, agents)
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    after = workspace_digest()
    assert plan_apply(plan_id=plan.pk) == Plan.State.APPLIED
    assert workspace_digest() == after


def test_an_approved_plan_whose_task_was_lost_is_applied_by_the_recovery_sweep(
    acme, owner, agents, demo_catalog, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from pixie.installer.tasks import recover_stuck_plans

    plan = fresh_install(acme, owner, demo_catalog, agents)
    # Approved, but the broker lost the message (Redis restarted without persistence).
    Plan.objects.filter(pk=plan.pk).update(
        status="approved", decided_by=owner, decided_at=timezone.now() - timedelta(minutes=30)
    )
    settings.PIXIE_PLAN_STUCK_AFTER = 600
    assert recover_stuck_plans() == [plan.pk]
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED
    assert recover_stuck_plans() == []  # nothing stuck, nothing queued twice


def test_a_recent_approval_is_left_to_its_own_task(acme, owner, agents, demo_catalog):
    from pixie.installer.tasks import recover_stuck_plans

    plan = fresh_install(acme, owner, demo_catalog, agents)
    from django.utils import timezone

    Plan.objects.filter(pk=plan.pk).update(
        status="approved", decided_by=owner, decided_at=timezone.now()
    )
    assert recover_stuck_plans() == []


def test_a_database_that_stays_unreachable_fails_the_plan_in_words(
    acme, owner, agents, demo_catalog, monkeypatch
):
    from django.db import OperationalError
    from django.utils import timezone

    from pixie.installer import tasks

    plan = fresh_install(acme, owner, demo_catalog, agents)
    Plan.objects.filter(pk=plan.pk).update(
        status="approved", decided_by=owner, decided_at=timezone.now()
    )
    before = workspace_digest()

    def unreachable(*, plan_id):
        raise OperationalError('connection to server at "10.0.0.5", port 5432 failed')

    monkeypatch.setattr(tasks, "plan_run", unreachable)
    with pytest.raises(OperationalError):  # the last of the task's retries
        tasks.apply_plan.apply(args=[plan.pk], retries=tasks.apply_plan.max_retries)
    plan.refresh_from_db()
    assert plan.status == Plan.State.FAILED
    assert plan.error == (
        f"Plan #{plan.pk} could not be applied: the database stayed unreachable after "
        f"{tasks.apply_plan.max_retries + 1} attempts. Nothing was changed; create a new plan."
    )
    assert workspace_digest() == before
