"""What a letter's body may be, checked when it is sent and again when it arrives."""

from __future__ import annotations

from datetime import datetime

from pixie.core.skillshare import MAX_WIRE_BYTES
from pixie.sharing import crypto

from .cards import card_problems

MAX_TEXT = 8000  # a plain message typed by a person


def body_problems(body: object) -> list[str]:
    if not isinstance(body, str) or not body.strip():
        return ["the message must not be empty"]
    if "\x00" in body:
        return ["the message must not contain NUL characters"]
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError:
        return ["the message is not valid text"]
    if size > MAX_WIRE_BYTES:
        return [f"the message is {size} bytes; the limit is {MAX_WIRE_BYTES}"]
    return []


def letter_problems(letter: crypto.Letter) -> list[str]:
    """Faults in an opened letter that make it unfit to keep."""
    problems = body_problems(letter.body) + card_problems(letter.sender)
    try:
        datetime.fromisoformat(letter.sent_at)
    except ValueError:
        problems.append("sentAt is not a timestamp")
    return problems
