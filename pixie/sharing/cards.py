"""Hard validation of contact cards, which arrive from outside like any other input."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django.conf import settings

from pixie import crypto
from pixie.errors import ValidationFailed
from pixie.namespace import is_slug

from .identities import CARD_SENTINEL

MAX_CARD_BYTES = 4096
MAX_NAME = 80
MAX_URL = 300
INBOX_PATH_END = "/api/inbox/"


def card_problems(fields: object) -> list[str]:
    """Everything wrong with a card's fields (empty when it is well-formed)."""
    if not isinstance(fields, dict) or fields.keys() != crypto.SENDER_FIELDS:
        expected = ", ".join(sorted(crypto.SENDER_FIELDS))
        return [f"a contact card must have exactly the fields {expected}"]
    problems = []
    name = fields["name"]
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        problems.append(f"name must be text of 1 to {MAX_NAME} characters")
    elif any(ord(ch) < 32 for ch in name):
        problems.append("name must not contain control characters")
    if not is_slug(fields["workspace"]):
        problems.append("workspace must be a workspace slug")
    for field in ("boxKey", "signingKey"):
        if crypto.key_from_b64(fields[field]) is None:
            problems.append(f"{field} must be a 32-byte public key in base64")
    problems.extend(_inbox_url_problems(fields["inboxUrl"]))
    return problems


def _inbox_url_problems(url: object) -> list[str]:
    if not isinstance(url, str) or len(url) > MAX_URL:
        return [f"inboxUrl must be a URL of at most {MAX_URL} characters"]
    try:
        parts = urlsplit(url)
    except ValueError:
        return ["inboxUrl is not a URL"]
    schemes = {"https", "http"} if settings.PIXIE_ALLOW_HTTP_INBOX else {"https"}
    if parts.scheme not in schemes:
        allowed = " or ".join(f"{scheme}://" for scheme in sorted(schemes))
        return [f"inboxUrl must be an {allowed} URL"]
    # The inbox is the only place a card can make this server send requests
    # to, so it must look like one: no credentials, query or fragment, and a
    # path ending in Pixie's inbox route.
    if not parts.hostname or parts.username or parts.password or parts.query or parts.fragment:
        return ["inboxUrl must be a plain URL with a host and no user, query or fragment"]
    if not parts.path.endswith(INBOX_PATH_END):
        return [f"inboxUrl must be a Pixie inbox, ending in {INBOX_PATH_END}"]
    return []


def card_parse(card: object) -> dict[str, str]:
    """The fields of a contact card given as JSON text or as parsed JSON."""
    if isinstance(card, str | bytes):
        if len(card) > MAX_CARD_BYTES:
            raise ValidationFailed(f"a contact card is at most {MAX_CARD_BYTES} bytes")
        try:
            card = json.loads(card)
        except (ValueError, RecursionError):
            raise ValidationFailed("the contact card is not JSON") from None
    if not isinstance(card, dict) or card.keys() != {CARD_SENTINEL}:
        raise ValidationFailed(f"a contact card is a JSON object with one key, {CARD_SENTINEL}")
    fields = card[CARD_SENTINEL]
    problems = card_problems(fields)
    if problems:
        raise ValidationFailed([f"contact card: {problem}" for problem in problems])
    return {key: value.strip() if key == "name" else value for key, value in fields.items()}
