"""Faults under a real worker: the database connection dropped and Redis restarted while a
plan applies or a repoint runs. Every outcome is exactly once: nothing partial, nothing lost.

Each test runs its own Redis server (so restarting it disturbs nobody else) and a
`celery worker` subprocess that pauses at a named point (pixie/core/faults.py) while the test
breaks something underneath it. A run tries two apply points, picked by --fault-seed
(else PIXIE_FAULT_SEED, else 0: the same in every xdist worker, which must collect the
same tests; CI passes the day of the year, so the points it tries vary from day to day and
each run names its seed). PIXIE_HEAVY=1 tries all of them.
"""

import os
import random
import subprocess

import pytest
import redis
from django.db import connection
from reversion.models import Revision

from agents.models import AgentSkill
from benchmarks.fleet import make_fleet
from benchmarks.load import free_port, process_group
from catalog.models import Installation, Plan
from pixie.installer.plan_apply import APPLY_FAILPOINTS
from pixie.installer.plans import plan_approve, plan_create
from pixie.installer.repoint import CHUNK, repoint_create
from tests import suite
from tests.installer.digest import workspace_digest
from tests.workers import start_worker_process, stop, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("postgres_only"),
]

HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
SEED = suite.fault_seed()
APPLY_POINTS = list(APPLY_FAILPOINTS) if HEAVY else random.Random(SEED).sample(APPLY_FAILPOINTS, 2)
PAUSE = 4  # seconds a worker waits at the point while the test breaks something


class RedisServer:
    """A throwaway redis-server on a free port, kept nowhere on disk, restartable."""

    def __init__(self, workdir):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.workdir = workdir
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis.from_url(self.url)
        wait_for(lambda: _pings(client), 10, "redis-server to start")

    def restart(self):
        """SIGKILL and start again: everything queued or unacknowledged is gone."""
        self.process.kill()
        self.process.wait(timeout=10)
        self.start()

    def keys(self):
        return redis.Redis.from_url(self.url).dbsize()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def _pings(client):
    try:
        return client.ping()
    except redis.ConnectionError:
        return False


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server):
    """The `queue` fixture sends to this test's own Redis server."""
    return redis_server.url


@pytest.fixture
def worker_log(tmp_path):
    path = tmp_path / "worker.log"
    yield path
    print(path.read_text()[-6000:] if path.exists() else "no worker log")


def status_of(plan):
    return Plan.objects.values_list("status", flat=True).get(pk=plan.pk)


def worker_backend_in_transaction():
    """The pid of the worker's database session, paused inside its transaction (idle for
    a second: not the blink between two statements of a transaction that is running)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND state = 'idle in transaction' "
            "AND now() - state_change > interval '1 second'"
        )
        rows = cursor.fetchall()
    return rows[0][0] if len(rows) == 1 else None


def drop_connection(pid):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert cursor.fetchone()[0] is True


@pytest.mark.parametrize("point", APPLY_POINTS)
def test_a_database_connection_dropped_mid_apply_is_retried_and_applies_once(
    point, acme, owner, agents, demo_catalog, queue, redis_url, worker_log, record_property
):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
        agents=agents,
    )  # fmt: skip
    before = workspace_digest()
    worker = start_worker_process(redis_url, queue, worker_log, PIXIE_PAUSE_AT=f"{point}={PAUSE}")
    try:
        plan_approve(plan=plan, actor=owner)
        pid = wait_for(worker_backend_in_transaction, 60, f"the worker to pause at {point}")
        drop_connection(pid)
        assert workspace_digest() == before  # the half-done transaction died with it
        wait_for(lambda: status_of(plan) == "applied", 120, "the retried apply")
    finally:
        stop(worker)
    assert "Retry in" in worker_log.read_text()  # it was the task's retry that applied it
    assert Installation.objects.count() == 1
    assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1
    assert Plan.objects.get(pk=plan.pk).error == ""
    record_property("figure", f"dropped at {point} (PIXIE_FAULT_SEED={SEED}); applied once")


def test_redis_restarted_mid_apply_the_plan_applies_once_and_the_worker_carries_on(
    acme, owner, agents, demo_catalog, queue, redis_server, redis_url, worker_log
):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
        agents=agents,
    )  # fmt: skip
    worker = start_worker_process(
        redis_url, queue, worker_log, PIXIE_PAUSE_AT=f"plan.apply.agents={PAUSE}"
    )
    try:
        plan_approve(plan=plan, actor=owner)
        wait_for(worker_backend_in_transaction, 60, "the worker to pause mid-apply")
        redis_server.restart()  # the task's unacknowledged message is gone with it
        wait_for(lambda: status_of(plan) == "applied", 60, "the apply to finish")
        # The worker reconnected to the new Redis: the next plan is applied too.
        uninstall = plan_create(
            workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.1.0"], actor=owner
        )
        plan_approve(plan=uninstall, actor=owner)
        wait_for(lambda: status_of(uninstall) == "applied", 120, "the next plan")
    finally:
        stop(worker)
    assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1
    assert Installation.objects.count() == 0


def test_a_plan_whose_message_died_with_redis_is_applied_by_beat(
    acme, owner, demo_catalog, queue, redis_server, redis_url, worker_log, tmp_path
):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    plan_approve(plan=plan, actor=owner)  # queued; no worker is running yet
    assert redis_server.keys() > 0
    redis_server.restart()
    assert redis_server.keys() == 0  # the message is lost
    worker = start_worker_process(
        redis_url, queue, worker_log,
        args=("--beat", "--schedule", str(tmp_path / "beat-schedule")),
        PIXIE_RECOVER_EVERY="1", PIXIE_PLAN_STUCK_AFTER="1",
    )  # fmt: skip
    try:
        wait_for(lambda: status_of(plan) == "applied", 90, "beat to re-queue the plan")
    finally:
        stop(worker)
    assert process_group(worker.pid) == []  # beat, the worker's child, is gone too
    assert Installation.objects.count() == 1
    assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1


AGENTS, SKILLS = 1200, 10  # 12,000 attachments: chunks of CHUNK, by id across the skills
CHUNKS = -(-AGENTS * SKILLS // CHUNK)


def _fleet_repoint(acme, owner):
    _, old, new = make_fleet(acme, agents=AGENTS, skills=SKILLS, actor=owner)
    plan = repoint_create(workspace=acme, actor=owner)
    assert plan.progress_total == AGENTS * SKILLS
    return plan, new


def _chunk_revisions(plan):
    return Revision.objects.filter(comment__startswith=f"Repoint plan #{plan.pk}:").count()


def test_a_database_connection_dropped_mid_chunk_the_repoint_moves_each_row_once(
    acme, owner, queue, redis_url, worker_log
):
    plan, new = _fleet_repoint(acme, owner)
    worker = start_worker_process(
        redis_url, queue, worker_log, PIXIE_PAUSE_AT=f"repoint.chunk.4.moved={PAUSE}"
    )
    try:
        plan_approve(plan=plan, actor=owner)
        pid = wait_for(worker_backend_in_transaction, 60, "the worker to pause in chunk 4")
        drop_connection(pid)
        # Chunk 4's rows went back with its transaction; three chunks stay done.
        assert AgentSkill.objects.filter(pinned_revision__in=new).count() == 3 * CHUNK
        assert Plan.objects.get(pk=plan.pk).progress_done == 3 * CHUNK
        wait_for(lambda: status_of(plan) == "applied", 120, "the retried repoint")
    finally:
        stop(worker)
    assert "Retry in" in worker_log.read_text()
    assert AgentSkill.objects.filter(pinned_revision__in=new).count() == AGENTS * SKILLS
    assert Plan.objects.get(pk=plan.pk).progress_done == AGENTS * SKILLS
    assert _chunk_revisions(plan) == CHUNKS  # one history entry per chunk, none twice


def test_redis_restarted_mid_repoint_every_row_moves_once(
    acme, owner, queue, redis_server, redis_url, worker_log
):
    plan, new = _fleet_repoint(acme, owner)
    worker = start_worker_process(
        redis_url, queue, worker_log, PIXIE_PAUSE_AT=f"repoint.chunk.4.moved={PAUSE}"
    )
    try:
        plan_approve(plan=plan, actor=owner)
        wait_for(worker_backend_in_transaction, 60, "the worker to pause in chunk 4")
        redis_server.restart()
        wait_for(lambda: status_of(plan) == "applied", 120, "the repoint to finish")
    finally:
        stop(worker)
    assert AgentSkill.objects.filter(pinned_revision__in=new).count() == AGENTS * SKILLS
    assert Plan.objects.get(pk=plan.pk).progress_done == AGENTS * SKILLS
    assert _chunk_revisions(plan) == CHUNKS


def test_a_task_redelivered_after_the_visibility_timeout_does_nothing_the_second_time(
    acme, owner, demo_catalog, queue, redis_url, tmp_path
):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    # The first worker holds the task past the visibility timeout (3 s in tests), so
    # Redis hands the same message to the second worker while the first still applies.
    logs = tmp_path / "first.log", tmp_path / "second.log"
    first = start_worker_process(redis_url, queue, logs[0], PIXIE_PAUSE_AT="plan.apply.finish=8")
    second = None
    try:
        plan_approve(plan=plan, actor=owner)
        wait_for(worker_backend_in_transaction, 60, "the first worker to start applying")
        second = start_worker_process(redis_url, queue, logs[1])
        wait_for(lambda: "succeeded" in logs[1].read_text(), 60, "the redelivered copy")
        wait_for(lambda: status_of(plan) == "applied", 60, "the first apply")
    finally:
        stop(first, second)
    task_id = logs[0].read_text().split("apply_plan[", 1)[1].split("]", 1)[0]
    assert f"apply_plan[{task_id}] received" in logs[1].read_text()  # the same message
    assert Installation.objects.count() == 1
    assert Revision.objects.filter(comment=f"Applied plan #{plan.pk}").count() == 1
