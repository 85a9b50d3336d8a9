"""JSON as Pixie accepts it from outside: what Python's json module lets through, refused.

Duplicate keys (json keeps the last silently), NaN and Infinity, lone surrogates,
NUL characters and deep nesting each raise StrictJSONError with a message that
names the problem.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 32


class StrictJSONError(ValueError):
    pass


def _no_constants(name: str):
    raise StrictJSONError(f"{name} is not a number JSON allows")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise StrictJSONError(f"the key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _check(value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise StrictJSONError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check(item, depth + 1)


def _check_text(text: str) -> None:
    if "\x00" in text:
        raise StrictJSONError("text contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise StrictJSONError("text contains a lone surrogate") from None


def loads(text: str | bytes) -> Any:
    """Parse and validate; raise StrictJSONError (a ValueError) for anything refused."""
    try:
        value = json.loads(text, object_pairs_hook=_unique, parse_constant=_no_constants)
    except RecursionError:
        raise StrictJSONError(f"nested deeper than {MAX_DEPTH} levels") from None
    except StrictJSONError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise StrictJSONError(f"not valid JSON ({exc})") from None
    _check(value)
    return value
