"""Repoint throughput next to one raw SQL UPDATE of the same rows, as a ratio.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf \
        .venv/bin/python benchmarks/repoint.py [AGENTS ...]

For each AGENTS (default 1,000, 10,000 and 30,000), seeds that many agents x 10
skills pinned to revision 1, then times (a) the repoint apply (chunks of CHUNK rows
under the workspace lock, with progress and one history entry per chunk) and
(b) a single UPDATE moving the same rows, after putting them back; ROUNDS rounds,
the best of each kept. Every timing starts from the same state: the table packed
(no dead rows of the other run), fresh statistics, a checkpoint just before. Runs
in one process; no broker. Prints a Markdown section.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402

from agents.models import AgentSkill  # noqa: E402
from benchmarks.fleet import make_fleet  # noqa: E402
from catalog.models import Plan  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402
from pixie.installer.repoint import CHUNK, repoint_create  # noqa: E402
from pixie.installer.run import plan_run  # noqa: E402

ROUNDS = 2  # each figure the best of this many, the two timed alternately
RAW_UPDATE = """
    UPDATE agents_agentskill AS a SET pinned_revision_id = new.id
    FROM catalog_skillrevision AS old
    JOIN catalog_skillrevision AS new ON new.skill_id = old.skill_id AND new.number = 2
    WHERE a.pinned_revision_id = old.id AND old.number = 1
"""
PUT_BACK = """
    UPDATE agents_agentskill AS a SET pinned_revision_id = old.id
    FROM catalog_skillrevision AS new
    JOIN catalog_skillrevision AS old ON old.skill_id = new.skill_id AND old.number = 1
    WHERE a.pinned_revision_id = new.id AND new.number = 2
"""


def settle():
    """The same start for every timing: without it the raw UPDATE met a table holding the
    repoint's and the put-back's dead rows (and a checkpoint could fall in either run)."""
    with connection.cursor() as cursor:
        cursor.execute("VACUUM FULL agents_agentskill")
        cursor.execute("ANALYZE agents_agentskill")
        cursor.execute("CHECKPOINT")


def measure(agents: int, owner) -> tuple[int, float, float]:
    """(attachments, repoint seconds, raw UPDATE seconds) for a fresh fleet of ``agents``."""
    workspace = Workspace.objects.create(slug=f"fleet-{agents}", name="Fleet")
    Membership.objects.create(workspace=workspace, user=owner, role="owner")
    make_fleet(workspace, agents=agents, skills=10, actor=owner)
    fleet = AgentSkill.objects.filter(agent__workspace=workspace)
    rows = fleet.count()
    repoint_times, raw_times = [], []
    for _ in range(ROUNDS):
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        plan = repoint_create(workspace=workspace, actor=owner)
        Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)
        settle()
        started = time.perf_counter()
        assert plan_run(plan_id=plan.pk) == "applied"
        repoint_times.append(time.perf_counter() - started)
        assert fleet.filter(pinned_revision__number=2).count() == rows

        with connection.cursor() as cursor:
            cursor.execute(PUT_BACK)
        settle()
        with connection.cursor() as cursor:
            started = time.perf_counter()
            cursor.execute(RAW_UPDATE)
            moved = cursor.rowcount
            raw_times.append(time.perf_counter() - started)
            assert moved == rows, moved
            cursor.execute(PUT_BACK)  # the next round's repoint starts behind again
    fleet.delete()  # the next size starts clean
    return rows, min(repoint_times), min(raw_times)


def main(sizes: list[int]):
    owner = get_user_model().objects.create_user("bench-owner")
    print("## Repoint\n")
    print("Agents x 10 skills pinned to revision 1, moved to revision 2 by the repoint apply")
    print(f"(chunks of {CHUNK:,} under the workspace lock, each with its progress and one")
    print("history entry), next to one raw SQL `UPDATE` of the same rows timed in the same")
    print("run, each from the table packed and checkpointed; the best of")
    print(f"{ROUNDS} rounds of each, timed alternately.\n")
    print("| attachments | repoint s | attachments/s | raw UPDATE s | attachments/s | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for agents in sizes:
        rows, repoint_seconds, raw_seconds = measure(agents, owner)
        repoint_rate, raw_rate = rows / repoint_seconds, rows / raw_seconds
        print(
            f"| {rows:,} | {repoint_seconds:.2f} | {repoint_rate:,.0f} | {raw_seconds:.2f} "
            f"| {raw_rate:,.0f} | {repoint_rate / raw_rate:.0%} |"
        )
    record(
        "Repoint: at least 70% of the raw UPDATE's rate",
        f"{rows:,} attachments at {repoint_rate / raw_rate:.0%} of the raw UPDATE's rate",
        repoint_rate / raw_rate >= 0.7,
    )
    print()


if __name__ == "__main__":
    try:
        main([int(a) for a in sys.argv[1:]] or [1_000, 10_000, 30_000])
    finally:
        teardown()
