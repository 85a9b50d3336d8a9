"""Plan creation and apply for bundles of 5 and 50 skills into workspaces of 1,000 to
1,000,000 skills, each next to a reference timed in the same run; each plan creation's
statements are explained to show none reads the workspace's skills sequentially.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/plans.py

Prints a Markdown section (scripts/perf collects it into docs/PERFORMANCE.md).
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from _seeds import seed_bundle, seed_workspace  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402
from django.db.models import Max  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from reversion.models import Revision, Version  # noqa: E402

from agents.models import AgentSkill  # noqa: E402
from catalog.models import (  # noqa: E402
    Installation,
    Plan,
    SkillRevision,
    WorkspaceSkill,
)
from egress.models import CredentialRequirement, EgressRule  # noqa: E402
from pixie.installer.plan_apply import plan_apply  # noqa: E402
from pixie.installer.plans import plan_create  # noqa: E402

WORKSPACE_SIZES = (1_000, 10_000, 100_000, 1_000_000)
if os.environ.get("PIXIE_BENCH_PLANS_NO_MILLION"):  # a quicker run, without the largest
    WORKSPACE_SIZES = WORKSPACE_SIZES[:-1]
# Tables as large as the workspace: a sequential scan of one reads every slug.
WORKSPACE_TABLES = {WorkspaceSkill._meta.db_table, SkillRevision._meta.db_table}
BUNDLE_SIZES = (5, 50)
RUNS = 5


def median_of(action, runs=RUNS):
    """Median seconds of ``action`` run inside a transaction rolled back each time."""
    samples = []
    for _ in range(runs):
        with transaction.atomic():
            started = time.perf_counter()
            action()
            samples.append(time.perf_counter() - started)
            transaction.set_rollback(True)
    return statistics.median(samples)


def medians_alternated(action, reference, runs=3 * RUNS):
    """Median seconds of ``action`` and of its ``reference``, run by turns (each in a
    transaction rolled back): on a shared machine a burst of load then slows both, not
    one side of the ratio."""
    samples: tuple[list, list] = ([], [])
    for _ in range(runs):
        for timed, samples_of in ((action, samples[0]), (reference, samples[1])):
            samples_of.append(median_of(timed, runs=1))
    return statistics.median(samples[0]), statistics.median(samples[1])


WRITTEN = (Installation, WorkspaceSkill, SkillRevision, EgressRule, CredentialRequirement,
           AgentSkill, Revision, Version)  # fmt: skip


def rows_written_by(action) -> dict:
    """Run ``action`` in a transaction rolled back afterwards; return the rows it inserted."""
    with transaction.atomic():
        before = {model: model.objects.aggregate(top=Max("pk"))["top"] or 0 for model in WRITTEN}
        action()
        written = {model: list(model.objects.filter(pk__gt=before[model])) for model in WRITTEN}
        transaction.set_rollback(True)
    return {model: rows for model, rows in written.items() if rows}


def bare_insert(written: dict) -> None:
    """The reference for apply: the very rows it inserted, bulk-inserted bare (the foreign
    keys are deferred, so order does not matter; they are checked before the end)."""
    for model, rows in written.items():
        model.objects.bulk_create(rows)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def namespace_read(workspace):
    """The reference for plan creation: one read of the workspace's slugs."""
    return list(WorkspaceSkill.objects.filter(workspace=workspace).values_list("slug", flat=True))


class Statements:
    """Every statement sent, with its parameters in place (to EXPLAIN it afterwards)."""

    def __init__(self):
        self.sql: list[str] = []

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not many:
            self.sql.append(connection.ops.last_executed_query(context["cursor"], sql, params))
        return result


def _seq_scanned(node: dict, found: set[str]) -> set[str]:
    if node["Node Type"] == "Seq Scan" and node.get("Relation Name") in WORKSPACE_TABLES:
        found.add(node["Relation Name"])
    for child in node.get("Plans", []):
        _seq_scanned(child, found)
    return found


def sequential_scans(statements: list[str]) -> set[str]:
    """The workspace-sized tables any of the SELECTs scans sequentially, as PostgreSQL
    plans them (EXPLAIN, on the data the statements saw)."""
    found: set[str] = set()
    for sql in statements:
        if not sql.lstrip().upper().startswith(("SELECT", "(SELECT")):
            continue
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
            [[plan]] = cursor.fetchall()
        plan = json.loads(plan) if isinstance(plan, str) else plan
        _seq_scanned(plan[0]["Plan"], found)
    return found


def main():
    owner = get_user_model().objects.create_user("bench-owner")
    versions = {size: seed_bundle(owner, size) for size in BUNDLE_SIZES}
    print("## Plans: creation and apply\n")
    print(f"PostgreSQL; median of {RUNS} runs, each in a transaction rolled back afterwards")
    print(f"(apply and its reference: {3 * RUNS} runs each, by turns).")
    print("Plan creation is compared with one read of the workspace's slugs; apply (install,")
    print("approved, under the workspace lock, with its history) with a bare bulk insert of")
    print("the very rows it wrote (installation, skills, revisions, history), captured from an")
    print("apply and inserted again by `bulk_create`. Both references are timed in the same run.\n")
    print("| workspace skills | bundle skills | plan create ms | queries | slug read ms "
          "| ratio | apply ms | queries | rows written | bare insert ms | ratio |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    most_queries = 0
    creates: dict[tuple[int, int], float] = {}
    counts: dict[tuple[int, int], int] = {}
    scanned: dict[int, set[str]] = {}
    seeded: dict[int, float] = {}
    for workspace_size in WORKSPACE_SIZES:
        started = time.perf_counter()
        workspace = seed_workspace(owner, workspace_size)
        seeded[workspace_size] = time.perf_counter() - started
        # The reference does not depend on the bundle: timed once a workspace.
        read = median_of(
            lambda workspace=workspace: namespace_read(workspace),
            runs=3 if workspace_size >= 1_000_000 else RUNS,  # seconds each at 1,000,000
        )
        scanned[workspace_size] = set()
        for size, version in versions.items():
            statements = Statements()
            with transaction.atomic():
                with (
                    connection.execute_wrapper(statements),
                    CaptureQueriesContext(connection) as create_queries,
                ):
                    plan_create(
                        workspace=workspace, kind="install", bundle_version=version, actor=owner
                    )
                # Explained on the data the statements saw, then rolled back.
                scanned[workspace_size] |= sequential_scans(statements.sql)
                transaction.set_rollback(True)
            plan = plan_create(
                workspace=workspace, kind="install", bundle_version=version, actor=owner
            )
            create = median_of(
                lambda version=version, workspace=workspace: plan_create(
                    workspace=workspace, kind="install", bundle_version=version, actor=owner
                )
            )
            creates[workspace_size, size] = create
            counts[workspace_size, size] = len(create_queries)
            Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)
            with transaction.atomic(), CaptureQueriesContext(connection) as apply_queries:
                outcome = plan_apply(plan_id=plan.pk)
                transaction.set_rollback(True)
            assert outcome == "applied", Plan.objects.get(pk=plan.pk).error
            written = rows_written_by(lambda plan=plan: plan_apply(plan_id=plan.pk))
            apply, insert = medians_alternated(
                lambda plan=plan: plan_apply(plan_id=plan.pk),
                lambda written=written: bare_insert(written),
            )
            rows = sum(len(r) for r in written.values())
            most_queries = max(most_queries, len(create_queries))
            if (workspace_size, size) == (10_000, 50):
                record(
                    "Apply of a 50-skill bundle: within 3x of a bare bulk insert",
                    f"{apply * 1000:.1f} ms vs {insert * 1000:.1f} ms: {apply / insert:.1f}x",
                    apply / insert <= 3,
                )
            print(
                f"| {workspace_size:,} | {size} | {create * 1000:.1f} | {len(create_queries)} "
                f"| {read * 1000:.1f} | {create / read:.1f}x | {apply * 1000:.1f} "
                f"| {len(apply_queries)} | {rows} | {insert * 1000:.1f} | {apply / insert:.1f}x |"
            )
    print()
    print("Plan creation's statements, explained at each size: sequential scans of the "
          "workspace's skills or revisions (a read of every slug; on tables of about 1,000 "
          "rows a sequential scan is the planner's cheaper choice, not a cost):")  # fmt: skip
    for workspace_size in WORKSPACE_SIZES:
        tables = ", ".join(sorted(scanned[workspace_size])) or "none"
        print(f"{workspace_size:,} skills (seeded in {seeded[workspace_size]:.1f} s): {tables}.")
    record(
        "Plan creation: at most 22 queries, whatever the sizes",
        f"at most {most_queries} queries (5 and 50 skills, 1,000 to "
        f"{WORKSPACE_SIZES[-1]:,} in the workspace)",
        most_queries <= 22,
    )
    small, large = creates[1_000, 50], creates[100_000, 50]
    record(
        "Plan creation is flat in the workspace's size: a 50-skill plan at 100,000 skills "
        "within 1.5x of the same plan at 1,000",
        f"{large * 1000:.1f} ms vs {small * 1000:.1f} ms: {large / small:.2f}x",
        large / small <= 1.5,
    )
    if 1_000_000 in WORKSPACE_SIZES:
        million = creates[1_000_000, 50]
        record(
            "Plan creation at 1,000,000 skills in one workspace: no statement reads every slug "
            "(no sequential scan of its skills)",
            f"50 skills: {million * 1000:.1f} ms, {counts[1_000_000, 50]} queries, "
            f"{million / small:.2f}x the same plan at 1,000; sequential scans: "
            f"{', '.join(sorted(scanned[1_000_000])) or 'none'}",
            not scanned[1_000_000],
        )
    print()


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
