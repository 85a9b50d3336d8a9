"""How the suite runs: the default quick run and the slow one, the same collection in every
xdist worker, and what each worker keeps to itself.

- ``--services-only`` (CI's PostgreSQL pass) leaves out the tests that touch no
  database, Redis or server of their own: they ran on the defaults pass already.
- ``--slow`` (CI passes it) also runs the tests marked ``slow`` (fuzzers, load, the
  production stack, fault injection) and gives property tests their full example counts;
  without it they are deselected and property tests run a tenth of their examples.
  An explicit ``-m`` chooses for itself (``-m slow`` runs only the slow ones).
- Everything a module decides at import (example counts, which fault points to try) is
  the same in every worker: xdist refuses workers that collected different tests.
- Each worker has a Redis database of its own (``redis_url``), a temporary folder for
  the files the app writes (``DATA_DIR``) and the browser's screenshots, and pytest-django
  gives it a test database of its own (``test_<name>_gw0``, ...).
- A run ends with the tests outside the slow marker that took longer than their budget:
  each is a cost to cut (share its fixture, build less), not a thing to wait on.

docs/CONTRIBUTING.md says how to run one area, one marker or one test.
"""

import os
import re
from urllib.parse import urlsplit, urlunsplit

from hypothesis import settings as hypothesis_settings

# Set in pytest_configure, before any test module is imported, and read at import.
_full = False
_fault_seed = 0

# Seconds a test outside the slow marker may take (setup, call and teardown together)
# before the run's summary names it. A browser journey drives a real Chromium through
# pages a person would read; a crawl of every page is split so that no part passes this.
BUDGET_SECONDS = 5.0
BROWSER_BUDGET_SECONDS = 30.0

hypothesis_settings.register_profile("quick", max_examples=20, deadline=None)
hypothesis_settings.register_profile("full", max_examples=100, deadline=None)


def full_run() -> bool:
    """True under ``--slow``: property tests run all their examples."""
    return _full


def examples(full: int) -> int:
    """A property test's example count: ``full`` in the slow run, a tenth of it (at least
    20) in the quick one. Each call site keeps the count the slow run holds it to."""
    return full if _full else max(20, full // 10)


def add_options(parser) -> None:
    group = parser.getgroup("pixie")
    group.addoption(
        "--slow",
        action="store_true",
        help="also run the tests marked slow, and property tests with all their examples "
        "(CI does; docs/CONTRIBUTING.md)",
    )
    group.addoption(
        "--services-only",
        action="store_true",
        help="run only the tests that touch the database, Redis or a server of their own "
        "(CI's PostgreSQL pass: the others ran on the defaults pass, where they do the same)",
    )
    group.addoption(
        "--fault-seed",
        type=int,
        default=None,
        help="which two apply points tests/reliability/test_faults.py tries outside the slow "
        "run (default: PIXIE_FAULT_SEED, else 0); the same in every worker",
    )


def configure(config) -> None:
    global _full, _fault_seed
    _full = bool(config.getoption("--slow"))
    hypothesis_settings.load_profile("full" if _full else "quick")
    chosen = config.getoption("--fault-seed")
    _fault_seed = int(os.environ.get("PIXIE_FAULT_SEED", "0")) if chosen is None else chosen


def fault_seed() -> int:
    """The seed of the fault points tried outside the slow run: fixed unless asked."""
    return _fault_seed


def deselect_slow(config, items) -> None:
    """Without --slow (and without an -m of the person's own), the slow kinds are left out."""
    if config.getoption("--slow") or config.getoption("markexpr"):
        return
    kept, slow = [], []
    for item in items:
        (slow if item.get_closest_marker("slow") else kept).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = kept


# A test that asks for one of these touches the database, Redis, or a server of its own.
SERVICE_FIXTURES = frozenset({
    "db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
    "live_server", "postgres_only", "migrated_sqlite", "redis_url",
    "queue",
})  # fmt: skip


def touches_services(item) -> bool:
    return (
        item.get_closest_marker("django_db") is not None
        or item.get_closest_marker("slow") is not None
        or not SERVICE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
    )


def deselect_pure(config, items) -> None:
    """Under --services-only, the tests that touch no service are left out."""
    if not config.getoption("--services-only"):
        return
    kept, pure = [], []
    for item in items:
        (kept if touches_services(item) else pure).append(item)
    if pure:
        config.hook.pytest_deselected(items=pure)
        items[:] = kept


def heaviest_first(items) -> None:
    """The slow kinds first, then the browser tests, then the rest, each in their order:
    xdist hands tests out in collection order, so the long ones start at once on every
    worker instead of leaving one worker busy at the end while the other waits (the same
    order in every worker)."""
    items.sort(
        key=lambda item: (
            item.get_closest_marker("slow") is None,
            item.get_closest_marker("browser") is None,
        )
    )


def run_folder(tmp_path_factory):
    """A temporary folder of this run that all its xdist workers share."""
    run = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return run.parent  # the workers' folders sit in the run's own
    return run


def worker_number(config) -> int:
    """0 for gw0 or a run without xdist, 1 for gw1, ..."""
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    return int(worker.removeprefix("gw"))


def redis_url_for_worker(url: str, number: int) -> str:
    """The same Redis server, the database ``base + number`` (of Redis's 16), so no two
    workers share a key, a queue or a counter."""
    parts = urlsplit(url)
    base = re.fullmatch(r"/?(\d*)", parts.path)
    database = int(base.group(1) or 0) if base else 0
    return urlunsplit(parts._replace(path=f"/{(database + number) % 16}"))


def over_budget(terminalreporter) -> list[tuple[float, str]]:
    """(seconds, test id) of the tests outside the slow marker that passed their budget
    (a property test counts only with its quick example count, without --slow)."""
    full_examples = terminalreporter.config.getoption("--slow")
    totals: dict[str, float] = {}
    browser: set[str] = set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            duration = getattr(report, "duration", None)
            keywords = getattr(report, "keywords", {})
            if duration is None or "slow" in keywords:
                continue
            if full_examples and "hypothesis" in keywords:
                continue  # a property test with all its examples (--slow) is a soak
            totals[report.nodeid] = totals.get(report.nodeid, 0.0) + duration
            if "browser" in keywords:
                browser.add(report.nodeid)
    return sorted(
        ((seconds, nodeid) for nodeid, seconds in totals.items()
         if seconds > (BROWSER_BUDGET_SECONDS if nodeid in browser else BUDGET_SECONDS)),
        reverse=True,
    )  # fmt: skip


def report_over_budget(terminalreporter) -> None:
    config = terminalreporter.config
    if not config.getoption("--slow") and not config.getoption("markexpr"):
        terminalreporter.write_line(
            "Tests marked slow (fuzzers, load, the production stack, fault injection, the "
            "whole page crawls) were left out: --slow runs them, as CI does."
        )
    slow = over_budget(terminalreporter)
    if not slow:
        return
    terminalreporter.write_sep(
        "=",
        f"{len(slow)} test(s) outside the slow marker over their budget "
        f"({BUDGET_SECONDS:.0f} s, browser {BROWSER_BUDGET_SECONDS:.0f} s)",
        yellow=True,
    )
    for seconds, nodeid in slow:
        terminalreporter.write_line(f"{seconds:7.2f}s {nodeid}")
