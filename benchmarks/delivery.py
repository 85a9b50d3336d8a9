"""Delivery (pixie/delivery): requests per second of an agent's discovery index and of a
cached 2 MiB archive against /livez on the production web server, and the first build of that
archive against the `zip` command zipping the same bytes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/delivery.py

Options: --threads 8 (concurrent client threads), --seconds 5 (each measured run),
--rounds 3, --builds 7 (timings of each build; the best is kept).

Seeds a throwaway test database (one workspace, one agent with 50 attached skills, one of
them 20 files of 2 MiB of random bytes, a delivery token for the agent), starts the web
server on it as scripts/prod starts it (its gunicorn command and environment, on
loopback; Redis from $REDIS_URL or redis://127.0.0.1:6379/5 for the rate-limit
counters), and sends GETs from client threads, each on its own connection, each sending
its next request as soon as the last one is read. In each round every endpoint runs for
the same time in turn (the order reversed every other round) and the round's ratio
compares its own runs; the median ratio over the rounds is reported. Then the server is
stopped and the archive's first build is timed in this process.

Prints a Markdown section (scripts/perf collects it into docs/PERFORMANCE.md); progress
goes to stderr. The server, its processes, the temporary folders and the database are
gone when it ends, however it ends.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import os
import secrets
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402
from load import Stack, _stop, _wait_until_healthy, free_port, process_group  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402

from agents.models import Agent, AgentSkill  # noqa: E402
from catalog.models import FileBlob, RevisionFile  # noqa: E402
from catalog.services.workspace_skills import NewSkill, skills_create  # noqa: E402
from catalog.skill_content import media_type  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402
from pixie.delivery.archives import archive_entries, build_archives, build_zip  # noqa: E402
from pixie.delivery.index import token_index  # noqa: E402
from pixie.delivery.tokens import delivery_token_create  # noqa: E402

SKILLS = 50
BIG_SLUG = "big-assets"  # the 50th skill: SKILL.md and 20 files, 2 MiB of random bytes
BIG_FILES, BIG_BYTES = 20, 2 * 1024 * 1024
INDEX_AIM, ARCHIVE_AIM, BUILD_AIM = 0.50, 0.40, 2.0
# What the skills client sends (its user agent is one per machine behind one address:
# every thread here is the same client, the busiest case for its row).
HEADERS = {"X-Forwarded-Proto": "https", "User-Agent": "skills/1.7.4 (pixie-bench)"}
# What is measured, in this order (reversed every other round); /livez is the reference.
ORDER = [
    ("livez", "/livez"),
    ("index", "/deliver/…/.well-known/agent-skills/index.json"),
    ("archive", f"/deliver/…/archives/{BIG_SLUG}/….zip"),
]


def log(message: str) -> None:
    print(f"[delivery {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- The data ------------------------------------------------------------------------


def seed():
    """A workspace whose agent has SKILLS skills attached (the last one the 2 MiB skill)
    and a delivery token for that agent: (token, secret, the big skill's slug)."""
    owner = get_user_model().objects.create_user("bench-delivery-owner")
    workspace = Workspace.objects.create(slug="delivery", name="Delivery")
    Membership.objects.create(workspace=workspace, user=owner, role=Membership.Role.OWNER)
    agent = Agent.objects.create(workspace=workspace, slug="fleet", name="Fleet agent")
    body = "".join(
        f"{n}. Read references/guide.md, then run scripts/run.sh with the ticket's id.\n"
        for n in range(1, 25)
    )
    new = [
        NewSkill(
            slug=f"skill-{i:02d}",
            name=f"Skill {i:02d}",
            short_description=f"Handles step {i:02d} of the support runbook.",
            body=body,
        )
        for i in range(SKILLS - 1)
    ]
    new.append(
        NewSkill(
            slug=BIG_SLUG,
            name="Big assets",
            short_description="Ships 2 MiB of model assets with its procedure.",
            body=body,
        )
    )
    skills = skills_create(workspace=workspace, skills=new, actor=owner)
    blobs: dict[str, bytes] = {}
    files = []

    def add(skill, path: str, data: bytes, executable: bool = False) -> None:
        digest = hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        files.append(
            RevisionFile(
                revision_id=skill.head_id,
                path=path,
                blob_id=digest,
                size=len(data),
                executable=executable,
                media_type=media_type(path, data),
            )  # fmt: skip
        )

    for skill in skills[:-1]:  # three small files each, as a typical skill has
        add(skill, "references/guide.md", f"# {skill.slug}\n\n".encode() + body.encode() * 3)
        add(skill, "scripts/run.sh", f'#!/bin/sh\necho {skill.slug} "$1"\n'.encode(), True)
        add(skill, "assets/config.json", f'{{"skill": "{skill.slug}", "retries": 3}}\n'.encode())
    big = skills[-1]
    for n in range(BIG_FILES):
        add(big, f"assets/part-{n:02d}.bin", os.urandom(BIG_BYTES // BIG_FILES))
    FileBlob.objects.bulk_create(
        [FileBlob(sha256=digest, size=len(data), content=data) for digest, data in blobs.items()]
    )
    RevisionFile.objects.bulk_create(files)
    AgentSkill.objects.bulk_create(
        AgentSkill(agent=agent, skill=skill, position=n) for n, skill in enumerate(skills)
    )
    token, secret = delivery_token_create(
        workspace=workspace, actor=owner, name="Bench fleet", agent=agent
    )
    return token, secret


# --- The server ----------------------------------------------------------------------


@contextmanager
def gunicorn(*, database_url: str, redis_url: str, workdir: Path):
    """The web half of scripts/prod: its gunicorn command, settings and environment
    (DEBUG off, connections kept 60 s, JSON logs, behind a TLS proxy), on a free loopback
    port, healthy; stopped with SIGTERM afterwards and checked gone. Not scripts/prod
    itself: the database is migrated already, the delivery URLs need no static files and
    enqueue no task, and its migrate and collectstatic took over a minute on a busy
    2-core machine (the Celery worker would only compete for the cores)."""
    port = free_port()
    env = {
        **os.environ,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "BEHIND_TLS_PROXY": "1",
        "DEBUG": "0",
        "LOG_FORMAT": "json",
        "DB_CONN_MAX_AGE": "60",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,  # the rate-limit counters' cache, as in production
        "PIXIE_KEY_ENCRYPTION_KEY": base64.b64encode(secrets.token_bytes(32)).decode(),
        "PIXIE_DATA_DIR": str(workdir),
        "STATIC_ROOT": str(workdir / "static"),
    }
    workers = int(os.environ.get("WEB_CONCURRENCY") or 2 * (os.cpu_count() or 1) + 1)
    log_path = workdir / "gunicorn.log"
    with log_path.open("wb") as output:
        process = subprocess.Popen(  # noqa: S603 - our own gunicorn, fixed arguments
            [str(ROOT / ".venv" / "bin" / "gunicorn"), "pixie.wsgi:application",
             "--config", "python:pixie.gunicorn_conf", "--bind", f"127.0.0.1:{port}",
             "--workers", str(workers), "--timeout", "60",
             "--forwarded-allow-ips", "127.0.0.1"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    stack = Stack(process, port, env, log_path, web_workers=workers, celery_processes=0)
    try:
        _wait_until_healthy(stack)
        log(f"gunicorn healthy at {stack.url}, {workers} workers")
        yield stack
    finally:
        stack.leftover = _stop(process)


# --- The client ----------------------------------------------------------------------


def cpu_seconds(pids) -> float:
    """User and system CPU seconds of these processes so far (gone ones count nothing)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def postgres_pids() -> list[int]:
    """The PostgreSQL server's processes on this machine (their CPU is the database's)."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "postgres":
                found.append(int(comm.parent.name))
        except OSError:
            continue
    return found


@dataclass
class Run:
    """One endpoint hammered for a fixed time."""

    name: str
    requests: int
    errors: int
    seconds: float
    latencies: list[float]
    body_bytes: int
    client_cpu: float  # this process's CPU seconds over the run
    stack_cpu: float  # gunicorn's master and workers
    database_cpu: float
    notes: list[str] = field(default_factory=list)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    def percentile(self, percent: int) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[max(0, -(-percent * len(ordered) // 100) - 1)]


def hammer(port: int, name: str, path: str, *, threads: int, seconds: float,
           stack_pids: list[int], database_pids: list[int]) -> Run:  # fmt: skip
    """GET ``path`` from ``threads`` threads for ``seconds``; every answer must be a 200
    (gunicorn's sync workers close each connection after its response; http.client opens
    the next one by itself, as any client of this server would)."""
    start = threading.Barrier(threads + 1)
    stop = threading.Event()
    counts = [[0, 0, 0] for _ in range(threads)]  # requests, errors, bytes of the last body
    latencies: list[list[float]] = [[] for _ in range(threads)]
    problems: list[str] = []

    def worker(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        start.wait()
        while not stop.is_set():
            began = time.perf_counter()
            try:
                conn.request("GET", path, headers=HEADERS)
                response = conn.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException) as exc:
                counts[n][1] += 1
                problems.append(repr(exc))
                conn.close()
                continue
            if stop.is_set():  # answered after the bell: not counted
                break
            latencies[n].append(time.perf_counter() - began)
            counts[n][0] += 1
            counts[n][2] = len(body)
            if response.status != 200:
                counts[n][1] += 1
                problems.append(f"{response.status}: {body[:200]!r}")
        conn.close()

    pool = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(threads)]
    for thread in pool:
        thread.start()
    stack_before, database_before = cpu_seconds(stack_pids), cpu_seconds(database_pids)
    client_before = time.process_time()
    start.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    elapsed = time.perf_counter() - began
    client_cpu = time.process_time() - client_before
    stack_cpu = cpu_seconds(stack_pids) - stack_before
    database_cpu = cpu_seconds(database_pids) - database_before
    for thread in pool:
        thread.join(timeout=60)
    run = Run(
        name=name,
        requests=sum(c[0] for c in counts),
        errors=sum(c[1] for c in counts),
        seconds=elapsed,
        latencies=[value for each in latencies for value in each],
        body_bytes=max(c[2] for c in counts),
        client_cpu=client_cpu,
        stack_cpu=stack_cpu,
        database_cpu=database_cpu,
        notes=sorted(set(problems))[:3],
    )
    log(f"{name}: {run.requests} requests, {run.errors} errors, {run.rps:.0f} req/s")
    return run


def get(port: int, path: str) -> tuple[int, bytes, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        began = time.perf_counter()
        conn.request("GET", path, headers=HEADERS)
        response = conn.getresponse()
        body = response.read()
        return response.status, body, time.perf_counter() - began
    finally:
        conn.close()


# --- The archive's first build ----------------------------------------------------------


def best_of(action, runs: int) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        samples.append(time.perf_counter() - began)
    return min(samples)


def zip_times(entries: list[tuple[str, bytes, bool]], runs: int) -> dict[str, float]:
    """Best wall-clock seconds of the `zip` command (a process started each time) zipping
    the same bytes, written first to a temporary folder (so read from the page cache), in
    the same order, without directory entries or extra fields; the archive is written to
    a file in a sibling folder and removed before each run."""
    with tempfile.TemporaryDirectory(prefix="pixie-delivery-zip-") as temporary:
        source, out = Path(temporary) / "skill", Path(temporary) / "out"
        out.mkdir()
        for path, data, executable in entries:
            target = source / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o755 if executable else 0o644)
        paths = sorted(path for path, _, _ in entries)
        archive = out / "skill.zip"

        def run(*options: str, names=paths):
            archive.unlink(missing_ok=True)
            subprocess.run(  # noqa: S603 - the zip command, fixed arguments
                ["zip", "-q", *options, "-X", "-D", str(archive), *names],  # noqa: S607
                cwd=source, check=True,
            )  # fmt: skip

        times = {
            "stored": best_of(lambda: run("-0"), runs),
            "stored_bytes": archive.stat().st_size,
            "deflate": best_of(lambda: run(), runs),
            "deflate_bytes": archive.stat().st_size,
            # zip's own start and one small file: how much of the above is not zipping.
            "start": best_of(lambda: run("-0", names=["SKILL.md"]), runs),
        }
    return times


# --- The report ------------------------------------------------------------------------


def _median(values) -> float:
    return statistics.median(list(values))


def section(*, command: str, rounds: list[dict[str, Run]], threads: int, seconds: float,
            workers: int, first_index: float, archive_bytes: int, build: dict,
            builds: int, load: tuple[float, float]) -> str:  # fmt: skip
    livez = "livez"
    aims = {"index": INDEX_AIM, "archive": ARCHIVE_AIM}
    stored = build["zip"]["stored"]
    lines = [
        "## Delivery: index and archive throughput, archive build",
        "",
        f"`{command}`",
        "",
        f"Requests per second from **{threads} client threads** (each on its own connection, "
        f"sending its next GET as soon as the last answer is read; no think time) on one "
        f"gunicorn started as `scripts/prod` starts it ({workers} sync workers, `DEBUG=0`, "
        "connections kept 60 s; PostgreSQL; Redis for the rate-limit counters), all on "
        "this machine: the client, the server and the database "
        f"share its {os.cpu_count()} cores. {len(rounds)} rounds; in each, every request runs "
        f"{seconds:g} s in turn (the order reversed every other round), and a round's ratio "
        "compares its own runs to its `/livez`. The index is an agent's with "
        f"{SKILLS} attached skills (49 of 3 small files, one of {BIG_FILES} files of "
        f"{BIG_BYTES // 2**20} MiB of random bytes); the archive is that one skill's "
        f"({archive_bytes / 2**20:.2f} MiB, built by the first index request, "
        "written once from `SkillArchive` to a file the server sends), fetched with the "
        "same agent token. Every thread sends "
        "the same User-Agent from the same address, so all are one client "
        "(`DeliveryClient`) of the token, as a fleet behind one NAT would be.",
        "",
        "| request | body bytes | req/s per round | p50 ms | p95 ms | errors "
        "| CPU ms/request: stack / PostgreSQL / client | ratio per round | **median ratio** "
        "| aim |",
        "| --- | ---: | --- | ---: | ---: | ---: | --- | --- | ---: | --- |",
    ]
    for name, path in ORDER:
        runs = [r[name] for r in rounds]
        per_round = " / ".join(f"{run.rps:.0f}" for run in runs)
        done = sum(run.requests for run in runs) or 1
        cpu = " / ".join(
            f"{1000 * sum(getattr(run, part) for run in runs) / done:.1f}"
            for part in ("stack_cpu", "database_cpu", "client_cpu")
        )
        if name == livez:
            ratio_cells = "– | (reference) | –"
        else:
            ratios = [r[name].rps / r[livez].rps for r in rounds]
            median = _median(ratios)
            mark = "✓" if median >= aims[name] else "✗"
            ratio_cells = (
                f"{' / '.join(f'{x:.0%}' for x in ratios)} | **{median:.0%}** {mark} "
                f"| ≥ {aims[name]:.0%}"
            )
        lines.append(
            f"| {name} (`{path}`) | {runs[0].body_bytes:,} | {per_round} "
            f"| {_median(run.percentile(50) for run in runs) * 1000:.1f} "
            f"| {_median(run.percentile(95) for run in runs) * 1000:.1f} "
            f"| {sum(run.errors for run in runs)} | {cpu} | {ratio_cells} |"
        )
    lines += [
        "",
        "Latencies are the median over the rounds of each round's percentile. CPU per "
        "request is the rounds' CPU seconds over their requests: the stack's processes "
        "(gunicorn's master and workers), every PostgreSQL process on the "
        "machine's, and this client's. The machine's load average (1 minute) was "
        f"{load[0]:.1f} before the warm-up and {load[1]:.1f} after the last round. Both "
        "requests read the token and the state of its index's rows in one statement; the "
        "index each worker computed for that state is kept in its memory, and an archive "
        "is checked against it.",
        f"The first index request, which built the {SKILLS} archives (the 2 MiB one "
        f"included) on a freshly started worker: {first_index * 1000:.0f} ms.",
        "",
        f"**First build of the archive** ({build['entries']} entries, "
        f"{build['input_bytes'] / 2**20:.2f} MiB of random bytes), best of {builds} "
        "wall-clock timings each:",
        "",
        "| build | best ms | archive bytes | / `zip -0` | aim |",
        "| --- | ---: | ---: | ---: | --- |",
        f"| `zip -q -0 -X -D` (stored) | {stored * 1000:.1f} "
        f"| {build['zip']['stored_bytes']:,} | (reference) | |",
        f"| `zip -q -X -D` (deflate, level 6) | {build['zip']['deflate'] * 1000:.1f} "
        f"| {build['zip']['deflate_bytes']:,} | {build['zip']['deflate'] / stored:.2f}x | |",
        f"| `zip -q -0 -X -D` of SKILL.md alone (zip's start-up) "
        f"| {build['zip']['start'] * 1000:.1f} | – | {build['zip']['start'] / stored:.2f}x | |",
        f"| **Pixie `build_zip`** (stored; bytes in memory, archive in memory) "
        f"| {build['pixie'] * 1000:.1f} | {build['pixie_bytes']:,} "
        f"| **{build['pixie'] / stored:.2f}x** "
        f"{'✓' if build['pixie'] / stored <= BUILD_AIM else '✗'} | ≤ {BUILD_AIM:g}x |",
        f"| Pixie `build_archives` (the blobs read from PostgreSQL, `build_zip`, the "
        f"archive's sha256) | {build['archives'] * 1000:.1f} | {build['pixie_bytes']:,} "
        f"| {build['archives'] / stored:.2f}x | – |",
        "",
        "`zip`'s timings are of a process started each time (`subprocess.run`): they "
        "include its start-up (the SKILL.md-only row), reading the files from the page "
        "cache and writing the archive to a file; Pixie's `build_zip` is the function's "
        "wall clock on bytes already in memory, its archive kept in memory. The archives "
        "hold the same entries in the same order; `zip` adds no directory entries (-D) "
        "and no extra fields (-X), as Pixie's.",
        "",
    ]
    return "\n".join(lines)


def measure_throughput(stack, secret: str, args) -> dict:
    """Check the index and the archive answer what they should, then run the rounds."""
    base = f"/deliver/{secret}"
    index_path = f"{base}/.well-known/agent-skills/index.json"
    status, body, first_index = get(stack.port, index_path)
    if status != 200:
        raise RuntimeError(f"the index answered {status}: {body[:300]!r}")
    listed = json.loads(body)["skills"]
    if len(listed) != SKILLS:
        raise RuntimeError(f"the index lists {len(listed)} skills, not {SKILLS}")
    digest = next(s for s in listed if s["name"] == BIG_SLUG)["digest"].removeprefix("sha256:")
    archive_path = f"{base}/archives/{BIG_SLUG}/{digest}.zip"
    status, archive, _ = get(stack.port, archive_path)
    if status != 200 or hashlib.sha256(archive).hexdigest() != digest:
        raise RuntimeError(f"the archive answered {status}, {len(archive)} bytes")
    paths = {"livez": "/livez", "index": index_path, "archive": archive_path}
    measure = {
        "threads": args.threads,
        "stack_pids": process_group(stack.process.pid),
        "database_pids": postgres_pids(),
    }
    load_before = os.getloadavg()[0]
    log("warm-up (discarded)")
    for name, _ in ORDER:
        hammer(stack.port, name, paths[name], seconds=2, **measure)
    rounds: list[dict[str, Run]] = []
    for number in range(args.rounds):
        runs = {}
        for name, _ in ORDER if number % 2 == 0 else reversed(ORDER):
            runs[name] = hammer(stack.port, name, paths[name], seconds=args.seconds, **measure)
        rounds.append(runs)
        log(
            f"round {number + 1}: index {runs['index'].rps / runs['livez'].rps:.0%}, "
            f"archive {runs['archive'].rps / runs['livez'].rps:.0%} of /livez"
        )
    return {
        "rounds": rounds,
        "first_index": first_index,
        "archive_bytes": len(archive),
        "workers": stack.web_workers,
        "load": (load_before, os.getloadavg()[0]),
    }


def measure_build(token, builds: int) -> dict:
    """The first build, in this process, of the very entries the server zipped."""
    entry = next(e for e in token_index(token).served if e.slug == BIG_SLUG)
    wanted = {f.sha256 for f in entry.content.files}
    rows = FileBlob.objects.filter(sha256__in=wanted).values_list("sha256", "content")
    entries = list(archive_entries(entry.content, {sha: bytes(data) for sha, data in rows}))
    built = build_zip(entries)
    if hashlib.sha256(built).hexdigest() != entry.digest:
        raise RuntimeError("build_zip did not rebuild the archive the server served")
    log("timing the archive's build")
    return {
        "entries": len(entries),
        "input_bytes": sum(len(data) for _, data, _ in entries),
        "pixie": best_of(lambda: build_zip(entries), builds),
        "pixie_bytes": len(built),
        "archives": best_of(lambda: build_archives([entry.content]), builds),
        "zip": zip_times(entries, builds),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=8, help="concurrent client threads (8)")
    parser.add_argument("--seconds", type=float, default=5, help="each measured run, s (5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (3)")
    parser.add_argument("--builds", type=int, default=7, help="timings of each build (7)")
    args = parser.parse_args(argv)
    shown = argv if argv is not None else sys.argv[1:]
    database_url = os.environ.get("DATABASE_URL", "")
    if connection.vendor != "postgresql":
        log("needs PostgreSQL, which the server shares with this process: set DATABASE_URL")
        return 2
    command = shlex.join(
        [f"DATABASE_URL={database_url}", ".venv/bin/python", "benchmarks/delivery.py", *shown]
    )
    log(f"command: {command}")
    began = time.monotonic()
    token, secret = seed()
    log(f"seeded {SKILLS} skills, an agent and its token in {time.monotonic() - began:.1f} s")
    # The stack serves the test database this process seeded (committed: no transaction).
    stack_database = f"{database_url.rsplit('/', 1)[0]}/{connection.settings_dict['NAME']}"
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/5"
    with (
        tempfile.TemporaryDirectory(prefix="pixie-delivery-") as temporary,
        gunicorn(
            database_url=stack_database, redis_url=redis_url, workdir=Path(temporary)
        ) as stack,
    ):
        throughput = measure_throughput(stack, secret, args)
    build = measure_build(token, args.builds)
    rounds = throughput["rounds"]
    print(
        section(
            command=command,
            rounds=rounds,
            threads=args.threads,
            seconds=args.seconds,
            workers=throughput["workers"],
            first_index=throughput["first_index"],
            archive_bytes=throughput["archive_bytes"],
            build=build,
            builds=args.builds,
            load=throughput["load"],
        )
    )
    for name, aim, what in (
        ("index", INDEX_AIM, f"an agent's index of {SKILLS} skills"),
        ("archive", ARCHIVE_AIM, "a cached 2 MiB archive"),
    ):
        median = _median(r[name].rps / r["livez"].rps for r in rounds)
        record(
            f"Delivery: {what} at least {aim:.0%} of /livez's req/s",
            f"{median:.0%} (median of {len(rounds)} rounds, {args.threads} threads)",
            median >= aim,
        )
    ratio = build["pixie"] / build["zip"]["stored"]
    record(
        f"Delivery: first build of a 2 MiB archive within {BUILD_AIM:g}x of `zip -0`",
        f"{build['pixie'] * 1000:.1f} ms vs {build['zip']['stored'] * 1000:.1f} ms: {ratio:.2f}x",
        ratio <= BUILD_AIM,
    )
    errors = sum(run.errors for r in rounds for run in r.values())
    if errors:
        notes = [note for r in rounds for run in r.values() for note in run.notes]
        log(f"{errors} requests failed; first problems: {notes[:3]}")
    if stack.leftover:
        log(f"the stack left processes behind: {stack.leftover}")
    log(f"done in {time.monotonic() - began:.0f} s")
    return 1 if errors or stack.leftover else 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        teardown()
    sys.exit(code)
