"""Approvals and applies racing each other, with real threads and real transactions.

CI runs 3 rounds of 20 simultaneous approvals; PIXIE_HEAVY=1 runs 200."""

import os
import threading

import pytest
from django.db import connections
from reversion.models import Revision

from catalog.models import Installation, Plan
from pixie.core.errors import PixieError, StateError
from pixie.installer.plans import plan_approve, plan_create
from tests.factories import make_workspace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgres_only")]
ROUNDS = 200 if os.environ.get("PIXIE_HEAVY") == "1" else 3


def run_together(count, action):
    barrier = threading.Barrier(count)
    outcomes, lock = [], threading.Lock()

    def worker():
        try:
            barrier.wait(timeout=30)
            result = action()
        except StateError as exc:
            result = exc.code
        except Exception as exc:  # noqa: BLE001 - the test reports any other error
            result = f"error: {exc!r}"
        finally:
            connections.close_all()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=worker) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return outcomes


def approve(plan_id, owner):
    return plan_approve(plan=Plan.objects.get(pk=plan_id), actor=owner) and "approved"


def test_twenty_simultaneous_approvals_apply_the_plan_once(owner, demo_catalog, record_property):
    for number in range(ROUNDS):
        workspace = make_workspace(f"approvals-{number}", owner=owner)
        plan = plan_create(
            workspace=workspace, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
        )
        outcomes = run_together(20, lambda pk=plan.pk: approve(pk, owner))
        assert outcomes.count("approved") == 1, (number, outcomes)
        assert all(o == "approved" or o.startswith("already_") for o in outcomes), outcomes
        plan.refresh_from_db()
        assert plan.status == Plan.State.APPLIED, plan.error
        assert Installation.objects.filter(workspace=workspace).count() == 1
        assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1
    record_property("figure", f"{ROUNDS} rounds x 20 approvals: one apply per round")


def test_two_plans_for_one_installation_one_applies_the_other_is_stale(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    from pixie.installer.run import plan_run
    from tests.installer.flow import install

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    upgrade = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    # Setup: both approved, their tasks not yet run (as when two workers pick them up).
    Plan.objects.filter(pk=upgrade.pk).update(status="approved", decided_by=owner)
    uninstall = plan_create(
        workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    Plan.objects.filter(pk=uninstall.pk).update(status="approved", decided_by=owner)
    results = {}

    def apply(plan):
        try:
            results[plan.kind] = plan_run(plan_id=plan.pk)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=apply, args=(p,)) for p in (upgrade, uninstall)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results.values()) == ["applied", "stale"], results


def test_an_approval_racing_a_policy_change_is_judged_by_the_policy_that_commits_first(
    acme, owner, demo_catalog
):
    """An owner makes a second owner required while the asker approves their own plan:
    the approval waits for the change to commit and is then refused by it, rather than
    approve under the rules it read a moment before."""
    import time

    from django.db import connection, transaction

    from pixie.installer.policy import policy_update

    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    assert plan.expands_reach
    changed, release = threading.Event(), threading.Event()

    def change_policy():
        try:
            with transaction.atomic():  # the change holds the workspace until it commits
                policy_update(workspace=acme, actor=owner, changes={"second_owner": "required"})
                changed.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    changer = threading.Thread(target=change_policy)
    changer.start()
    assert changed.wait(timeout=30)
    outcomes = []

    def approve_own_plan():
        try:
            outcomes.append(approve(plan.pk, owner))
        except PixieError as exc:
            outcomes.append(exc.code)
        finally:
            connections.close_all()

    approver = threading.Thread(target=approve_own_plan)
    approver.start()
    # Until the approval waits on a lock (it never does if it reads the policy unlocked).
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not _waiting_on_a_lock(connection):
        time.sleep(0.05)
    release.set()
    changer.join(timeout=30)
    approver.join(timeout=60)
    assert outcomes == ["policy_second_owner"]
    plan.refresh_from_db()
    assert plan.status == Plan.State.PROPOSED


def _waiting_on_a_lock(connection) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()"
        )
        return cursor.fetchone()[0] > 0
