"""Approvals and applies racing each other, with real threads and real transactions.

CI runs 3 rounds of 20 simultaneous approvals; PIXIE_HEAVY=1 runs 200."""

import os
import threading

import pytest
from django.db import connections
from reversion.models import Revision

from catalog.models import Installation, Plan
from pixie.errors import StateError
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
