"""The query plans of the hot paths, on data from bench_seed, as a Markdown section.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<name> .venv/bin/python benchmarks/explain.py

Seeds a throwaway test database (20 workspaces of 10,000 skills with two
revisions each, 100 agents x 50 skills per workspace, 10,000 published bundles
of 5 skills, one bundle of 50), runs each hot path once while recording every
query and the line of Pixie code that sent it, then runs EXPLAIN (ANALYZE,
BUFFERS) on each distinct SELECT/UPDATE/DELETE (writes inside a rolled-back
savepoint). Prints ``## Query plans``: per path, its queries, the scans the
plan chose, and the execution time; a sequential scan over more than
SEQ_SCAN_FINE rows is flagged. Progress goes to stderr. PostgreSQL only.
"""

import re
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import ROOT, django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from agents.models import Agent, AgentSkill  # noqa: E402
from benchmarks.bench_data import SeedSizes, seed  # noqa: E402
from catalog.models import BundleVersion, Plan, WorkspaceSkill  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402
from pixie.installer.plan_apply import plan_apply  # noqa: E402
from pixie.installer.plans import plan_create  # noqa: E402
from pixie.installer.repoint import repoint_create  # noqa: E402

TRANSACTION_CONTROL = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")
SEQ_SCAN_FINE = 1000  # rows; below this a sequential scan is the right plan
SHOWN_FAST = 0.5  # ms; faster index-only queries are summarised, not listed
PROJECT_DIRS = ("catalog/", "agents/", "pixie/", "egress/")
# Middleware and the seed itself (the caller is named).
NOT_CALLERS = {"pixie/core/logs.py", "benchmarks/bench_data.py"}


# What these plans showed when the script was written, and what was done about it.
FINDINGS = [
    "### What the plans showed",
    "",
    "- Fixed: reading a workspace's 10,000 skills for a plan sorted them by the workspace's "
    "slug (the model's default ordering joins `pixie_workspace`) for a dict that needs no "
    "order: 20 ms, now an unordered index scan, 1.5 ms.",
    "- Fixed: the admin bundle list grouped every bundle with its versions to count them "
    "(two sequential scans of 10,000 rows, 14 ms + 7 ms for the count); it now reads the "
    "page's rows off the new `bundle_by_name` index (name, slug) and counts versions by "
    "subquery, 1 ms.",
    "- Fixed: apply's last-position aggregate grouped by the agent's ordering columns, "
    "joining every agent (2.5 ms), now an index scan on the agent's attachments.",
    "- Fine: sequential scans of tools, memberships, publishers and workspaces (tens of rows), "
    "and of a plan's own rows.",
    "- Fine, on paper: `repoint_steps` hash-joins whole tables because this workspace holds "
    "half of all attachments; a workspace holding a small share gets index scans. Its "
    "revision joins still read all revisions, the next cost at 10x.",
    "- Not an index question: a repoint chunk's UPDATE spends its time maintaining the "
    "indexes of the rows it moves; a (pinned_revision, id) index was tried, not chosen by the "
    "planner, and would only add write cost, so it was not kept. Chunks find their rows by "
    "keyset (after the last id moved), so a late chunk costs what an early one does.",
    "- Fixed: the catalog API bundle list filters published bundles with EXISTS instead of "
    "joining and de-duplicating every version, and takes its page and count in one query; "
    "the share import reads the workspace's slugs unordered.",
    "- Fixed: that one query ranked every visible version by two window functions (sequential "
    "scans of all versions and bundles, 77 ms); it now walks the `bundle_by_name` index with "
    "LIMIT/OFFSET as parameters, reads only the page's versions, and counts the bundles "
    "from the `bundle_version_visibility` index (bundle, review, status), index-only.",
    "",
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Recorder:
    """Every query with the innermost line of Pixie code that sent it."""

    def __init__(self):
        self.queries: list[tuple[str, str]] = []

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not many:
            text = connection.ops.last_executed_query(context["cursor"], sql, params)
            self.queries.append((text, self._caller()))
        return result

    @staticmethod
    def _caller() -> str:
        for frame in reversed(traceback.extract_stack()[:-2]):
            path = Path(frame.filename)
            try:
                relative = path.resolve().relative_to(ROOT).as_posix()
            except ValueError:
                continue
            if relative.startswith(PROJECT_DIRS) and relative not in NOT_CALLERS:
                return f"`{relative}:{frame.lineno}` {frame.name}"
        return "Django (admin, DRF, session)"


def main_table(sql: str) -> str:
    match = re.search(r'(?:FROM|UPDATE|INTO)\s+"(\w+)"', sql)
    return match.group(1) if match else "?"


def normalised(sql: str) -> str:
    return re.sub(r"\b\d+\b|'[^']*'", "?", sql)


def scans(node: dict, found: list[str]) -> None:
    kind = node["Node Type"]
    relation = node.get("Relation Name")
    if relation:
        rows = node.get("Actual Rows", 0) * node.get("Actual Loops", 1)
        examined = rows + node.get("Rows Removed by Filter", 0) * node.get("Actual Loops", 1)
        index = f" using {node['Index Name']}" if node.get("Index Name") else ""
        flag = " **big seq scan**" if kind == "Seq Scan" and examined > SEQ_SCAN_FINE else ""
        found.append(f"{kind}{index} on {relation} ({examined:,} rows){flag}")
    for child in node.get("Plans", []):
        scans(child, found)


def explain(sql: str) -> tuple[str, list[str], float]:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)
        [[plan]] = cursor.fetchall()
        transaction.set_rollback(True)
    plan = plan[0] if isinstance(plan, list) else plan
    found: list[str] = []
    scans(plan["Plan"], found)
    return plan["Plan"]["Node Type"], found, plan["Execution Time"]


def report(title: str, recorded: list[tuple[str, str]]) -> list[str]:
    statements = [sql for sql, _ in recorded if not sql.startswith(TRANSACTION_CONTROL)]
    lines = [f"### {title}", "", f"{len(statements)} statements.", ""]
    seen: set[str] = set()
    rows, quiet = [], 0
    for sql, caller in recorded:
        key = normalised(sql)
        verb = sql.lstrip().split(None, 1)[0].upper()
        if key in seen or verb not in {"SELECT", "UPDATE", "DELETE"}:
            continue
        seen.add(key)
        top, found, ms = explain(sql)
        slow = any("big seq scan" in s for s in found)
        if ms < SHOWN_FAST and not slow:
            quiet += 1
            continue
        what = f"{caller}: {verb} {main_table(sql)}"
        rows.append((ms, f"| {what} | {top}: {'; '.join(found) or '-'} | {ms:.2f} |"))
    if rows:
        lines += ["| sent by: statement | plan (scans) | execution ms |", "| --- | --- | ---: |"]
        lines += [row for _ms, row in sorted(rows, key=lambda r: -r[0])]
        lines.append("")
    lines.append(
        f"{quiet} other distinct statements ran in under {SHOWN_FAST} ms with no big "
        "sequential scan."
    )
    lines.append("")
    return lines


def recording(function, *, rolled_back: bool = False):
    """The statements `function` sends. Rolled back, the data is as it was before, so the
    EXPLAIN of each statement (run later) sees what the statement saw."""
    recorder = Recorder()
    with transaction.atomic(), connection.execute_wrapper(recorder):
        function()
        transaction.set_rollback(rolled_back)
    return recorder.queries


def main() -> list[str]:
    if connection.vendor != "postgresql":
        raise SystemExit("explain.py needs PostgreSQL: set DATABASE_URL")
    started = time.perf_counter()
    fleet = seed(
        sizes=SeedSizes(
            workspaces=20,
            skills_per_workspace=10_000,
            revisions_per_skill=2,
            agents_per_workspace=100,
            skills_per_agent=50,
            bundles=10_000,
            skills_per_bundle=5,
        ),
        prefix="bench",
        progress=log,
    )
    big = seed(sizes=SeedSizes(workspaces=0, bundles=1, skills_per_bundle=50), prefix="big")
    # The repoint shape: many agents on few skills, 80,000 pins behind the head.
    pins = seed(
        sizes=SeedSizes(
            workspaces=1,
            skills_per_workspace=10,
            agents_per_workspace=10_000,
            skills_per_agent=10,
            bundles=0,
        ),
        prefix="fleet",
    )
    total = fleet.total + big.total + pins.total
    log(f"seeded {total:,} rows in {time.perf_counter() - started:.1f} s")

    workspace = Workspace.objects.get(pk=fleet.workspace_ids[0])
    owner = Membership.objects.get(workspace=workspace, role="owner").user
    big_version = BundleVersion.objects.get(pk=big.bundle_version_ids[0])
    agents = list(Agent.objects.filter(workspace=workspace).order_by("pk")[:5])
    out = [
        "## Query plans",
        "",
        f"EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL over bench_seed data: "
        f"{total:,} rows ({WorkspaceSkill.objects.count():,} workspace "
        f"skills, {AgentSkill.objects.count():,} agent skills, "
        f"{BundleVersion.objects.count():,} bundle versions). Each hot path ran once; every "
        f"distinct statement it sent is explained. A sequential scan over more than "
        f"{SEQ_SCAN_FINE:,} rows is flagged; smaller ones (tools, memberships, a plan's own "
        "rows) are the right plan.",
        "",
    ]
    holder = {}

    def create():
        holder["plan"] = plan_create(
            workspace=workspace,
            kind="install",
            bundle_version=big_version,
            agents=agents,
            actor=owner,
        )

    log("plan create")
    out += report(
        "Plan creation: install of a 50-skill bundle into a 10,000-skill workspace",
        recording(create),
    )
    plan = holder["plan"]
    Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)
    log("plan apply")
    out += report(
        "Plan apply of that plan",
        recording(lambda: plan_apply(plan_id=plan.pk), rolled_back=True),
    )

    fleet_workspace = Workspace.objects.get(pk=pins.workspace_ids[0])
    fleet_owner = Membership.objects.get(workspace=fleet_workspace, role="owner").user

    def repoint():
        created = recording(
            lambda: holder.update(
                repoint=repoint_create(workspace=fleet_workspace, actor=fleet_owner)
            )
        )
        pk = holder["repoint"].pk
        Plan.objects.filter(pk=pk).update(status="approved", decided_by=fleet_owner)
        return created + recording(lambda: plan_apply(plan_id=pk), rolled_back=True)

    log("repoint")
    out += report(
        "Repoint create and apply: 80,000 of 100,000 agent skills pinned behind (10,000 agents)",
        repoint(),
    )

    browser = Client()
    browser.force_login(owner)
    bundle = big_version.bundle

    def api():
        for url in (
            reverse("bundle-list"),
            reverse("bundle-detail", args=[bundle.slug]),
            reverse("bundle-version-detail", args=[bundle.slug, big_version.version]),
        ):
            assert browser.get(url).status_code == 200, url

    log("catalog API")
    out += report(
        "Catalog API: bundle list (10,000 bundles), bundle and version detail", recording(api)
    )

    operator = browser_for(fleet.operator_id)
    log("admin pages")
    out += report(
        "Admin bundle changelist, 10,000 bundles (operator)",
        recording(lambda: get(operator, reverse("admin:catalog_bundle_changelist"))),
    )
    fresh = plan_create(
        workspace=Workspace.objects.get(pk=fleet.workspace_ids[1]),
        kind="install",
        bundle_version=big_version,
        actor=Membership.objects.get(workspace_id=fleet.workspace_ids[1], role="owner").user,
    )
    out += report(
        "Admin plan page, a 50-skill install plan (owner)",
        recording(
            lambda: get(
                browser_for(fresh.created_by_id),
                reverse("admin:catalog_plan_review", args=[fresh.pk]),
            )
        ),
    )
    agent = agents[0]
    out += report(
        "Admin agent pages, an agent with 50 skills in a 10,000-skill workspace (owner)",
        recording(
            lambda: [
                get(browser, reverse(name, args=[agent.pk]))
                for name in ("admin:agents_agent_change", "admin:agents_agent_skills")
            ]
        ),
    )
    log("share import")
    out += report(
        "Share import: 12 skills merged into a 10,000-skill workspace",
        share_import_queries(fleet, owner),
    )
    return out + FINDINGS


def browser_for(user_id: int) -> Client:
    from django.contrib.auth import get_user_model

    browser = Client()
    browser.force_login(get_user_model().objects.get(pk=user_id))
    return browser


def get(browser: Client, url: str) -> None:
    response = browser.get(url)
    assert response.status_code == 200, (url, response.status_code)


def share_import_queries(fleet, receiver):
    """A sender with 12 skills mentioning each other shares them with workspace 0."""
    from catalog.services.workspace_skills import skill_create
    from pixie.sharing import services as sharing
    from pixie.sharing.models import Message

    receiving = Workspace.objects.get(pk=fleet.workspace_ids[0])
    sending = Workspace.objects.get(pk=fleet.workspace_ids[2])
    sender = Membership.objects.get(workspace=sending, role="owner").user
    slugs = [f"shared-step-{i}" for i in range(12)]
    for i, slug in reversed(list(enumerate(slugs))):
        mention = f" Then @{slugs[i + 1]}." if i + 1 < len(slugs) else ""
        skill_create(
            workspace=sending,
            slug=slug,
            name=f"Shared step {i}",
            short_description="Shared.",
            body=f"Step {i} with @query-ledger.{mention}",
            actor=sender,
        )
    # Half of the slugs are taken in the receiving workspace: re-slug and cascade.
    for slug in slugs[::2]:
        skill_create(
            workspace=receiving,
            slug=slug,
            name="Someone else's",
            short_description="Other.",
            body="A different procedure.",
            actor=receiver,
        )
    # Each owner lists their workspace in the server's directory, as a local contact needs.
    sharing.directory_listing_set(workspace=sending, listed=True, actor=sender)
    sharing.directory_listing_set(workspace=receiving, listed=True, actor=receiver)
    contact = sharing.contact_add_local(workspace=sending, other_slug=receiving.slug, actor=sender)
    sharing.contact_add_local(workspace=receiving, other_slug=sending.slug, actor=receiver)
    root = WorkspaceSkill.objects.get(workspace=sending, slug=slugs[0])
    sharing.share_send(workspace=sending, skill=root, contact=contact, actor=sender)
    message = Message.objects.get(workspace=receiving, direction="in")
    return recording(
        lambda: sharing.share_import(workspace=receiving, message=message, actor=receiver)
    )


if __name__ == "__main__":
    try:
        lines = main()
    finally:
        teardown()
    print("\n".join(lines))
