"""Every page Pixie serves outside the admin (the browsable API, the schema and its docs,
the password pages, the probes), and the admin's login, opened in Chromium as each role
and as nobody signed in.

The pages are every URL pattern outside admin/ (tests/reliability/urls.py, filled from
tests/reliability/world.py), so a page added to Pixie is opened here too. Each answers
its reader a page, never a server error: a refusal is a page that says so, with a way to
sign in for one who is not. The browsable API offers a form for a write only to a person
the API would let make it (the permission matrix's own rows). In the admin's light and
dark themes axe-core finds no serious or critical violation, and the dark theme is dark.
Every run reads every page as the owner and as nobody signed in, in both themes; the
slow run (CI) as every other role too, each in one theme (ROLE_THEMES). Each page is
read with every axe rule in the theme it opens in and with the rules of colour in the
other; PIXIE_HEAVY=1 reads every role in both themes with every rule. Each role's pages
are cut into parts, a test each.
"""

import time
from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from pixie.core.people.members import password_link
from tests.e2e.axe import (
    AXE_IMPORT_MISS,
    AXE_SCRIPT,
    DJANGOS_OWN,
    HEAVY,
    THEMES,
    crawl_parts,
    read_in_both_themes,
    theme_order,
)
from tests.e2e.conftest import PASSWORD, Person
from tests.reliability.test_permission_matrix import API_ROWS, PROBE_ARGS
from tests.reliability.urls import all_patterns, fill
from tests.reliability.world import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROLES = ["anonymous", "owner", "member", "operator", "auditor", "stranger", "superuser"]
# role -> the parts its pages are cut into (a test each, under the browser budget)
PARTS = {role: 2 for role in ROLES}
PARTS["owner"] = 3  # delivery's endpoints took the owner's two parts to the budget
QUICK_ROLES = {"anonymous", "owner"}
# role -> the themes its pages are read in: every page nobody signed in and the owner
# read is read in both; the other roles' pages (the same templates, other rows and other
# forms offered) in one theme each, so that the slow run reads each role in one of them.
ROLE_THEMES = {
    "anonymous": THEMES,
    "owner": THEMES,
    "member": ("light",),
    "operator": ("dark",),
    "auditor": ("light",),
    "stranger": ("dark",),
    "superuser": ("dark",),
}
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
# What a refusal of the API means: the person may not do it (a 409 or a 400 is allowed,
# and says why this time).
REFUSED = {401, 403, 404, 405}
# (rule, CSS selector, why): markup Swagger UI's script draws (/api/docs/), which no
# template or style of ours can change, as DJANGOS_OWN is Django's.
SWAGGER_UIS_OWN = [
    (
        "nested-interactive",
        ".swagger-ui .opblock-summary-control",
        "each operation's summary is a button that holds the link to the operation",
    ),
]


def pages(world) -> list[tuple[str, str]]:
    """(path, URL name) of every page outside the admin, and the admin's login."""
    found = [("/admin/login/", "login")]
    for route, name in all_patterns():
        if route.startswith("admin/"):
            continue
        if name in PROBE_ARGS:
            found.append((reverse(name, args=PROBE_ARGS[name](world)), name))
            continue
        path = fill(route, name, world)
        assert path is not None, f"no way to fill {route} ({name})"
        found.append((path, name))
    # The one-time link that works (the matrix's is a wrong one): its form, for the member.
    link = urlsplit(password_link(world.users["member"])).path
    found.append((link, "password-set"))
    return found


def writes_allowed(name: str, role: str) -> set[str]:
    """The writes the permission matrix lets this role make at this endpoint."""
    return {
        method.upper()
        for method, expected, _ in API_ROWS.get(name, [])
        if method != "get" and expected[role] not in REFUSED
    }


def page_facts(page) -> dict:
    """What a person sees of the page, in one round trip: its title, whether it has a link
    and a way to log in, and the writes it offers on its own address (each button of a
    form sent there, by its own method, DRF's PATCH, or its form's: POST, PUT, DELETE)."""
    return page.evaluate(
        """() => {
            const here = location.pathname + location.search;
            const offered = [];
            for (const button of document.querySelectorAll("form button")) {
                const form = button.closest("form");
                if (form.getAttribute("action") !== here) continue;
                const method = button.dataset.method || form.dataset.method
                    || form.getAttribute("method") || "GET";
                offered.push(method.toUpperCase());
            }
            return {
                title: document.title.trim(),
                links: document.querySelectorAll("a[href]").length,
                signsIn: document.querySelectorAll("a[href^='/admin/login/']").length,
                offered: offered.filter(method => !["GET", "OPTIONS"].includes(method)),
            };
        }"""
    )


def dark_enough(page) -> bool:
    """The page's background in the dark theme is dark (relative luminance under 0.2):
    axe's contrast rules pass a white page with black text, which is no dark theme."""
    return page.evaluate(
        """() => {
            const rgb = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g);
            const [r, g, b] = rgb.slice(0, 3).map(v => {
                v = Number(v) / 255;
                return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
            });
            return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.2;
        }"""
    )


@pytest.fixture
def tab_for(chromium, live_server, screenshots):
    """tab_for(user or None) -> a browser tab, signed in through the admin's login unless
    None; every tab must end without console errors but those of pages that refuse."""
    tabs = []

    def open_tab(user):
        tab = Person(chromium, live_server, user.username if user else "anonymous", screenshots)
        tabs.append(tab)
        tab.context.add_init_script(script=AXE_SCRIPT)
        return tab.login(PASSWORD) if user else tab

    yield open_tab
    errors = [
        f"{tab.username}: {error}"
        for tab in tabs
        for error in tab.errors
        if not AXE_IMPORT_MISS.search(error)  # axe's miss of forms.css's @import
    ]
    for tab in tabs:
        tab.close()
    assert not errors, "console errors in Chromium:\n" + "\n".join(errors)


@pytest.mark.crawl
@pytest.mark.parametrize(("role", "part", "parts"), crawl_parts(PARTS, QUICK_ROLES))
def test_every_page_outside_the_admin_reads_well_to_every_role(
    role, part, parts, demo_catalog, django_capture_on_commit_callbacks, tab_for, record_property
):
    world = build_world(demo_catalog, django_capture_on_commit_callbacks)
    user = None if role == "anonymous" else world.users[role]
    if user is not None:
        user.set_password(PASSWORD)
        user.save()
    started = time.monotonic()
    tab = tab_for(user)
    problems, violations, read, last = [], [], 0, THEMES[0]
    for path, name in pages(world)[part::parts]:
        answer = tab.context.request.get(tab.base + path, headers={"Accept": BROWSER_ACCEPT})
        where = f"{path} [{role}]"
        if answer.status >= 500:
            problems.append(f"{where}: {answer.status}")
            continue
        if not answer.headers.get("content-type", "").startswith("text/html"):
            continue  # JSON, YAML, CSV, a file, a redirect to one: no page to read
        tab.refused.add(tab.base + path)
        response = tab.go(path)
        if tab.page.url != tab.base + path:
            tab.refused.add(tab.page.url)
        page = tab.page
        if response.status == 200 and page.locator("#swagger-ui").count():
            page.wait_for_selector("#swagger-ui .info .title")  # the schema, fetched and drawn
        read += 1
        facts = page_facts(page)
        # A page of Pixie's own has a title and a way on (Django's bare refusals have no link).
        if not facts["title"] or not facts["links"]:
            problems.append(f"{where}: {response.status}, a bare page (no title or no link)")
        if response.status in (401, 403) and role == "anonymous" and not facts["signsIn"]:
            problems.append(f"{where}: {response.status} with no way to log in")
        offered, allowed = set(facts["offered"]), writes_allowed(name, role)
        if name in API_ROWS and offered != allowed:
            problems.append(f"{where}: offers {sorted(offered)}, may make {sorted(allowed)}")

        def dark_is_dark(theme, where=where, page=page):
            if theme == "dark" and not dark_enough(page):
                problems.append(f"{where}: light in the dark theme")

        order = theme_order(THEMES if HEAVY else ROLE_THEMES[role], last)
        violations += read_in_both_themes(
            page, where, order, DJANGOS_OWN + SWAGGER_UIS_OWN, each=dark_is_dark
        )
        last = order[-1]
    record_property(
        "figure",
        f"{role} ({part + 1} of {parts}): {read} pages outside the admin × 2 themes, "
        f"{len(violations)} serious/critical, {time.monotonic() - started:.0f} s",
    )
    assert (problems, violations) == ([], []), (
        "pages that answer badly:\n" + "\n".join(problems)
        + "\n\nserious or critical axe violations:\n" + "\n".join(violations)
    )  # fmt: skip


def test_the_api_pages_follow_a_browser_that_prefers_dark(acme, member, tab_for):
    """No theme chosen in the admin ("auto"): the browsable API and the docs are dark in a
    browser that prefers dark, and light in one that does not."""
    member.set_password(PASSWORD)
    member.is_staff = True  # a workspace's people sign in through the admin's login
    member.save()
    tab = tab_for(member)
    for scheme, dark in (("dark", True), ("light", False)):
        tab.page.emulate_media(color_scheme=scheme)
        for path in ("/api/workspaces/acme/skills/", "/api/docs/"):
            tab.go(path)
            tab.page.evaluate("localStorage.removeItem('theme')")
            tab.page.reload()
            if path == "/api/docs/":
                tab.page.wait_for_selector("#swagger-ui .info .title")
            assert tab.page.evaluate("document.documentElement.dataset.theme") == "auto"
            assert dark_enough(tab.page) is dark, f"{path} with {scheme} preferred"
