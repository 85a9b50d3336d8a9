"""Loading, publishing and installing a bundle of 20 skills with 200 supporting files
(50 MiB), next to a reference doing comparable work in the same run: reading the same
files, hashing their bytes with sha256 and bulk-inserting them in one transaction.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/skill_files.py

Prints a Markdown section (scripts/perf collects it into docs/PERFORMANCE.md).
"""

import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bundle_files import FILES_PER_SKILL, SKILLS, TOTAL_BYTES, write_bundle  # noqa: E402
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402

from catalog.bundle_files import read_bundle_folder  # noqa: E402
from catalog.models import Plan  # noqa: E402
from catalog.services.bundle_load import bundle_load  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402
from pixie.installer.plan_apply import plan_apply  # noqa: E402
from pixie.installer.plans import plan_approve, plan_create  # noqa: E402

# Each load is timed next to its own reference and the ratio is the median of the runs'
# ratios: on a shared machine, a burst of other work moves a pair together more than it
# moves one run against another.
RUNS = 5


INSERT = "INSERT INTO bench_blob VALUES (%s, %s, %s)"


def reference(root: Path) -> float:
    """Read every file, sha256 it, bulk-insert (digest, size, bytes) in one transaction."""
    started = time.perf_counter()
    rows = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            rows.append((hashlib.sha256(data).hexdigest(), len(data), data))
    # The bytes bound as the load binds them: Django's cursor, which binds them on the
    # server (as binary) on PostgreSQL with server_side_binding (settings).
    binary = connection.vendor == "postgresql"
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                # A table as the load's is (logged: its bytes go through the WAL too).
                "CREATE TABLE IF NOT EXISTS bench_blob "
                "(sha256 varchar(64) PRIMARY KEY, size bigint, content bytea)"
                if binary
                else "CREATE TABLE IF NOT EXISTS bench_blob "
                "(sha256 varchar(64) PRIMARY KEY, size bigint, content blob)"
            )
            cursor.execute("DELETE FROM bench_blob")
        with connection.cursor() as cursor:
            cursor.executemany(INSERT, rows)
    return time.perf_counter() - started


def main():
    owner = get_user_model().objects.create_user("bench-owner")
    workspace = Workspace.objects.create(slug="bench", name="Bench")
    Membership.objects.create(workspace=workspace, user=owner, role="owner")
    loads, refs, installs = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(RUNS):
            root = write_bundle(Path(tmp) / f"run-{run}", run)
            refs.append(reference(root))
            started = time.perf_counter()
            spec = read_bundle_folder(root)
            result = bundle_load(spec=spec, actor=owner, publish=True)
            loads.append(time.perf_counter() - started)
            started = time.perf_counter()
            plan = plan_create(
                workspace=workspace, kind=Plan.Kind.INSTALL, actor=owner,
                bundle_version=result.bundle_version,
            )  # fmt: skip
            plan_approve(plan=plan, actor=owner)
            assert plan_apply(plan_id=plan.pk) == Plan.State.APPLIED
            installs.append(time.perf_counter() - started)
    load, ref, install = (statistics.median(x) for x in (loads, refs, installs))
    ratio = statistics.median(a / b for a, b in zip(loads, refs, strict=True))
    print("## Skill folders: load, publish and install with supporting files\n")
    print(f"{connection.vendor}; median of {RUNS} runs, each of fresh random bytes. A bundle of")
    print(f"{SKILLS} skills with {SKILLS * FILES_PER_SKILL} supporting files, "
          f"{TOTAL_BYTES // 2**20} MiB in all (text references and binary assets).")  # fmt: skip
    print("The reference reads the same files, hashes them with sha256 and bulk-inserts")
    print("(digest, size, bytes) rows into a table in one transaction, the bytes bound as")
    print("the load binds them (binary, on PostgreSQL), timed in the same run; the ratio is")
    print("the median of each run's load over its own reference.\n")
    print("| step | ms | reference ms | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| read, validate, load and publish | {load * 1000:.0f} | {ref * 1000:.0f} | "
          f"{ratio:.2f}x |")  # fmt: skip
    print(f"| install plan: create, approve, apply | {install * 1000:.0f} | | |")
    print()
    record(
        "Load and publish 20 skills with 200 files (50 MiB) <= 3x hashing and bulk insert",
        f"{load * 1000:.0f} ms vs {ref * 1000:.0f} ms: {ratio:.2f}x",
        ratio <= 3,
    )


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
