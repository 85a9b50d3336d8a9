"""How fast bench_seed fills PostgreSQL, at a few sizes, as a Markdown section.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/seed.py

Each size is seeded under its own prefix into one throwaway test database; the
largest writes about 1,500,000 rows (1,000,000 agent attachments).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from benchmarks.bench_data import SeedSizes, seed  # noqa: E402

SIZES = [
    # workspaces, skills per workspace, agents per workspace, skills per agent, bundles
    (10, 1_000, 100, 10, 1_000),
    (100, 1_000, 100, 100, 10_000),
]


def main():
    print("## Data generator (`manage.py bench_seed`)\n")
    print("One transaction per seed, COPY into each table, then ANALYZE; timed end to end.\n")
    print("| workspaces | skills | agents | attachments | bundles | rows in all | seconds "
          "| rows/s |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for number, (workspaces, skills, agents, per_agent, bundles) in enumerate(SIZES):
        sizes = SeedSizes(
            workspaces=workspaces,
            skills_per_workspace=skills,
            agents_per_workspace=agents,
            skills_per_agent=per_agent,
            bundles=bundles,
        )
        result = seed(sizes=sizes, prefix=f"perf{number}")
        rate = result.total / result.seconds
        print(
            f"| {workspaces:,} | {workspaces * skills:,} | {workspaces * agents:,} "
            f"| {workspaces * agents * per_agent:,} | {bundles:,} | {result.total:,} "
            f"| {result.seconds:.1f} | {rate:,.0f} |"
        )
    record(
        "bench_seed: 1,000,000 rows in minutes",
        f"{result.total:,} rows in {result.seconds:.1f} s",
        result.total >= 1_000_000 and result.seconds < 300,
    )
    print()


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
