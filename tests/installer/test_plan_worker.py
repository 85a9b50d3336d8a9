"""Real Celery workers on Redis apply approved plans, exactly once even when killed."""

import signal
import time

import pytest

from catalog.models import Installation, Plan
from pixie.celery import app as celery_app
from pixie.installer.plans import plan_approve, plan_create
from tests.installer.digest import workspace_digest
from tests.workers import start_worker_process, stop, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgres_only")]


def status_of(plan):
    return Plan.objects.values_list("status", flat=True).get(pk=plan.pk)


def test_a_real_worker_applies_an_approved_plan(acme, owner, demo_catalog, queue):
    from celery.contrib.testing.worker import start_worker

    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    with start_worker(
        celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, queues=[queue]
    ):
        plan_approve(plan=plan, actor=owner)
        wait_for(lambda: status_of(plan) == "applied", 60, "the worker to apply the plan")
    assert Installation.objects.count() == 1


@pytest.mark.slow  # a worker killed mid-task: fault injection
def test_a_worker_killed_mid_apply_leaves_nothing_and_the_plan_applies_once_after_restart(
    acme, owner, agents, demo_catalog, queue, redis_url
):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
        agents=agents,
    )  # fmt: skip
    before = workspace_digest()
    # The first worker stalls inside the apply's transaction, then is killed.
    first = start_worker_process(redis_url, queue, PIXIE_PAUSE_AT="plan.apply.agents=120")
    second = None
    try:
        plan_approve(plan=plan, actor=owner)
        wait_for(lambda: status_of(plan) == "applying", 60, "the worker to start applying")
        time.sleep(2)  # well inside the transaction, at the pause point
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        assert status_of(plan) == "applying"
        assert workspace_digest() == before  # nothing of the half-done apply is visible

        second = start_worker_process(redis_url, queue)
        wait_for(lambda: status_of(plan) == "applied", 90, "the restarted worker to apply")
    finally:
        stop(first, second)
    assert Installation.objects.count() == 1
    from reversion.models import Revision

    assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1
