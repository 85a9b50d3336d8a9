"""The load test's light run, as CI runs it: benchmarks/load.py's own code path (a fresh
database, scripts/prod, the seed, locust, the figures, the stop and the drop) with
a few virtual users for ten seconds. Zero errors is the bar, every group of
requests is exercised, and the Celery worker applies plans. The full run and its
figures: `.venv/bin/python benchmarks/load.py` (see docs/RELIABILITY.md)."""

import psycopg
import pytest

from benchmarks import load
from tests.services import service_missing

SERVER = "postgres://postgres@127.0.0.1:5432"


@pytest.fixture
def postgres_server():
    try:
        psycopg.connect(f"{SERVER}/postgres", connect_timeout=3).close()
    except psycopg.OperationalError:
        service_missing(f"needs PostgreSQL at {SERVER}")
    return SERVER


# Each of the "stack" group starts a whole Pixie of its own: one at a time, on one worker.
@pytest.mark.slow
@pytest.mark.xdist_group("stack")
def test_a_light_load_run_has_no_errors_and_the_workers_apply_plans(postgres_server, redis_url):
    # Four users at weights 2 : 1 : 1: two browse the catalog, one runs plans, one reads.
    outcome = load.measure_load(
        users=4, seconds=10, messages=3, warmup=2, postgres=postgres_server, redis_url=redis_url,
        command="pytest tests/reliability/test_load.py",
    )  # fmt: skip
    (run,) = outcome.runs
    assert outcome.errors == 0, outcome.markdown
    exercised = {name.partition(": ")[0] for name, row in run.rows.items()
                 if name != "Aggregated" and int(row["Request Count"]) > 0}  # fmt: skip
    assert exercised == {"catalog", "plans", "inbox"}, outcome.markdown
    assert outcome.plans["applied"] >= 1 and outcome.plans["failed_or_stale"] == 0
    assert outcome.leftover == [], "scripts/prod left processes running after SIGTERM"
    assert outcome.markdown.startswith("## Load\n") and "| catalog |" in outcome.markdown


def test_the_ratio_is_each_rounds_own_comparison():
    def run(name, rps):
        row = {"Requests/s": str(rps), "50%": "5", "95%": "9", "99%": "12", "Failure Count": "0"}
        return load.LocustRun({name: row}, [], None, None, users=2, seconds=1, classes=[])

    trivial, (_, listing), (_, detail) = load.TRIVIAL[1], *load.CATALOG
    # req/s of /livez, the list and the detail, in three rounds
    figures = [(100, 50, 20), (400, 100, 80), (200, 90, 60)]
    names = (trivial, listing, detail)
    rounds = [
        load.Round({name: run(name, rps) for name, rps in zip(names, each, strict=True)})
        for each in figures
    ]
    assert load.ratios(rounds) == {listing: 0.45, detail: 0.2}
    section = load.ratio_section(rounds, {"web_workers": 5}, "the command")
    assert section.startswith("## Catalog API throughput\n")
    assert "**45%** ✓" in section and "**20%** ✗" in section


def test_a_conditional_request_is_held_to_its_own_target():
    def run(name, rps):
        row = {"Requests/s": str(rps), "50%": "5", "95%": "9", "99%": "12", "Failure Count": "0"}
        return load.LocustRun({name: row}, [], None, None, users=2, seconds=1, classes=[])

    (_, listing), (_, detail) = load.CONDITIONAL
    # 45% of /livez: enough for a fresh request (40%), not for a 304 (50%)
    rounds = [load.Round({load.TRIVIAL[1]: run(load.TRIVIAL[1], 100), listing: run(listing, 45),
                          detail: run(detail, 55)})]  # fmt: skip
    assert load.ratios(rounds) == {listing: 0.45, detail: 0.55}
    section = load.ratio_section(rounds, {"web_workers": 5}, "the command")
    assert "`GET /api/bundles/ If-None-Match`" in section
    assert "**45%** ✗" in section and "**55%** ✓" in section
