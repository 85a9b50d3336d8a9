"""Checking a source (issue #43): a repository of 20 skills and 200 files served over HTTP
on loopback by git's own `git http-backend`, checked unchanged (one fetch, no draft) and
after a change to one skill (a draft, replacing the waiting one), next to a plain
`git fetch` of the same repository into a bare mirror in the same run.

    .venv/bin/python benchmarks/sources.py [RUNS]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/sources.py

SQLite by default (a throwaway test database, a temporary DATA_DIR for the mirror),
PostgreSQL when DATABASE_URL is set. The first check (a new mirror, the first draft) is
timed once; then RUNS rounds (default 20), each: one skill changed upstream (a commit
pushed into the served repository, not timed), `git fetch` of the change, the check of
the change, `git fetch` with nothing new, the check with nothing new. Prints a Markdown
section: each operation's median, p90 and max, and its database queries.
"""

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
WORK = Path(tempfile.mkdtemp(prefix="pixie-bench-sources-"))
os.environ["PIXIE_DATA_DIR"] = str(WORK / "data")  # the source's mirror goes there

from _setup import django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

from django.conf import settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from pixie.sources.models import Source  # noqa: E402
from pixie.sources.services import source_check  # noqa: E402
from tests.sources.git_server import (  # noqa: E402
    Upstream,
    git_environment,
    git_server_running,
    run_git,
)

# The server is on 127.0.0.1, which a source reaches only with this on.
settings.PIXIE_SOURCES_ALLOW_PRIVATE = True
settings.DEBUG = False  # CaptureQueriesContext counts the queries all the same

SKILLS, FILES_PER_SKILL = 20, 10  # SKILL.md and 9 more: 200 files
METADATA = {"slug": "bench-sources", "name": "Bench sources", "publisher": "bench"}
PARAGRAPH = (
    "Read the ledger entry first, then the customer's last message, and answer in the "
    "customer's language; name the invoice by its number and its date.\n"
)


def skill_files(n: int, edition: int = 0) -> dict[str, str]:
    """Skill ``n``'s files (SKILL.md and 9 more); ``edition`` changes one reference."""
    name = f"ledger-task-{n:02d}"
    files = {
        "SKILL.md": f"---\nname: {name}\ndescription: Use when ledger task {n} is asked "
        f"for, to reconcile, chase or report on invoices step by step.\n---\n\n"
        f"# Ledger task {n}\n\n{PARAGRAPH * 20}",
        "scripts/check.py": f'"""Check ledger task {n}."""\n\nprint("ledger task {n}: ok")\n',
        "scripts/report.sh": f"#!/bin/sh\necho 'ledger task {n}'\n",
    }
    for page in range(1, 5):
        files[f"references/part-{page}.md"] = f"# Part {page} of task {n}\n\n{PARAGRAPH * 40}"
    for sheet in range(1, 4):
        files[f"assets/sheet-{sheet}.csv"] = "invoice,amount\n" + "".join(
            f"INV-{n:02d}{row:04d},{row * 7 % 1000}.00\n" for row in range(200)
        )
    files["references/part-1.md"] += f"\nEdition {edition}.\n" if edition else ""
    assert len(files) == FILES_PER_SKILL
    return {f"skills/{name}/{path}": text for path, text in files.items()}


def ms(seconds: list[float]) -> tuple[float, float, float]:
    """(median, p90, max) in milliseconds."""
    values = sorted(s * 1000 for s in seconds)
    p90 = statistics.quantiles(values, n=10, method="inclusive")[8] if values[1:] else values[0]
    return statistics.median(values), p90, values[-1]


def timed(run) -> tuple[float, int, object]:
    """(seconds, database queries, what ``run`` returned)."""
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - started
    return seconds, len(queries), result


def main(runs: int):
    home = WORK / "home"
    home.mkdir()
    env = git_environment(home)
    with git_server_running(WORK / "served") as server:
        upstream = Upstream(server, "ledger", home)
        for n in range(SKILLS):
            for path, text in skill_files(n).items():
                upstream.write(path, text, executable=path.endswith(".sh"))
        upstream.commit("Twenty ledger skills")
        upstream.push()
        files = len(upstream.git("ls-files").splitlines())
        assert files == SKILLS * FILES_PER_SKILL, files

        reference = WORK / "reference.git"
        run_git("init", "--quiet", "--bare", str(reference), cwd=home, env=env)

        def git_fetch():
            run_git("fetch", "--quiet", "--no-tags", upstream.url,
                    "+refs/heads/main:refs/heads/main", cwd=reference, env=env)  # fmt: skip

        git_fetch()
        source = Source.objects.create(url=upstream.url, ref="main", metadata=METADATA)

        def check(expected: str):
            def run():
                checked = source_check(source)
                assert checked.last_result == expected, checked.last_message
                return checked

            return run

        first = timed(check("draft"))
        assert first[2].waiting_draft.version == "1.0.0"
        times: dict[str, list[float]] = {name: [] for name in OPERATIONS}
        queries: dict[str, list[int]] = {name: [] for name in OPERATIONS}
        for run in range(1, runs + 1):
            n = run % SKILLS
            for path, text in skill_files(n, edition=run).items():
                upstream.write(path, text, executable=path.endswith(".sh"))
            upstream.commit(f"Ledger task {n}: edition {run}")
            upstream.push()
            steps = [
                ("git fetch, one skill changed", git_fetch),
                ("check, one skill changed (a draft replaced)", check("draft")),
                ("git fetch, nothing new", git_fetch),
                ("check, nothing new", check("unchanged")),
            ]
            for name, step in steps:
                seconds, count, _ = timed(step)
                times[name].append(seconds)
                queries[name].append(count)
        source.refresh_from_db()
        assert source.waiting_draft.version == "1.0.0"  # each draft replaced the last

    print("## Sources: checking a git repository\n")
    print(f"{connection.vendor}; a repository of {SKILLS} skills and {files} files (no "
          "bundle.toml: the source's metadata),")  # fmt: skip
    print("served over HTTP on 127.0.0.1 by `git http-backend` (a threaded http.server")
    print("running the CGI once per request, tests/sources/git_server.py).")
    print(f"{runs} rounds; each commits a change to one skill's reference file upstream (not")
    print("timed), then `git fetch` of it into a bare mirror, the check of it (fetch, read")
    print("the 20 skill folders, compare, a draft in place of the waiting one), `git fetch`")
    print("with nothing new, and the check with nothing new (the ref's listing and one")
    print("fetch: nothing read). The git fetch is the reference, timed in the same run.\n")
    print("| operation | median ms | p90 / max ms | queries | median vs git fetch |")
    print("| --- | ---: | ---: | ---: | ---: |")
    seconds, count, _ = first
    print(f"| first check (a new mirror, the first draft), once | {seconds * 1000:.0f} | | "
          f"{count} | |")  # fmt: skip
    for name, reference_name in OPERATIONS.items():
        median, p90, top = ms(times[name])
        low, high = min(queries[name]), max(queries[name])
        counted = f"{low}" if low == high else f"{low}–{high}"
        ratio = f"{median / ms(times[reference_name])[0]:.1f}x" if reference_name else ""
        print(f"| {name} | {median:.0f} | {p90:.0f} / {top:.0f} | {counted} | {ratio} |")
    print()


# Each operation, and the git fetch it is set against.
OPERATIONS = {
    "check, nothing new": "git fetch, nothing new",
    "git fetch, nothing new": "",
    "check, one skill changed (a draft replaced)": "git fetch, one skill changed",
    "git fetch, one skill changed": "",
}


if __name__ == "__main__":
    try:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
    finally:
        teardown()
        shutil.rmtree(WORK, ignore_errors=True)
