"""Playwright on the system Chromium against pytest-django's live server.

Outside CI a missing Chromium skips the browser tests and the run ends with a
loud line saying so; under CI=true a missing Chromium fails them.
"""

import contextlib
import os
from pathlib import Path

import pytest

from tests.services import defaults_pass

CHROMIUM = Path(os.environ.get("PIXIE_CHROMIUM", "/usr/bin/chromium"))
# Test runs keep their screenshots out of the repository; scripts/screenshots
# points this at docs/screenshots to refresh the README's pictures.
SCREENSHOTS = Path(
    os.environ.get(
        "PIXIE_SCREENSHOTS", Path(__file__).resolve().parents[2] / "data" / "screenshots"
    )
)
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


class Person:
    """One user's browser tab: logs in through the admin's form, collects console errors."""

    def __init__(self, chromium, live_server, username):
        self.base = live_server.url
        self.context = chromium.new_context(viewport=VIEWPORT)
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

    def shot(self, name):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    def close(self):
        self.context.close()


@pytest.fixture
def person(chromium, live_server):
    """person(user) -> a logged-in browser tab; every tab must end without console errors."""
    people = []

    def open_tab(user, password=PASSWORD, start="/admin/"):
        tab = Person(chromium, live_server, user.username).login(password, start)
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
