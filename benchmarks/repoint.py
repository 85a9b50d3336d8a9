"""Repoint throughput next to one raw SQL UPDATE of the same rows, as a ratio.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
        .venv/bin/python benchmarks/repoint.py [AGENTS]

Seeds AGENTS agents (default 10,000) x 10 skills pinned to revision 1, then
times (a) the repoint apply (chunks of 1,000 under the workspace lock, with
progress and one history entry per chunk) and (b) a single UPDATE moving the
same rows, after putting them back. Runs in one process; no broker.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402

from agents.fleet import make_fleet  # noqa: E402
from agents.models import AgentSkill  # noqa: E402
from catalog.models import Plan  # noqa: E402
from catalog.services.plan_apply import plan_apply  # noqa: E402
from catalog.services.repoint import repoint_create  # noqa: E402
from pixie.models import Membership, Workspace  # noqa: E402

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


def main(agents: int):
    owner = get_user_model().objects.create_user("bench-owner")
    workspace = Workspace.objects.create(slug="fleet", name="Fleet")
    Membership.objects.create(workspace=workspace, user=owner, role="owner")
    started = time.perf_counter()
    make_fleet(workspace, agents=agents, skills=10, actor=owner)
    rows = AgentSkill.objects.count()
    print(f"database: {connection.vendor}; seeded {rows:,} attachments in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip

    plan = repoint_create(workspace=workspace, actor=owner)
    Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)
    started = time.perf_counter()
    assert plan_apply(plan_id=plan.pk) == "applied"
    repoint_seconds = time.perf_counter() - started

    with connection.cursor() as cursor:
        cursor.execute(PUT_BACK)
        started = time.perf_counter()
        cursor.execute(RAW_UPDATE)
        moved = cursor.rowcount
        raw_seconds = time.perf_counter() - started
    assert moved == rows, moved
    repoint_rate, raw_rate = rows / repoint_seconds, rows / raw_seconds
    print("| what | seconds | attachments/s |")
    print("| --- | ---: | ---: |")
    print(f"| repoint apply (chunks of 1,000) | {repoint_seconds:.2f} | {repoint_rate:,.0f} |")
    print(f"| one raw SQL UPDATE | {raw_seconds:.2f} | {raw_rate:,.0f} |")
    print(f"ratio: repoint runs at {repoint_rate / raw_rate:.0%} of the raw UPDATE's rate")


if __name__ == "__main__":
    try:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
    finally:
        teardown()
