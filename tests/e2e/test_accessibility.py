"""Every admin page, as each role that reaches it, in the admin's light and dark themes:
axe-core (the version package.json pins, tests/e2e/axe.py) finds no serious or critical
violation, and no link on a page leads its reader to a server error or a refusal.

The pages are the permission matrix's own (every admin URL pattern, filled from
tests/reliability/world.py), so a page added to the admin is crawled here too. The slow
run (CI) reads every page of every role (the owner, the operator, a member, an auditor,
another workspace's owner (the world's stranger), and the pages only a superuser reaches)
in both themes: every rule in the theme a page opens in, the rules of colour in the
other. Each role's pages are cut into parts, a test each. The quick run reads a few pages
of each role (FEW_PAGES: the admin index and others spread over the role's list), in both
themes too, a test per role. Links are followed once per path. PIXIE_HEAVY=1 reads every
role's every page in both themes with every rule, and follows every link.
"""

import os
import re
import time
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urlsplit

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests import suite
from tests.e2e.axe import (
    AXE_IMPORT_MISS,
    AXE_SCRIPT,
    LEAST_AXE_VERSION,
    THEMES,
    pinned_axe_version,
    read_in_both_themes,
    require_axe,
    show_theme,
    theme_order,
    version_tuple,
)
from tests.e2e.conftest import PASSWORD
from tests.reliability.test_permission_matrix import ADMIN_KINDS, NOT_CHECKED, admin_kind
from tests.reliability.urls import all_patterns, fill
from tests.reliability.world import build_world

pytestmark = pytest.mark.browser

HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
ROLES = ["owner", "operator", "member", "auditor", "stranger", "superuser"]
# role -> the parts its pages are cut into in the slow run (a test each, so that two
# workers share a role's pages)
PARTS = {"owner": 4, "operator": 2, "superuser": 1, "member": 2, "auditor": 2, "stranger": 1}
# How many of each role's pages the quick run reads.
FEW_PAGES = 4
# (link path pattern, status, why): links known to refuse their reader, each a bug left
# open. Anything else a link answers at 400 or above fails the crawl.
KNOWN_BROKEN_LINKS: list[tuple[re.Pattern, int, str]] = []


@dataclass(frozen=True)
class Part:
    """The slow run's share of a role's pages: every ``parts``-th, from the ``part``-th."""

    part: int
    parts: int

    def pick(self, pages: list) -> list:
        return pages[self.part :: self.parts]

    def __str__(self) -> str:
        return f"{self.part + 1} of {self.parts}"


@dataclass(frozen=True)
class Few:
    """The quick run's share: the first of a role's pages (the admin index, where all but
    the superuser start) and others spread evenly over the rest of its list, ``count`` in
    all."""

    count: int

    def pick(self, pages: list) -> list:
        if len(pages) <= self.count:
            return pages
        return [pages[n * len(pages) // self.count] for n in range(self.count)]

    def __str__(self) -> str:
        return f"{self.count} of its pages"


def crawl_params() -> list:
    """pytest params (role, share): every role's every page, cut into PARTS, marked slow
    (the slow run, CI, reads them all); outside the slow run, a few pages of each role
    besides, a test per role. The slow run leaves the few out: it reads them anyway."""
    every = [
        pytest.param(role, Part(part, count), marks=pytest.mark.slow,
                     id=f"{role}-{part + 1}of{count}")
        for role, count in PARTS.items()
        for part in range(count)
    ]  # fmt: skip
    if suite.full_run():
        return every
    return [pytest.param(role, Few(FEW_PAGES), id=f"{role}-few") for role in ROLES] + every


@dataclass
class Crawl:
    role: str
    readings: int = 0
    followed: int = 0
    violations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    read: set[str] = field(default_factory=set)  # the pages read, as the browser ended on them
    # link -> the first page it was found on
    links: dict[str, str] = field(default_factory=dict)


def pages_for(role: str, world) -> list[tuple[str, int | None, str]]:
    """Every admin page the permission matrix lets this role read (GET), with the status
    it expects and its URL name, in URL order; and pages of the world's other states."""
    pages = []
    for route, name in all_patterns():
        if not route.startswith("admin/") or name in NOT_CHECKED or name in ("login", "logout"):
            continue
        kind = admin_kind(route, name)
        expected = ADMIN_KINDS[kind][role] if kind else 404
        # None: an operator page whose own limits may refuse (no adding tools); it is read
        # if it answers, and a server error is a failure like any other.
        if expected not in (200, 302, None):
            continue
        url = fill(route, name, world)
        if url is not None:
            pages.append((url, expected, name))
    if ADMIN_KINDS["workspace_page"][role] == 200:  # an applied plan reads unlike a pending one
        pages.append((f"/admin/catalog/plan/{world.ids['applied_plan']}/review/", 200, None))
    return pages


def default_pages(role: str, world) -> list[tuple[str, int | None]]:
    """A role's pages for the default run (all of them under PIXIE_HEAVY). One page each
    of django-reversion's revision and recover views stands for the others: every History
    entry renders the same read-only page (pixie/core/audit/admin_history.py), and recovery
    redirects. The superuser reads only the pages no other role reads; the rest are
    read as those roles."""
    pages = pages_for(role, world)
    if HEAVY:
        return [(path, expected) for path, expected, _ in pages]
    if role == "superuser":
        others = {page[0] for other in ROLES if other != role for page in pages_for(other, world)}
        pages = [page for page in pages if page[0] not in others]
    chosen, reversion_views = [], set()
    for path, expected, name in pages:
        view = (name or "").rpartition("_")[2]
        if view in ("revision", "recover"):
            if view in reversion_views:
                continue
            reversion_views.add(view)
        chosen.append((path, expected))
    return chosen


def opened(tab, crawl: Crawl, path: str, expected) -> bool:
    """Open the page in the browser: whether it is HTML to read. A page this role should
    read that does not answer 200, or any server error, is an error. A page that may
    refuse this role (expected None) or sends it on (302) is asked of the server first,
    so that a refusal is no console error; so is a download (a CSV export), which the
    browser refuses to open as a page."""
    response = None
    if expected == 200:
        try:
            response = tab.go(path)
        except PlaywrightError:  # a download
            response = None
    if response is None:
        asked = tab.context.request.get(tab.base + path)
        status, kind = asked.status, asked.headers.get("content-type", "")
        if status == 200 and kind.startswith("text/html"):
            response = tab.go(path)
            status, kind = response.status, response.headers.get("content-type", "")
    else:
        status, kind = response.status, response.headers.get("content-type", "")
    # A 302 page sends its reader on to a page of its own rules (a plan's review).
    if status >= 500 or (expected == 200 and status != 200):
        crawl.errors.append(f"{path} [{crawl.role}]: {status}")
        return False
    return status == 200 and kind.startswith("text/html")


def read_pages(tab, crawl: Crawl, pages, themes):
    """Each page once, axe run in each theme on it as it stands; the next page opens in
    the theme the last one ended in (the admin keeps it), and starts there."""
    tab.go("/admin/")
    last = themes[0]
    show_theme(tab.page, last)
    for path, expected in pages:
        if not opened(tab, crawl, path, expected):
            continue
        crawl.read.add(tab.page.url)
        order = theme_order(themes, last)
        crawl.violations += read_in_both_themes(tab.page, f"{path} [{crawl.role}]", order)
        crawl.readings += len(order)
        last = order[-1]
        hrefs = tab.page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
        for href in hrefs:
            link = urldefrag(href).url
            if link.startswith(tab.base + "/"):
                crawl.links.setdefault(link, path)


def follow_links(tab, crawl: Crawl, read_elsewhere: set[str]):
    """Every link on the pages read that was not read itself, once per path (every link
    under PIXIE_HEAVY): none may answer a server error or a refusal to the person it was
    shown to. A link to a page that another part of this role's crawl reads
    (``read_elsewhere``) is checked there."""
    seen = {urlsplit(url).path for url in crawl.read}
    if not HEAVY:
        seen |= read_elsewhere
    for link, found_on in sorted(crawl.links.items()):
        path = urlsplit(link).path
        if link in crawl.read or (not HEAVY and path in seen):
            continue
        seen.add(path)
        status = tab.context.request.get(link).status
        crawl.followed += 1
        known = any(p.match(path) and status == s for p, s, _ in KNOWN_BROKEN_LINKS)
        if status >= 400 and not known:
            crawl.errors.append(f"{link.removeprefix(tab.base)} [{crawl.role}]: {status}, "
                                f"linked from {found_on}")  # fmt: skip


def test_the_axe_injected_is_the_one_package_json_pins(chromium):
    """The crawl reads with the axe-core package.json pins, 4.14.1 or newer, not the 4.12
    that the Python wrapper axe-playwright-python bundled (where
    label-content-name-mismatch is experimental, so off)."""
    require_axe()
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.set_content("<!doctype html><html lang=en><title>axe</title><main>axe</main>")
        page.add_script_tag(content=AXE_SCRIPT)
        version = page.evaluate("() => window.axe.version")
    finally:
        context.close()
    assert version == pinned_axe_version()
    assert version_tuple(version) >= LEAST_AXE_VERSION, (
        f"axe-core {version} is older than {'.'.join(map(str, LEAST_AXE_VERSION))}"
    )


@pytest.mark.crawl
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("role", "share"), crawl_params())
def test_every_admin_page_passes_axe_in_both_themes(
    role, share, demo_catalog, django_capture_on_commit_callbacks, person, record_property
):
    require_axe()
    world = build_world(demo_catalog, django_capture_on_commit_callbacks)
    user = world.users[role]
    user.set_password(PASSWORD)
    user.save()
    started = time.monotonic()
    tab = person(user)
    tab.context.add_init_script(script=AXE_SCRIPT)  # in every page from now on
    crawl = Crawl(role=role)
    every_page = default_pages(role, world)
    read_pages(tab, crawl, share.pick(every_page), THEMES)
    follow_links(tab, crawl, {urlsplit(path).path for path, _ in every_page})
    tab.errors[:] = [error for error in tab.errors if not AXE_IMPORT_MISS.search(error)]
    record_property(
        "figure",
        f"{role} ({share}): {len(crawl.read)} pages × {len(THEMES)} themes, "
        f"{len(crawl.violations)} serious/critical, {crawl.followed} more links followed, "
        f"{time.monotonic() - started:.0f} s",
    )
    assert (crawl.errors, crawl.violations) == ([], []), (
        "pages or links that answer an error:\n" + "\n".join(crawl.errors)
        + "\n\nserious or critical axe violations:\n" + "\n".join(crawl.violations)
    )  # fmt: skip
