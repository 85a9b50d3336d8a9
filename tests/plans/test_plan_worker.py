"""Real Celery workers on Redis apply approved plans, exactly once even when killed."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from catalog.models import Installation, Plan
from catalog.services.plans import plan_approve, plan_create
from pixie.celery import app as celery_app
from tests.plans.digest import workspace_digest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgres_only")]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def queue(redis_url):
    """A queue of this test's own on the real broker, so no other message reaches it."""
    name = f"pixie-test-{uuid.uuid4().hex[:8]}"
    previous = {
        key: celery_app.conf[key]
        for key in ("broker_url", "task_always_eager", "task_default_queue")
    }
    celery_app.conf.update(broker_url=redis_url, task_always_eager=False, task_default_queue=name)
    forget_connections()
    yield name
    celery_app.conf.update(previous)
    forget_connections()


def forget_connections():
    """Drop pooled connections so the next send uses the broker configured now
    (what Celery itself does after a fork)."""
    celery_app._pool = None
    if "amqp" in celery_app.__dict__:
        celery_app.amqp._producer_pool = None


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def status_of(plan):
    return Plan.objects.values_list("status", flat=True).get(pk=plan.pk)


def test_a_real_worker_applies_an_approved_plan(acme, owner, demo_catalog, queue):
    from celery.contrib.testing.worker import start_worker

    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        plan_approve(plan=plan, actor=owner)
        wait_for(lambda: status_of(plan) == "applied", 60, "the worker to apply the plan")
    assert Installation.objects.count() == 1


def database_url() -> str:
    settings = connection.settings_dict
    host = settings["HOST"] or "127.0.0.1"
    port = settings["PORT"] or 5432
    password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
    return f"postgres://{settings['USER']}{password}@{host}:{port}/{settings['NAME']}"


def start_worker_process(redis_url, queue, **extra_env):
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "CELERY_UNACKED_RESTORE_THROTTLE": "1",
        **extra_env,
    }
    command = [
        sys.executable, "-m", "celery", "-A", "pixie", "worker", "-P", "solo", "-Q", queue,
        "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info",
    ]  # fmt: skip
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


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
        for process in (first, second):
            if process and process.poll() is None:
                process.kill()
                process.wait(timeout=30)
    assert Installation.objects.count() == 1
    from reversion.models import Revision

    assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1
