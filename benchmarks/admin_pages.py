"""Query count and render time of the admin's heaviest pages, as a Markdown section.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python benchmarks/admin_pages.py

Seeds a throwaway test database with bench_seed (10,000 published bundles; two
workspaces of 10,000 skills whose agents have 50 skills each; a 50-skill
bundle), proposes a 50-skill install plan, and fetches each page RUNS times
with Django's test client, logged in as the person who uses it: the operator
for the bundle list, the workspace owner for the plan and agent pages. Prints
``## Admin pages``: page, data size, queries, median render time, HTML size.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from agents.models import Agent  # noqa: E402
from benchmarks.bench_data import SeedSizes, seed  # noqa: E402
from catalog.models import BundleVersion  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402
from pixie.installer.plans import plan_create  # noqa: E402

RUNS = 7


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def browser_for(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def measure(browser: Client, url: str) -> tuple[int, float, int, float]:
    """(queries, median seconds, bytes) over RUNS fetches, after one warm-up, and the
    warm-up's own seconds (the first visit)."""
    started = time.perf_counter()
    response = browser.get(url)
    first = time.perf_counter() - started
    assert response.status_code == 200, (url, response.status_code)
    # Counted at the cursor: the request_started signal empties connection.queries.
    queries = []
    with connection.execute_wrapper(lambda execute, *args: queries.append(1) or execute(*args)):
        browser.get(url)
    timings = []
    for _ in range(RUNS):
        started = time.perf_counter()
        response = browser.get(url)
        timings.append(time.perf_counter() - started)
    return len(queries), statistics.median(timings), len(response.content), first


def next_draft(published: BundleVersion) -> BundleVersion:
    """A draft after ``published``: the same skills, five of them changed (a new skill
    version each, its body a paragraph longer)."""
    from catalog.models import BundleSkill, SkillVersion

    draft = BundleVersion.objects.create(
        bundle=published.bundle, version="99.0.0", notes="Five skills say more."
    )
    entries = list(published.skills.select_related("skill_version").order_by("position"))
    rows = []
    for n, entry in enumerate(entries):
        version = entry.skill_version
        if n % 10 == 0:
            version = SkillVersion.objects.create(
                package_id=version.package_id,
                version="99.0.0",
                name=version.name,
                description=version.description,
                body=version.body + "\n\nRead the ledger again before answering.\n",
            )
        rows.append(BundleSkill(bundle_version=draft, skill_version=version, position=n + 1))
    BundleSkill.objects.bulk_create(rows)
    return draft


def main() -> list[str]:
    started = time.perf_counter()
    catalog = seed(
        sizes=SeedSizes(
            workspaces=2,
            skills_per_workspace=10_000,
            agents_per_workspace=10,
            skills_per_agent=50,
            bundles=10_000,
            skills_per_bundle=5,
        ),
        prefix="bench",
        progress=log,
    )
    big = seed(sizes=SeedSizes(workspaces=0, bundles=1, skills_per_bundle=50), prefix="big")
    log(f"seeded {catalog.total + big.total:,} rows in {time.perf_counter() - started:.1f} s")

    operator = get_user_model().objects.get(pk=catalog.operator_id)
    workspace = Workspace.objects.get(pk=catalog.workspace_ids[0])
    owner = Membership.objects.get(workspace=workspace, role="owner").user
    plan = plan_create(
        workspace=workspace,
        kind="install",
        bundle_version=BundleVersion.objects.get(pk=big.bundle_version_ids[0]),
        actor=owner,
    )
    agent = Agent.objects.filter(workspace=workspace).order_by("pk").first()
    published = BundleVersion.objects.get(pk=big.bundle_version_ids[0])
    draft = next_draft(published)
    pages = [
        (
            "bundle changelist (operator)",
            f"{catalog.rows['bundles'] + big.rows['bundles']:,} bundles",
            operator,
            reverse("admin:catalog_bundle_changelist"),
        ),
        (
            "plan review (owner)",
            f"{len(plan.steps)} steps, 50 skills",
            owner,
            reverse("admin:catalog_plan_review", args=[plan.pk]),
        ),
        (
            "bundle version page, published (operator)",
            "50 skills, the first version",
            operator,
            reverse("admin:catalog_bundleversion_change", args=[published.pk]),
        ),
        (
            "bundle version page, draft (operator)",
            "50 skills, 5 changed against the published one",
            operator,
            reverse("admin:catalog_bundleversion_change", args=[draft.pk]),
        ),
        (
            "agent change (owner)",
            "50 skills",
            owner,
            reverse("admin:agents_agent_change", args=[agent.pk]),
        ),
        (
            "agent skills (owner)",
            "50 skills of a 10,000-skill workspace",
            owner,
            reverse("admin:agents_agent_skills", args=[agent.pk]),
        ),
    ]
    lines = [
        "## Admin pages",
        "",
        f"Django's test client against PostgreSQL, bench_seed data; median of {RUNS} "
        "renders after a warm-up (the whole request: middleware, queries, template).",
        "",
        "| page | data size | queries | first visit | median render | HTML |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for title, size, user, url in pages:
        log(title)
        queries, seconds, length, first = measure(browser_for(user), url)
        lines.append(
            f"| {title} | {size} | {queries} | {first * 1000:.0f} ms | {seconds * 1000:.1f} ms "
            f"| {length / 1024:,.0f} KiB |"
        )
    lines.append("")
    return lines


if __name__ == "__main__":
    if connection.vendor != "postgresql":
        teardown()
        raise SystemExit("admin_pages.py needs PostgreSQL: set DATABASE_URL")
    try:
        lines = main()
    finally:
        teardown()
    print("\n".join(lines))
