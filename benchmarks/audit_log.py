"""The audit log at scale: 1,000,000 recorded changes (PostgreSQL only).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf \
        .venv/bin/python benchmarks/audit_log.py [ROWS]

Seeds a throwaway test database with ROWS revisions (default 1,000,000) spread over a
year, 100 workspaces and the catalog, 20 people and every path, each with one recorded
object, chained as Pixie chains them (pixie.core.audit.chain computes every digest), plus one
change that recorded 5,000 objects. Rows go in with COPY: the point is reading them.

Then, as an auditor with Django's test client: the admin's audit log (first page, a
page half-way down, and each filter), GET /api/audit/ and a cursor page, one
workspace's CSV export, the first 100,000 rows of the whole JSON Lines export, and
`audit_verify` over every chain. Prints a Markdown section: what, queries, median time.
"""

import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from django.conf import settings  # noqa: E402

# As production serves the pages: no query log kept, templates without debug information.
settings.DEBUG = False

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.contrib.contenttypes.models import ContentType  # noqa: E402
from django.test import Client  # noqa: E402

from catalog.models import WorkspaceSkill  # noqa: E402
from pixie.core.audit.chain import (  # noqa: E402
    FORM,
    anchor_text,
    chain_key,
    chain_verify,
    entry_digest,
    head_text,
    seal,
)
from pixie.core.audit.log import (  # noqa: E402
    LISTED_OBJECTS,
    SHOWN_OBJECTS,
    AuditQuery,
    audit_entries,
    audit_page,
)
from pixie.core.models import Workspace  # noqa: E402
from pixie.core.people.permissions import AUDITORS_GROUP  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
WORKSPACES, PEOPLE, BIG = 100, 20, 5_000
RUNS = 5
CHANNELS = ["admin", "api", "task", "command"]
LOG = "/admin/pixie/auditentry/"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def seed() -> dict:
    User = get_user_model()
    people = [User.objects.create_user(f"person-{n}") for n in range(PEOPLE)]
    workspaces = Workspace.objects.bulk_create(
        Workspace(slug=f"team-{n}", name=f"Team {n}") for n in range(WORKSPACES)
    )
    skill_type = ContentType.objects.get_for_model(WorkspaceSkill)
    workspace_type = ContentType.objects.get_for_model(Workspace)
    labels = {
        skill_type.pk: f"{skill_type.app_label}.{skill_type.model}",
        workspace_type.pk: "pixie.workspace",
    }
    start = datetime.now(UTC) - timedelta(days=365)
    step = timedelta(days=365) / ROWS
    heads: dict[str, tuple[int, str]] = {}
    version_id = 0
    revision_rows, version_rows, entry_rows = [], [], []
    for n in range(1, ROWS + 2):
        big = n == ROWS // 2  # one change, half-way down, that recorded BIG objects
        at = start + step * n
        person = people[n % PEOPLE].pk
        in_catalog = n % 10 == 0
        workspace = None if in_catalog else workspaces[n % WORKSPACES]
        comment = (
            f"Published bundle-{n % 997} 1.{n % 13}.0"
            if in_catalog
            else f"Edited skill @skill-{n % 5000} of {workspace.slug}"
        )
        revision_rows.append((n, at, person, comment))
        objects = []
        for k in range(BIG if big else 1):
            version_id += 1
            kind = workspace_type.pk if in_catalog else skill_type.pk
            fields = json.dumps(
                [{"model": labels[kind], "pk": k + 1, "fields": {
                    "workspace": None if in_catalog else workspace.pk,
                    "slug": f"skill-{(n + k) % 5000}",
                }}]
            )  # fmt: skip
            name = f"@skill-{(n + k) % 5000}"
            version_rows.append((version_id, str(k + 1), "json", fields, name, kind, n, "default"))
            objects.append((labels[kind], str(k + 1), "default", "json", fields, name))
        scope = "catalog" if in_catalog else "workspace"
        entry = {
            "workspace_id": None if in_catalog else workspace.pk,
            "scope": scope,
            "channel": CHANNELS[n % 4],
            "plan_id": (n // 50) if n % 7 == 0 else None,
            "object_count": len(objects),
            "workspace_key": None if in_catalog else workspace.pk,
        }
        key = chain_key(scope, entry["workspace_id"])
        length, previous = heads.get(key, (0, ""))
        digest = entry_digest(
            previous=previous, chain=key, sequence=length + 1,
            revision={"id": n, "date_created": at, "user_id": person, "comment": comment},
            entry=entry, objects=objects, form=FORM,
        )  # fmt: skip
        heads[key] = (length + 1, digest)
        entry_rows.append(
            (n, n, entry["workspace_id"], scope, entry["channel"], entry["plan_id"],
             len(objects), key, length + 1, digest, entry["workspace_key"], FORM)
        )  # fmt: skip
        if len(revision_rows) >= 50_000 or n == ROWS + 1:
            _copy(revision_rows, version_rows, entry_rows)
            revision_rows, version_rows, entry_rows = [], [], []
            log(f"  {n:,} revisions")
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO pixie_auditchain (key, length, head, seal) VALUES (%s, %s, %s, %s)",
            [
                (key, length, head, seal(head_text(key, length, head)))
                for key, (length, head) in heads.items()
            ],
        )
        chains = "\n".join(sorted(heads))
        cursor.execute(
            # The anchor's one row may exist already (made with the first chain): replaced.
            "INSERT INTO pixie_auditanchor (id, chains, seal) VALUES (1, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET chains = EXCLUDED.chains, seal = EXCLUDED.seal",
            [chains, seal(anchor_text(chains))],
        )
        for table in ("reversion_revision", "reversion_version", "pixie_auditentry"):
            cursor.execute(  # our own three table names, not input
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
                f"(SELECT MAX(id) FROM {table}))"
            )
        cursor.execute("ANALYZE")
    return {"people": people, "workspaces": workspaces}


def _copy(revisions, versions, entries) -> None:
    with connection.cursor() as cursor:
        raw = cursor.connection
        with raw.cursor() as c:
            with c.copy(
                "COPY reversion_revision (id, date_created, user_id, comment) FROM STDIN"
            ) as copy:
                for row in revisions:
                    copy.write_row(row)
            with c.copy(
                "COPY reversion_version (id, object_id, format, serialized_data, object_repr, "
                "content_type_id, revision_id, db) FROM STDIN"
            ) as copy:
                for row in versions:
                    copy.write_row(row)
            with c.copy(
                "COPY pixie_auditentry (id, revision_id, workspace_id, scope, channel, plan_id, "
                "object_count, chain, sequence, digest, workspace_key, form) FROM STDIN"
            ) as copy:
                for row in entries:
                    copy.write_row(row)


def measure(browser: Client, url: str) -> tuple[int, float]:
    """(queries, median milliseconds) over RUNS fetches, after one warm-up."""
    queries = []
    with connection.execute_wrapper(lambda execute, *args: queries.append(1) or execute(*args)):
        response = browser.get(url)
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    timings = []
    for _ in range(RUNS):
        started = time.perf_counter()
        response = browser.get(url)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
        timings.append(time.perf_counter() - started)
    return len(queries), statistics.median(timings) * 1000


# The first page's rows read bare, for the reference: the 50 newest entries (one more, to
# know there is an older page) with their revision, person and workspace, by keyset on
# the revision, and each one's first objects (as many as a row of the page names).
BARE_ENTRIES = """
    SELECT e.revision_id, e.*, r.date_created, r.comment, u.username, w.slug, w.name
    FROM pixie_auditentry e
    JOIN reversion_revision r ON r.id = e.revision_id
    LEFT JOIN auth_user u ON u.id = r.user_id
    LEFT JOIN pixie_workspace w ON w.id = e.workspace_id
    ORDER BY e.revision_id DESC
    LIMIT 51
"""
BARE_OBJECTS = """
    SELECT revision_id, content_type_id, object_id, object_repr FROM (
        SELECT v.*, row_number() OVER (PARTITION BY v.revision_id ORDER BY v.id) AS place
        FROM reversion_version v WHERE v.revision_id = ANY(%s)
    ) numbered
    WHERE place <= %s ORDER BY revision_id, id
"""


def median_ms(read) -> float:
    """Median milliseconds of RUNS calls of ``read`` (the caller has warmed it up)."""
    timings = []
    for _ in range(RUNS):
        started = time.perf_counter()
        read()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000


def bare_keyset_select(first: int) -> float:
    """Median milliseconds of the two bare SELECTs above, after one warm-up."""

    def read():
        with connection.cursor() as cursor:
            cursor.execute(BARE_ENTRIES)
            revisions = [row[0] for row in cursor.fetchall()]
            cursor.execute(BARE_OBJECTS, [revisions, first])
            return len(revisions), len(cursor.fetchall())

    entries, _ = read()
    assert entries == 51, entries
    return median_ms(read)


def page_read(first: int) -> float:
    """Median milliseconds of Pixie's own read of the first page (pixie.core.audit.log, as the
    admin's page and the API read it), objects included, after one warm-up."""

    def read():
        page = audit_page(audit_entries(AuditQuery()), first=first)
        return sum(len(entry["objects"]) for entry in page.entries)

    read()
    return median_ms(read)


def days_ago(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).date().isoformat()


def main() -> list[str]:
    started = time.perf_counter()
    seed()
    log(f"seeded {ROWS:,} revisions in {time.perf_counter() - started:.0f} s")
    auditor = get_user_model().objects.create_user("auditor", is_staff=True)
    auditor.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    browser = Client()
    browser.force_login(auditor)
    middle = ROWS // 2
    pages = [
        ("The log, first page", LOG),
        ("A page half-way down (`before=`)", f"{LOG}?before={middle}"),
        ("One person", f"{LOG}?person=person-7"),
        ("One workspace", f"{LOG}?workspace=team-42"),
        ("The catalog", f"{LOG}?workspace=catalog"),
        ("One object type", f"{LOG}?type=pixie.workspace"),
        ("One plan", f"{LOG}?plan={middle // 50}"),
        ("A week, half-way down", f"{LOG}?since={days_ago(180)}&until={days_ago(174)}"),
        ("A search of comments", f"{LOG}?search=bundle-996"),
        ("API: GET /api/audit/", "/api/audit/"),
        ("API: one workspace, by cursor", "/api/audit/?workspace=team-42"),
    ]
    lines = [
        "## The audit log at scale",
        "",
        f"{ROWS:,} recorded changes (one object each, and one of {BIG:,} objects), "
        f"{WORKSPACES} workspaces and the catalog, {PEOPLE} people, read by an auditor with "
        f"DEBUG off, as production serves them; median of {RUNS} after a warm-up.",
        "",
        "| Page | Queries | Median |",
        "| --- | ---: | ---: |",
    ]
    for what, url in pages:
        queries, ms = measure(browser, url)
        log(f"  {what}: {queries} queries, {ms:.0f} ms")
        lines.append(f"| {what} | {queries} | {ms:,.0f} ms |")
        if url == LOG:
            first_page = ms
        elif url == "/api/audit/":
            api_page = ms
    record(f"audit log's first page < 500 ms at {ROWS:,} rows", f"{first_page:.0f} ms",
           first_page < 500)  # fmt: skip
    # The page against reading its rows bare (the same two SELECTs, by hand): Pixie's read
    # of the page (what the admin's page and the API run), and each whole request, the
    # admin's (HTML) and the API's (JSON). A request showing no row (an empty page, found
    # by index) is each one's fixed cost: what any page of it costs whatever it shows.
    bare = bare_keyset_select(SHOWN_OBJECTS)
    bare_api = bare_keyset_select(LISTED_OBJECTS)
    read = page_read(SHOWN_OBJECTS)
    _, empty_page = measure(browser, f"{LOG}?before=1")
    _, empty_api = measure(browser, "/api/audit/?plan=999999999")
    rows_page, rows_api = first_page - empty_page, api_page - empty_api
    record(
        "audit log's first page within 3x of a bare keyset SELECT of the same rows "
        "(met on the page's read; the whole requests beside it)",
        f"the page's read {read:.1f} ms vs {bare:.1f} ms: {read / bare:.1f}x; whole requests: "
        f"the API's {api_page:.1f} ms ({api_page / bare_api:.1f}x; its rows "
        f"{rows_api / bare_api:.1f}x above an empty page's {empty_api:.1f} ms), the admin's "
        f"{first_page:.1f} ms ({first_page / bare:.1f}x; its rows {rows_page / bare:.1f}x "
        f"above an empty page's {empty_page:.1f} ms)",
        read <= 3 * bare,
    )
    lines += [
        f"| A bare keyset SELECT of the first page's rows ({SHOWN_OBJECTS} objects each) "
        f"| 2 | {bare:,.1f} ms |",
        f"| The same for the API's page ({LISTED_OBJECTS} objects each) | 2 | {bare_api:,.1f} ms |",
        f"| The first page's read, as Pixie reads it (`pixie.core.audit.log.audit_page`) | 2 | "
        f"{read:,.1f} ms |",
        f"| The admin's page showing no row (`before=1`): its fixed cost | — | "
        f"{empty_page:,.1f} ms |",
        f"| The API's page showing no row (a plan with no changes): its fixed cost | — | "
        f"{empty_api:,.1f} ms |",
    ]
    # Exports: one workspace whole; the first 100,000 rows of everything.
    one = ROWS // WORKSPACES * 9 // 10
    queries, ms = measure(browser, f"{LOG}export.csv?workspace=team-42")
    lines.append(f"| CSV export of one workspace (about {one:,} rows) | {queries} | {ms:,.0f} ms |")
    response = browser.get(f"{LOG}export.jsonl")
    started, count = time.perf_counter(), 0
    for chunk in response.streaming_content:
        count += chunk.count(b"\n")
        if count >= 100_000:
            break
    seconds = time.perf_counter() - started
    lines.append(
        f"| JSON Lines export, the first {count:,} rows of all | — | {seconds * 1000:,.0f} ms "
        f"({count / seconds:,.0f} rows/s) |"
    )
    started = time.perf_counter()
    report = chain_verify()
    seconds = time.perf_counter() - started
    assert report.problems == [], report.problems
    lines += [
        "",
        f"`audit_verify` over {report.entries:,} entries in {report.chains} chains: "
        f"{seconds:,.0f} s ({report.entries / seconds:,.0f} entries/s), every digest matching.",
        "",
    ]
    return lines


if __name__ == "__main__":
    try:
        print("\n".join(main()))
    finally:
        teardown()
