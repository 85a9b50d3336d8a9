"""Helpers to click through admin pages as a browser would (CSRF included)."""

import html
import re

from django.test import Client

CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
HREF_RE = re.compile(r'<a [^>]*href="([^"]+)"[^>]*>\s*{}\s*</a>')


def browser_for(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def link(response, label: str) -> str:
    """The href of the link whose text is ``label`` (what a person would click)."""
    match = re.search(HREF_RE.pattern.format(re.escape(label)), text_of(response))
    assert match, f"no link {label!r} on the page"
    return match.group(1)


def submit(client, page_response, url: str, data: dict | None = None, **kwargs):
    """POST the page's form with its CSRF token, like pressing its button."""
    token = CSRF_RE.search(page_response.content.decode())
    assert token, "the page has no CSRF token"
    return client.post(url, {"csrfmiddlewaretoken": token.group(1), **(data or {})}, **kwargs)
