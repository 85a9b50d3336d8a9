"""Load test of Pixie's production stack (issue 7, item 6) and the catalog API's
throughput against a trivial endpoint (issue 8), with one command each:

    .venv/bin/python benchmarks/load.py [--users 20] [--seconds 60]
    .venv/bin/python benchmarks/load.py --ratio [--users 20] [--seconds 6] [--rounds 3]

Each run makes a fresh PostgreSQL database, starts the real stack with
scripts/prod (gunicorn and a Celery worker with beat, on loopback), seeds it
(benchmarks/load/seed.py: the demo catalog, one account and workspace per
virtual user), runs locust headless at a fixed concurrency
(benchmarks/load/locustfile.py), reads locust's figures and the plans the
workers applied, stops the stack, checks nothing of it is left running, and
drops the database. Only a Markdown section goes to stdout; progress goes to
stderr. The exit status is non-zero if any request failed: zero errors is the bar.

The load run mixes catalog browsing, plan owners (install, upgrade, uninstall,
each plan approved and polled until the worker has applied it) and inbox readers.
The --ratio run measures, one after the other at the same concurrency, /livez
(no database), the bundle list and a bundle version's detail, then the same two
sent with If-None-Match of their current ETag (answered 304), in rounds; the
ratio is each catalog request's req/s over /livez's in the same round (median
over the rounds), which holds on a machine whose load drifts.

PostgreSQL comes from --postgres (default postgres://postgres@127.0.0.1:5432),
Redis from --redis-url (default $REDIS_URL); the stack gets a Celery queue of
its own, so other workers on that Redis take none of its tasks.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import os
import platform
import secrets
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when imported by a test
from _setup import record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOCUSTFILE = ROOT / "benchmarks" / "load" / "locustfile.py"
SEED_SCRIPT = ROOT / "benchmarks" / "load" / "seed.py"
LOAD_CLASSES = ["CatalogBrowser", "PlanOwner", "InboxReader"]
# (locust class, the request it makes) for the ratio; TRIVIAL is the reference.
TRIVIAL = ("Livez", "trivial: GET /livez")
CATALOG = [
    ("BundleList", "catalog: GET /api/bundles/"),
    ("BundleVersionDetail", "catalog: GET /api/bundles/{slug}/versions/{version}/"),
]
# The same requests sent with If-None-Match of the current ETag: each answers 304.
CONDITIONAL = [
    ("BundleListConditional", "catalog 304: GET /api/bundles/ If-None-Match"),
    ("BundleVersionConditional",
     "catalog 304: GET /api/bundles/{slug}/versions/{version}/ If-None-Match"),
]  # fmt: skip
RATIO_TARGET = 0.40
CONDITIONAL_TARGET = 0.50


def target_of(name: str) -> float:
    return CONDITIONAL_TARGET if name in dict(CONDITIONAL).values() else RATIO_TARGET


def log(message: str) -> None:
    print(f"[load {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- The stack ---------------------------------------------------------------


@contextmanager
def fresh_database(server: str):
    """A new, empty PostgreSQL database's URL; dropped afterwards."""
    name = f"load_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True, connect_timeout=3) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    log(f"database {name} created")
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        log(f"database {name} dropped")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def process_group(group: int) -> list[int]:
    """Live processes in a process group (zombies waiting for a parent count as gone)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            members.append(int(stat.parent.name))
    return members


@dataclass
class Stack:
    process: subprocess.Popen
    port: int
    env: dict
    log_path: Path
    web_workers: int
    celery_processes: int
    leftover: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def production_stack(*, database_url: str, redis_url: str, workdir: Path):
    """scripts/prod on a free loopback port, healthy; stopped with SIGTERM afterwards."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE",)},
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "BEHIND_TLS_PROXY": "1",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "PIXIE_KEY_ENCRYPTION_KEY": base64.b64encode(secrets.token_bytes(32)).decode(),
        "PORT": str(port),
        "CELERY_TASK_DEFAULT_QUEUE": f"pixie-load-{uuid.uuid4().hex[:8]}",
        "PIXIE_DATA_DIR": str(workdir),
        "STATIC_ROOT": str(workdir / "static"),
    }
    env.pop("PIXIE_PAUSE_AT", None)
    cores = os.cpu_count() or 1
    stack_log = workdir / "prod.log"
    with stack_log.open("wb") as output:
        process = subprocess.Popen(
            [str(ROOT / "scripts" / "prod")], cwd=ROOT, env=env, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    stack = Stack(
        process=process,
        port=port,
        env=env,
        log_path=stack_log,
        web_workers=int(env.get("WEB_CONCURRENCY") or 2 * cores + 1),
        celery_processes=int(env.get("CELERY_CONCURRENCY") or cores),
    )
    try:
        _wait_until_healthy(stack)
        log(f"stack healthy at {stack.url} (log: {stack_log})")
        yield stack
    finally:
        stack.leftover = _stop(process)


def _wait_until_healthy(stack: Stack, deadline: float = 120) -> None:
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        if stack.process.poll() is not None:
            raise RuntimeError(f"scripts/prod ended:\n{stack.log_path.read_text()[-3000:]}")
        try:
            url = f"{stack.url}/healthz"  # loopback, http: no other scheme can get here
            request = urllib.request.Request(url, headers={"X-Forwarded-Proto": "https"})  # noqa: S310
            with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
                if json.load(response).get("status") == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(
        f"no healthy /healthz in {deadline} s:\n{stack.log_path.read_text()[-3000:]}"
    )


def _stop(process: subprocess.Popen) -> list[int]:
    """SIGTERM to scripts/prod, which stops its children; what was still running after."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=60)
    deadline = time.monotonic() + 15
    while process_group(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    leftover = process_group(process.pid)
    if leftover:
        log(f"processes left after SIGTERM: {leftover}; killing them")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    else:
        log("stack stopped; no process of it left")
    return leftover


def seed(stack: Stack, *, accounts: int, messages: int, workdir: Path) -> Path:
    """Seed the stack's database (in-process deliveries: no REDIS_URL); the JSON's path."""
    env = {**stack.env, "REDIS_URL": "", "LOG_LEVEL": "WARNING"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(SEED_SCRIPT), "--accounts", str(accounts), "--messages",
         str(messages)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"seeding failed:\n{done.stderr[-3000:]}")
    path = workdir / "seed.json"
    path.write_text(done.stdout.strip().splitlines()[-1])
    log(f"seeded {accounts} accounts, {messages} messages each, in "
        f"{time.monotonic() - started:.1f} s")  # fmt: skip
    return path


# --- Locust ------------------------------------------------------------------


@dataclass
class LocustRun:
    rows: dict[str, dict]  # request name -> locust's stats row
    failures: list[dict]
    started: datetime
    finished: datetime
    users: int
    seconds: int
    classes: list[str]
    plan_waits: list[float] = field(default_factory=list)  # approval -> seen applied, s

    @property
    def errors(self) -> int:
        return sum(int(row["Failure Count"]) for n, row in self.rows.items() if n != "Aggregated")


def run_locust(
    stack: Stack, *, seed_path: Path, classes: list[str], users: int, seconds: int, workdir: Path
) -> LocustRun:
    prefix = workdir / f"locust-{'-'.join(classes)}-{uuid.uuid4().hex[:6]}"
    command = [
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless",
        "--users", str(users), "--spawn-rate", str(users), "--run-time", f"{seconds}s",
        "--host", stack.url, "--csv", str(prefix), "--only-summary",
        "--loglevel", "WARNING", "--logfile", f"{prefix}.log", *classes,
    ]  # fmt: skip
    waits = Path(f"{prefix}_plan_waits.json")
    env = {**os.environ, "PIXIE_LOAD_SEED": str(seed_path), "PIXIE_LOAD_PLAN_WAITS": str(waits)}
    log(f"locust: {users} users of {', '.join(classes)} for {seconds} s")
    started = datetime.now(UTC)
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    finished = datetime.now(UTC)
    stats = Path(f"{prefix}_stats.csv")
    if not stats.exists():
        raise RuntimeError(
            f"locust wrote no figures (exit {done.returncode}):\n{done.stderr[-3000:]}"
        )
    with stats.open() as file:
        rows = {row["Name"]: row for row in csv.DictReader(file)}
    with Path(f"{prefix}_failures.csv").open() as file:
        failures = list(csv.DictReader(file))
    run = LocustRun(rows, failures, started, finished, users, seconds, classes)
    if waits.exists():
        run.plan_waits = json.loads(waits.read_text())
    aggregated = rows.get("Aggregated", {})
    log(f"locust: {aggregated.get('Request Count')} requests, {run.errors} errors, "
        f"{float(aggregated.get('Requests/s') or 0):.1f} req/s")  # fmt: skip
    return run


# --- The database's side -----------------------------------------------------


def plans_applied(
    database_url: str, *, since: datetime, until: datetime, workspaces: list[str]
) -> dict:
    """Plans of these workspaces the workers applied between since and until, and how
    long each took from its approval."""
    mine = "workspace_id IN (SELECT id FROM pixie_workspace WHERE slug = ANY(%(workspaces)s))"
    window = f"{mine} AND status = 'applied' AND finished_at BETWEEN %(since)s AND %(until)s"
    params = {"workspaces": workspaces, "since": since, "until": until}
    with psycopg.connect(database_url) as connection:
        applied, p50, p95 = connection.execute(
            f"""SELECT count(*),
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY finished_at - decided_at),
                   percentile_cont(0.95) WITHIN GROUP (ORDER BY finished_at - decided_at)
                FROM catalog_plan WHERE {window}""",  # noqa: S608 (no outside input)
            params,
        ).fetchone()
        by_kind = dict(
            connection.execute(
                f"SELECT kind, count(*) FROM catalog_plan WHERE {window} GROUP BY kind",  # noqa: S608
                params,
            ).fetchall()
        )
        unfinished = connection.execute(
            f"SELECT count(*) FROM catalog_plan WHERE {mine}"  # noqa: S608
            " AND status IN ('approved', 'applying')",
            params,
        ).fetchone()[0]
        bad = connection.execute(
            f"SELECT count(*) FROM catalog_plan WHERE {mine}"  # noqa: S608
            " AND status IN ('failed', 'stale')",
            params,
        ).fetchone()[0]
        version = connection.execute("SHOW server_version").fetchone()[0]
    window = (until - since).total_seconds()
    return {
        "applied": applied,
        "by_kind": by_kind,
        "window": window,
        "per_minute": applied * 60 / window if window else 0.0,
        "apply_p50": p50.total_seconds() if p50 else None,
        "apply_p95": p95.total_seconds() if p95 else None,
        "unfinished": unfinished,
        "failed_or_stale": bad,
        "postgres": version,
    }


# --- The report --------------------------------------------------------------


def _machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = os.cpu_count() or 1
    return f"{cores} cores{f' ({model})' if model else ''}, Python {platform.python_version()}"


def _ms(value: str) -> str:
    return "–" if value in ("", "N/A") else f"{float(value):.0f}"


def _row(name: str, row: dict) -> str:
    count = int(row["Request Count"])
    errors = int(row["Failure Count"])
    rate = f"{100 * errors / count:.2f}%" if count else "–"
    group, _, what = name.partition(": ")
    return (
        f"| {group} | `{what or name}` | {count} | {float(row['Requests/s']):.1f} | "
        f"{_ms(row['50%'])} | {_ms(row['95%'])} | {_ms(row['99%'])} | {errors} | {rate} |"
    )


TABLE_HEAD = [
    "| group | request | count | req/s | p50 ms | p95 ms | p99 ms | errors | error rate |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
]


def load_section(run: LocustRun, plans: dict, setup: dict, command: str) -> str:
    groups: dict[str, list[str]] = {}
    for name in run.rows:
        if name != "Aggregated":
            groups.setdefault(name.partition(": ")[0], []).append(name)
    lines = [
        "## Load",
        "",
        f"`{command}`, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {_machine()}, "
        f"PostgreSQL {plans['postgres']}.",
        "",
        f"- Concurrency: **{run.users} virtual users** ({', '.join(run.classes)}, weighted "
        "2 : 1 : 1), each sending its next request as soon as the last one answered "
        "(no think time); locust and the stack share the machine.",
        f"- Duration: {run.seconds} s; stack: `scripts/prod` with {setup['web_workers']} "
        f"gunicorn workers and a Celery worker of {setup['celery_processes']} processes.",
        "- Every virtual user has its own token and workspace: plan owners install, "
        "upgrade and uninstall the demo bundle, approving each plan and polling it every "
        f"0.2 s until applied; inbox readers list their {setup['messages']} sealed "
        "messages, each opened by the server.",
        "",
        *TABLE_HEAD,
    ]
    for group in sorted(groups):
        lines += [_row(name, run.rows[name]) for name in sorted(groups[group])]
    if "Aggregated" in run.rows:
        lines.append(_row("all: every request", run.rows["Aggregated"]))
    lines += [""]
    if run.plan_waits:
        waits = sorted(run.plan_waits)
        lines.append(
            f"- Approval → seen applied by its owner: {len(waits)} plans, "
            f"p50 {_seconds(_percentile(waits, 50))}, p95 {_seconds(_percentile(waits, 95))}, "
            f"p99 {_seconds(_percentile(waits, 99))}."
        )
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(plans["by_kind"].items()))
    lines.append(
        f"- **Plans applied by the workers: {plans['per_minute']:.0f} per minute** "
        f"({plans['applied']} in {plans['window']:.0f} s: {kinds or 'none'}); approval → "
        f"applied in the database: p50 {_seconds(plans['apply_p50'])}, "
        f"p95 {_seconds(plans['apply_p95'])}; failed or stale: {plans['failed_or_stale']}; "
        f"approved but not yet applied when the run ended: {plans['unfinished']}."
    )
    total = run.rows.get("Aggregated", {}).get("Request Count", 0)
    verdict = "the bar: zero" if not run.errors else "**the bar is zero: failed**"
    lines.append(f"- **Errors: {run.errors}** of {total} requests ({verdict}).")
    lines += _failure_lines(run)
    return "\n".join(lines) + "\n"


def _percentile(ordered: list[float], percent: int) -> float:
    """Nearest-rank percentile of a sorted list."""
    rank = max(1, -(-percent * len(ordered) // 100))
    return ordered[rank - 1]


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value * 1000:.0f} ms"


def _failure_lines(run: LocustRun) -> list[str]:
    if not run.failures:
        return []
    lines = ["", "| request | error | occurrences |", "| --- | --- | ---: |"]
    for failure in run.failures:
        error = failure["Error"].replace("|", "\\|").replace("\n", " ")[:200]
        lines.append(f"| `{failure['Name']}` | {error} | {failure['Occurrences']} |")
    return lines


@dataclass
class Round:
    """One round of the ratio run: each endpoint measured for the same time, in turn."""

    runs: dict[str, LocustRun]  # request name -> its run

    def rps(self, name: str) -> float:
        return float(self.runs[name].rows[name]["Requests/s"])

    def ratio(self, name: str) -> float:
        reference = self.rps(TRIVIAL[1])
        return self.rps(name) / reference if reference else 0.0


def ratios(rounds: list[Round]) -> dict[str, float]:
    """Each catalog request's median, over the rounds, of its req/s over /livez's."""
    return {
        name: statistics.median(r.ratio(name) for r in rounds)
        for _, name in [*CATALOG, *CONDITIONAL]
        if name in rounds[0].runs
    }


def ratio_section(rounds: list[Round], stack_info: dict, command: str) -> str:
    first = next(iter(rounds[0].runs.values()))
    lines = [
        "## Catalog API throughput",
        "",
        f"`{command}`, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {_machine()}.",
        "",
        f"Requests per second at **{first.users} concurrent users** (no think time, token "
        f"auth) on one `scripts/prod` stack ({stack_info['web_workers']} gunicorn workers), "
        f"against `/livez` (no database, no authentication) on the same stack. "
        f"{len(rounds)} rounds; in each, every endpoint runs {first.seconds} s in turn "
        "(the order reversed every other round, so a drift in the machine's load "
        "falls on both sides), and a round's ratio compares its own runs. Targets: "
        f"the catalog API at ≥ {RATIO_TARGET:.0%} of `/livez` for fresh requests, and at "
        f"≥ {CONDITIONAL_TARGET:.0%} for a request with `If-None-Match` of the current "
        "ETag (answered `304 Not Modified`, no body).",
        "",
        "| request | req/s per round | p50 ms | p95 ms | p99 ms | errors | ratio per round "
        "| **median ratio** |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    medians = ratios(rounds)
    for _, name in [TRIVIAL, *CATALOG, *CONDITIONAL]:
        if name not in rounds[0].runs:
            continue
        rows = [r.runs[name].rows[name] for r in rounds]
        per_round = " / ".join(f"{r.rps(name):.0f}" for r in rounds)
        errors = sum(int(row["Failure Count"]) for row in rows)
        if name == TRIVIAL[1]:
            ratio_cells = "| – | (reference) |"
        else:
            mark = "✓" if medians[name] >= target_of(name) else "✗"
            each = " / ".join(f"{r.ratio(name):.0%}" for r in rounds)
            ratio_cells = f"| {each} | **{medians[name]:.0%}** {mark} |"
        lines.append(
            f"| `{name.partition(': ')[2]}` | {per_round} | "
            f"{_median_ms(rows, '50%')} | {_median_ms(rows, '95%')} | {_median_ms(rows, '99%')} "
            f"| {errors} {ratio_cells}"
        )
    lines += ["", "Latencies are the median over the rounds of each round's percentile."]
    return "\n".join(lines) + "\n"


def _median_ms(rows: list[dict], column: str) -> str:
    values = [float(row[column]) for row in rows if row[column] not in ("", "N/A")]
    return f"{statistics.median(values):.0f}" if values else "–"


# --- The two runs --------------------------------------------------------------


@dataclass
class Outcome:
    markdown: str
    errors: int
    leftover: list[int]
    runs: list[LocustRun]
    plans: dict | None = None
    ratios: dict | None = None


def measure_load(*, users: int, seconds: int, postgres: str, redis_url: str, command: str,
                 messages: int = 10, warmup: int = 3) -> Outcome:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="pixie-load-") as temporary:
        workdir = Path(temporary)
        with fresh_database(postgres) as database_url:
            with production_stack(
                database_url=database_url, redis_url=redis_url, workdir=workdir
            ) as stack:
                # Twice the accounts: a warm-up (discarded) on half of them wakes every
                # web worker and code path, and leaves the measured half untouched.
                seed_path = seed(stack, accounts=2 * users, messages=messages, workdir=workdir)
                measured, warm_up = _split_accounts(seed_path, users)
                log("warm-up (discarded)")
                run_locust(
                    stack, seed_path=warm_up, classes=LOAD_CLASSES, users=users,
                    seconds=warmup, workdir=workdir,
                )  # fmt: skip
                run = run_locust(
                    stack, seed_path=measured, classes=LOAD_CLASSES, users=users,
                    seconds=seconds, workdir=workdir,
                )  # fmt: skip
                # An apply approved in the last moments finishes after locust stops;
                # it counts only if it finished inside the run's window.
                workspaces = [a["workspace"] for a in json.loads(measured.read_text())["accounts"]]
                plans = plans_applied(
                    database_url, since=run.started, until=run.finished, workspaces=workspaces
                )
            setup = {
                "web_workers": stack.web_workers,
                "celery_processes": stack.celery_processes,
                "messages": messages,
            }
    markdown = load_section(run, plans, setup, command)
    return Outcome(markdown, run.errors, stack.leftover, [run], plans)


def _split_accounts(seed_path: Path, users: int) -> tuple[Path, Path]:
    """Two seed files: the first `users` accounts, and the rest."""
    seeded = json.loads(seed_path.read_text())
    halves = []
    for suffix, accounts in (("run", seeded["accounts"][:users]),
                             ("warm-up", seeded["accounts"][users:])):  # fmt: skip
        path = seed_path.with_name(f"seed-{suffix}.json")
        path.write_text(json.dumps({**seeded, "accounts": accounts}))
        halves.append(path)
    return halves[0], halves[1]


def measure_ratio(*, users: int, seconds: int, rounds: int, postgres: str, redis_url: str,
                  command: str) -> Outcome:  # fmt: skip
    order = [TRIVIAL, *CATALOG, *CONDITIONAL]
    with tempfile.TemporaryDirectory(prefix="pixie-load-") as temporary:
        workdir = Path(temporary)
        with fresh_database(postgres) as database_url:
            with production_stack(
                database_url=database_url, redis_url=redis_url, workdir=workdir
            ) as stack:
                # One account per user: every run's users take the same accounts afresh.
                seed_path = seed(stack, accounts=users, messages=0, workdir=workdir)
                log("warm-up (discarded)")
                run_locust(
                    stack, seed_path=seed_path, users=users, seconds=3, workdir=workdir,
                    classes=[cls for cls, _ in order],
                )  # fmt: skip
                measured = []
                for number in range(rounds):
                    runs = {}
                    for cls, name in order if number % 2 == 0 else reversed(order):
                        runs[name] = run_locust(
                            stack, seed_path=seed_path, classes=[cls], users=users,
                            seconds=seconds, workdir=workdir,
                        )  # fmt: skip
                    measured.append(Round(runs))
                    log("round {}: {}".format(number + 1, ", ".join(
                        f"{name.partition(': ')[2]} {ratio:.0%}"
                        for name, ratio in ratios([measured[-1]]).items()
                    )))  # fmt: skip
            info = {"web_workers": stack.web_workers, "celery_processes": stack.celery_processes}
    markdown = ratio_section(measured, info, command)
    for name, ratio in ratios(measured).items():
        record(
            f"Catalog API {name.partition(': ')[2]}: at least {target_of(name):.0%} of "
            "/livez's req/s",
            f"{ratio:.0%} (median of {len(measured)} rounds)",
            ratio >= target_of(name),
        )
    all_runs = [run for r in measured for run in r.runs.values()]
    errors = sum(run.errors for run in all_runs)
    return Outcome(markdown, errors, stack.leftover, all_runs, ratios=ratios(measured))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Load test of the production stack (issue 7) or, with --ratio, the "
        "catalog API's throughput against /livez (issue 8). Markdown on stdout."
    )
    parser.add_argument("--users", type=int, default=20, help="concurrent virtual users (20)")
    parser.add_argument(
        "--seconds", type=int, help="how long locust runs (60; with --ratio, each run: 6)"
    )
    parser.add_argument("--ratio", action="store_true", help="the throughput ratio instead")
    parser.add_argument("--rounds", type=int, default=3, help="with --ratio: rounds (3)")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    )
    args = parser.parse_args(argv)
    seconds = args.seconds or (6 if args.ratio else 60)
    shown = [a for a in (argv if argv is not None else sys.argv[1:])]
    command = shlex.join([".venv/bin/python", "benchmarks/load.py", *shown])
    common = {"users": args.users, "seconds": seconds, "postgres": args.postgres,
              "redis_url": args.redis_url, "command": command}  # fmt: skip
    outcome = measure_ratio(rounds=args.rounds, **common) if args.ratio else measure_load(**common)
    print(outcome.markdown)
    if outcome.errors:
        log(f"{outcome.errors} requests failed: the bar is zero")
    if outcome.leftover:
        log(f"the stack left processes behind: {outcome.leftover}")
    return 1 if outcome.errors or outcome.leftover else 0


if __name__ == "__main__":
    sys.exit(main())
