"""Every admin page, as each role that reaches it, in the admin's light and dark themes:
axe-core finds no serious or critical violation, and no link on a page leads its reader
to a server error or a refusal.

The pages are the permission matrix's own (every admin URL pattern, filled from
tests/reliability/world.py), so a page added to the admin is crawled here too. The
default run reads the owner's and the operator's pages in both themes, the member's and
another workspace's owner's (the world's stranger) in the light one, the auditor's in the
dark one, and in the light one the pages only a superuser reaches; its links are
followed once per path. PIXIE_HEAVY=1 reads every role's every page in both themes and
follows every link.
"""

import os
import re
import time
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.e2e.conftest import PASSWORD
from tests.reliability.test_permission_matrix import ADMIN_KINDS, NOT_CHECKED, admin_kind
from tests.reliability.urls import all_patterns, fill
from tests.reliability.world import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
THEMES = ("light", "dark")
ROLES = ["owner", "operator", "member", "auditor", "stranger", "superuser"]
# role -> the themes its pages are read in, by default
DEFAULT_THEMES = {
    "owner": THEMES,
    "operator": THEMES,
    "member": ("light",),
    "auditor": ("dark",),  # the read-only catalog and workspace pages, in the other theme
    "stranger": ("light",),  # another workspace's owner: its own pages, none of acme's
    "superuser": ("light",),
}
SERIOUS = {"serious", "critical"}
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# (rule, CSS selector the failing node matches, why it is not ours to fix). Only markup
# Django's admin renders itself, which no template of ours can change without replacing
# Django's whole template or widget, belongs here; each is a gap in Django's admin.
DJANGOS_OWN = [
    (
        "label",
        "p.datetime > input.vDateField, p.datetime > input.vTimeField",
        "AdminSplitDateTime writes 'Date:' and 'Time:' as bare text before its two inputs "
        "(admin/widgets/split_datetime.html); the field's own label names the pair",
    ),
    (
        "label",
        ".inline-group .tabular td.delete > input[type=checkbox]",
        "a tabular inline's delete box has no label, only its column header "
        "(admin/edit_inline/tabular.html)",
    ),
    (
        "select-name",
        ".inline-group .tabular td[class^='field-'] select",
        "a tabular inline's fields are named by their column headers, not by labels "
        "(admin/edit_inline/tabular.html)",
    ),
    (
        "aria-prohibited-attr",
        ".selector .help-tooltip.search-label-icon",
        "filter_horizontal's search icon is a span with an aria-label and no role "
        "(admin/js/SelectFilter2.js)",
    ),
    (
        "aria-input-field-name",
        ".select2-container .select2-selection[role=combobox], "
        ".select2-container .select2-selection__rendered[role=textbox]",
        "select2, as the admin's autocomplete widget ships it, names its combobox by the "
        "chosen value (a span of role textbox), so neither has a name while nothing is chosen",
    ),
    (
        "label-title-only",
        "#changelist-search #searchbar[aria-describedby]",
        "the changelist search box is labelled by a magnifier image; with search_help_text "
        "(DRF's TokenAdmin has one) axe reads only the description (admin/search_form.html)",
    ),
]
# axe-core 4.12 fetches a stylesheet's relative @import against the page's URL, not the
# stylesheet's (dequelabs/axe-core#5268): the admin's forms.css imports widgets.css, so
# axe asks for /admin/<page>/widgets.css and the console reports that 404. (Routing the
# request to the real file would turn off the browser's cache for the whole crawl.)
AXE_IMPORT_MISS = re.compile(r"status of 404 \(Not Found\) at \S+/widgets\.css(/change/)?$")
AXE_SCRIPT = Axe().axe_script
# (link path pattern, status, why): links known to refuse their reader, each a bug left
# open. Anything else a link answers at 400 or above fails the crawl.
KNOWN_BROKEN_LINKS: list[tuple[re.Pattern, int, str]] = []


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
    entry renders the same read-only page (pixie/admin_history.py), and recovery
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


def djangos_own(page, rule: str, target: str, exempt=DJANGOS_OWN) -> bool:
    selectors = [selector for own, selector, _ in exempt if own == rule]
    return bool(selectors) and page.evaluate(
        "([target, selector]) => !!document.querySelector(target)?.matches(selector)",
        [target, ", ".join(selectors)],
    )


def serious_violations(
    page, where: str, rules: list[str] | None = None, exempt=DJANGOS_OWN
) -> list[str]:
    options = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = {"type": "rule", "values": rules}
    violations = page.evaluate("options => axe.run(options).then(r => r.violations)", options)
    found = []
    for violation in violations:
        if violation["impact"] not in SERIOUS:
            continue
        for node in violation["nodes"]:
            target = " ".join(str(part) for part in node["target"])
            if djangos_own(page, violation["id"], target, exempt):
                continue
            summary = node["failureSummary"].splitlines()[-1].strip()
            found.append(
                f"{where}: {violation['id']} ({violation['impact']}) at {target}: {summary}"
            )
    return found


def axe_both_themes(tab, where: str) -> None:
    """axe on the page as it stands, in each theme (a screenshot of each), for a page a
    journey reaches that the crawl cannot (a confirmation after a POST)."""
    page = tab.page
    # axe's miss of forms.css's @import (AXE_IMPORT_MISS), on a page that has a form.
    here = page.url.split("#")[0].split("?")[0]
    tab.refused |= {here + "widgets.css" + tail for tail in ("", "/", "/change/")}
    page.add_script_tag(content=AXE_SCRIPT)
    for theme in THEMES:
        show_theme(page, theme)
        assert serious_violations(page, f"{where} [{theme}]") == []
        tab.shot(f"{where}-{theme}")
    show_theme(page, "light")


def show_theme(page, theme: str):
    """What the admin's theme toggle does: remember the choice and apply it now; then
    wait out the admin's colour transitions (0.15 s on links), so axe reads final colours."""
    page.evaluate(
        """async theme => {
            localStorage.setItem('theme', theme);
            document.documentElement.dataset.theme = theme;
            // Two frames: what follows the theme in script (Swagger UI's dark mode) and the
            // styles it changes are in place, and their transitions started, before
            // the transitions are awaited.
            for (let frame = 0; frame < 2; frame++) {
                await new Promise(resolve => requestAnimationFrame(resolve));
            }
            // allSettled: an animation the page cancels meanwhile (Swagger UI's) rejects.
            await Promise.allSettled(document.getAnimations().map(animation => animation.finished));
        }""",
        theme,
    )


def readable(tab, crawl: Crawl, pages) -> list[str]:
    """The pages that answer this role with HTML; a page it should read that does not,
    or any server error, is an error."""
    html = []
    for path, expected in pages:
        response = tab.context.request.get(tab.base + path)
        kind = response.headers.get("content-type", "")
        # A 302 page sends its reader on to a page of its own rules (a plan's review).
        must_read = expected == 200
        if response.status >= 500 or (must_read and response.status != 200):
            crawl.errors.append(f"{path} [{crawl.role}]: {response.status}")
        elif response.status == 200 and kind.startswith("text/html"):
            html.append(path)
    return html


def read_pages(tab, crawl: Crawl, pages, themes):
    """Each page once, axe run in each theme on it as it stands."""
    tab.go("/admin/")
    show_theme(tab.page, themes[0])
    for path in readable(tab, crawl, pages):
        response = tab.go(path)
        if response.status != 200:
            crawl.errors.append(f"{path} [{crawl.role}]: {response.status} in the browser")
            continue
        crawl.read.add(tab.page.url)
        for n, theme in enumerate(themes):
            show_theme(tab.page, theme)
            # A theme changes colours, not markup: past the first, only the rules of colour.
            rules = COLOUR_RULES if n else None
            where = f"{path} [{crawl.role}, {theme}]"
            crawl.violations += serious_violations(tab.page, where, rules)
            crawl.readings += 1
        hrefs = tab.page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
        for href in hrefs:
            link = urldefrag(href).url
            if link.startswith(tab.base + "/"):
                crawl.links.setdefault(link, path)
        show_theme(tab.page, themes[0])


def follow_links(tab, crawl: Crawl):
    """Every link on the pages read that was not read itself, once per path (every link
    under PIXIE_HEAVY): none may answer a server error or a refusal to the person it was
    shown to."""
    seen = {urlsplit(url).path for url in crawl.read}
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


@pytest.mark.parametrize("role", ROLES)
def test_every_admin_page_passes_axe_in_both_themes(
    role, demo_catalog, django_capture_on_commit_callbacks, person, record_property
):
    world = build_world(demo_catalog, django_capture_on_commit_callbacks)
    user = world.users[role]
    user.set_password(PASSWORD)
    user.save()
    started = time.monotonic()
    tab = person(user)
    tab.context.add_init_script(script=AXE_SCRIPT)  # in every page from now on
    crawl = Crawl(role=role)
    themes = THEMES if HEAVY else DEFAULT_THEMES[role]
    pages = default_pages(role, world)
    read_pages(tab, crawl, pages, themes)
    follow_links(tab, crawl)
    tab.errors[:] = [error for error in tab.errors if not AXE_IMPORT_MISS.search(error)]
    record_property(
        "figure",
        f"{role}: {len(crawl.read)} pages × {len(themes)} theme{'s' if len(themes) > 1 else ''}, "
        f"{len(crawl.violations)} serious/critical, {crawl.followed} more links followed, "
        f"{time.monotonic() - started:.0f} s",
    )
    assert (crawl.errors, crawl.violations) == ([], []), (
        "pages or links that answer an error:\n" + "\n".join(crawl.errors)
        + "\n\nserious or critical axe violations:\n" + "\n".join(crawl.violations)
    )  # fmt: skip
