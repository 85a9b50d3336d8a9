"""Playwright on the system Chromium against pytest-django's live server.

Outside CI a missing Chromium skips the browser tests and the run ends with a
loud line saying so; under CI=true a missing Chromium fails them.
"""

import contextlib
import os
from pathlib import Path

import pytest

from tests import suite
from tests.services import defaults_pass

CHROMIUM = Path(os.environ.get("PIXIE_CHROMIUM", "/usr/bin/chromium"))
PASSWORD = "a-long-test-password"
VIEWPORT = {"width": 1280, "height": 800}

# Playwright's sync API keeps an event loop running in this thread; the ORM calls
# the tests make between browser steps are ordinary synchronous ones.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

_skipped_for_chromium: list[str] = []


def pytest_unconfigure(config):
    """After pytest's own summary, so it is the last thing a person reads."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if _skipped_for_chromium and reporter is not None:
        reporter.write_sep(
            "!",
            f"BROWSER TESTS SKIPPED: no Chromium at {CHROMIUM}, so the browser journeys did not "
            "run (apt-get install chromium); under CI=true this fails",
            red=True,
            bold=True,
        )


@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        message = f"no Chromium at {CHROMIUM}: the browser journeys cannot run"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        _skipped_for_chromium.append(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-background-networking",
                "--disable-gpu",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory):
    """Where the journeys' screenshots go: PIXIE_SCREENSHOTS (scripts/screenshots points
    it at docs/screenshots to refresh the pictures in the README and docs/), else in the
    slow run (CI) this worker's temporary folder; None in the quick run, which takes none
    (they assert nothing, and cost about a fifth of a second each)."""
    chosen = os.environ.get("PIXIE_SCREENSHOTS")
    if chosen:
        folder = Path(chosen)
    elif suite.full_run():
        folder = tmp_path_factory.mktemp("screenshots")
    else:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# Transitions and animations end at once: axe and a screenshot read a page's final colours
# without waiting out the admin's 0.15 s colour transitions, as a person who asked their
# system for reduced motion sees it.
NO_MOTION = """
document.addEventListener("DOMContentLoaded", () => {
    const style = document.createElement("style");
    style.textContent = "*, *::before, *::after { transition: none !important; "
        + "animation-duration: 0s !important; animation-delay: 0s !important; }";
    document.head.append(style);
});
"""


class Person:
    """One user's browser tab: logs in through the admin's form, collects console errors."""

    def __init__(self, chromium, live_server, username, screenshots):
        self.base = live_server.url
        self.screenshots = screenshots
        self.context = chromium.new_context(viewport=VIEWPORT)
        self.context.add_init_script(script=NO_MOTION)
        self.context.set_default_timeout(15_000)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.username = username
        self.refused: set[str] = set()  # pages the test expects to be refused (404)

    def _console(self, message):
        # A favicon that fails to load is an error too: every page links pixie/favicon.svg,
        # and /favicon.ico, which Chromium may ask for by itself, leads there.
        url = message.location.get("url", "")
        if message.type == "error" and url not in self.refused:
            self.errors.append(f"console: {message.text} at {message.location.get('url')}")

    def go(self, path):
        return self.page.goto(self.base + path)

    def refused_at(self, path) -> int:
        """Open a page this person must not see; the status the server answered."""
        self.refused.add(self.base + path)
        return self.page.goto(self.base + path).status

    def login(self, password=PASSWORD, start="/admin/"):
        """Log in through the admin's form as a person who opened ``start``: the admin
        index, or "/" (the site), which sends them on to where Pixie starts them."""
        self.go("/admin/login/?next=/admin/" if start == "/admin/" else start)
        self.page.get_by_label("Username").fill(self.username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        if start == "/admin/":
            self.page.wait_for_url(self.base + "/admin/")
        else:
            self.page.wait_for_url(lambda url: "/admin/login/" not in url)
        return self

    def shot(self, name, part=None, full_page=True):
        """A screenshot of the whole page, of the viewport (full_page=False), or of the
        element a CSS selector finds (part); none outside the slow run (``screenshots``)."""
        if self.screenshots is None:
            return
        path = str(self.screenshots / f"{name}.png")
        if part is None:
            self.page.screenshot(path=path, full_page=full_page)
        else:
            self.page.locator(part).screenshot(path=path)

    def close(self):
        self.context.close()


@pytest.fixture
def person(chromium, live_server, screenshots):
    """person(user) -> a logged-in browser tab; every tab must end without console errors."""
    people = []

    def open_tab(user, password=PASSWORD, start="/admin/"):
        tab = Person(chromium, live_server, user.username, screenshots).login(password, start)
        people.append(tab)
        return tab

    yield open_tab
    errors = [f"{p.username}: {e}" for p in people for e in p.errors]
    for tab in people:
        tab.close()
    assert not errors, "console errors in Chromium:\n" + "\n".join(errors)


@pytest.fixture
def task_worker(request):
    """Runs tasks the way the deployment would: a real Celery worker on Redis when the
    tests run on PostgreSQL with Redis up (CI), else in-process after commit."""
    from django.db import connection

    if connection.vendor != "postgresql":
        if os.environ.get("CI") == "true" and not defaults_pass():
            pytest.fail("CI runs the browser journeys on PostgreSQL with a real worker")
        yield contextlib.nullcontext
        return
    queue = request.getfixturevalue("queue")
    from celery.contrib.testing.worker import start_worker

    from pixie.celery import app as celery_app

    def running():
        return start_worker(
            celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, queues=[queue]
        )

    yield running
