"""A repoint of 100,000 attachments on a real worker: progress while it runs, and a kill
mid-way that the restarted worker finishes with every attachment moved exactly once."""

import re
import signal

import pytest
from rest_framework.test import APIClient
from reversion.models import Revision

from agents.models import AgentSkill
from benchmarks.fleet import make_fleet
from catalog.models import Plan
from pixie.installer.plans import plan_approve
from pixie.installer.repoint import CHUNK, repoint_create
from tests.workers import start_worker_process, stop, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgres_only")]

AGENTS, SKILLS = 10_000, 10


@pytest.mark.slow  # a worker killed mid-task: fault injection
def test_repoint_of_100k_attachments_survives_a_killed_worker(
    acme, owner, queue, redis_url, tmp_path
):
    _, old, new = make_fleet(acme, agents=AGENTS, skills=SKILLS, actor=owner)
    total = AGENTS * SKILLS
    plan = repoint_create(workspace=acme, actor=owner)
    assert plan.progress_total == total
    api = APIClient()
    api.force_authenticate(owner)

    def progress():
        return api.get(f"/api/workspaces/acme/plans/{plan.pk}/").json()["progress"]

    # The first worker stops dead at its 40th chunk (of 50), and is killed there.
    log = tmp_path / "worker.log"
    first = start_worker_process(redis_url, queue, log, PIXIE_PAUSE_AT="repoint.chunk.40=300")
    second = None
    try:
        plan_approve(plan=plan, actor=owner)
        done = 39 * CHUNK
        seen = wait_for(lambda: (p := progress())["done"] >= done and p, 240, "39 chunks")
        assert 0 < seen["done"] < total and seen["total"] == total
        assert seen["rate_per_second"] and seen["seconds_left"] is not None
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        plan.refresh_from_db()
        assert plan.status == Plan.State.APPLYING
        moved = AgentSkill.objects.filter(pinned_revision__in=new).count()
        assert moved == plan.progress_done  # each chunk moved and counted together, or not at all

        second = start_worker_process(redis_url, queue, log)
        wait_for(
            lambda: Plan.objects.get(pk=plan.pk).status == Plan.State.APPLIED,
            300,
            "the restarted worker to finish",
        )
    finally:
        stop(first, second)
        print(log.read_text()[-4000:] if log.exists() else "no worker log")
    plan.refresh_from_db()
    assert plan.progress_done == total
    assert AgentSkill.objects.filter(pinned_revision__in=new).count() == total
    assert not AgentSkill.objects.filter(pinned_revision__in=old).exists()
    chunk_comments = Revision.objects.filter(
        comment__startswith=f"Repoint plan #{plan.pk}:"
    ).values_list("comment", flat=True)
    assert sum(int(re.search(r"moved (\d+)", c).group(1)) for c in chunk_comments) == total
