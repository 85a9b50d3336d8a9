"""The @-mention namespace: slugs, mention parsing, slug allocation, rename
cascade and skill closure.

Pure standard-library code: no Django, no database. Skills and tools share one
flat namespace of slugs matching ``^[a-z0-9][a-z0-9-]{0,63}$``.

Mention rules (shared by ``parse_mentions`` and ``apply_rename``): an ``@`` not
preceded by an ASCII letter, digit, ``.`` or ``_`` (so ``ann@example.com`` is
an address, not a mention), followed by the longest run of ``[A-Za-z0-9-]``
that starts with a letter or digit. Trailing hyphens are punctuation, not part
of the slug (``@plan-.`` mentions ``plan``). The slug is the run lowercased;
a run longer than 64 characters is not a mention at all rather than a
truncated one, because truncating would make ``@`` + 70 letters silently refer
to a different, shorter skill.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

MAX_SLUG = 64
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")

# Character classes are spelled out in ASCII (never \w, \d or re.IGNORECASE
# without re.ASCII): in Unicode mode [a-z] with IGNORECASE also matches the
# Kelvin sign and the long s, which would let look-alike text name a skill.
# The "@" comes first and the look-behind checks the character before it: a pattern
# that starts with a literal lets the regex engine jump between "@"s (3x faster).
_BEFORE_MENTION = r"@(?<![A-Za-z0-9._]@)"
_MENTION_RE = re.compile(_BEFORE_MENTION + r"([A-Za-z0-9][A-Za-z0-9-]*)")
_NOT_SLUG_CHARS = re.compile(r"[^A-Za-z0-9]+")


def is_slug(value: object) -> bool:
    """True when ``value`` is a str that is a well-formed slug."""
    # fullmatch, because SLUG_RE.match would accept "plan\n" ($ matches before
    # a trailing newline).
    return isinstance(value, str) and SLUG_RE.fullmatch(value) is not None


def parse_mentions(text: str) -> list[str]:
    """The slugs mentioned in ``text``, lowercased, in first-appearance order."""
    seen: dict[str, None] = {}
    if "@" not in text:
        return []
    for match in _MENTION_RE.finditer(text):
        slug = match.group(1).rstrip("-").lower()
        if len(slug) <= MAX_SLUG:
            seen.setdefault(slug)
    return list(seen)


def make_slug(display_name: str, is_taken: Callable[[str], bool]) -> str:
    """Kebab-case ``display_name`` and return the first free slug.

    Candidates are the base, then ``base-2``, ``base-3``, ... with the base
    shortened so the result stays within 64 characters.
    """
    name = display_name if isinstance(display_name, str) else ""
    # Substitute before lowercasing so only ASCII survives to .lower(): "İ"
    # would otherwise lowercase into an ASCII "i" plus a combining dot.
    base = _NOT_SLUG_CHARS.sub("-", name).lower().strip("-")
    base = base[:MAX_SLUG].rstrip("-") or "skill"
    if not is_taken(base):
        return base
    counter = 2
    while True:
        suffix = f"-{counter}"
        candidate = base[: MAX_SLUG - len(suffix)].rstrip("-") + suffix
        if not is_taken(candidate):
            return candidate
        counter += 1


@functools.lru_cache(maxsize=1024)
def _mention_of(slug: str) -> re.Pattern[str]:
    # After the slug only hyphens may follow before a non-slug character (or
    # the end); otherwise the run is a longer slug such as @plan-trip.
    return re.compile(
        _BEFORE_MENTION + re.escape(slug) + r"(?=-*(?![A-Za-z0-9-]))",
        re.ASCII | re.IGNORECASE,
    )


def apply_rename(old: str, new: str, text: str) -> str:
    """Rewrite every mention of ``@old`` in ``text`` to ``@new``.

    Raises ValueError unless both are slugs; ``new`` must also not end in a
    hyphen, since such a slug could never be mentioned again.
    """
    if not is_slug(old):
        raise ValueError(f"Cannot rename {old!r}: it is not a valid slug.")
    if not is_slug(new) or new.endswith("-"):
        raise ValueError(f"Cannot rename to {new!r}: it is not a valid slug.")
    if "@" not in text:
        return text
    # A slug holds no backslash, so it is safe as a literal replacement string.
    return _mention_of(old).sub("@" + new, text)


def apply_renames(renames: Mapping[str, str], text: str) -> str:
    """``apply_rename`` for several renames at once.

    No new slug may be an old one: each mention is renamed once, never twice.
    """
    for old, new in renames.items():
        if not is_slug(old):
            raise ValueError(f"Cannot rename {old!r}: it is not a valid slug.")
        if not is_slug(new) or new.endswith("-") or new in renames:
            raise ValueError(f"Cannot rename to {new!r}: it is not a valid slug.")
    if "@" not in text:
        return text
    # One C-speed pass per rename, without a Python call per match. Applying them in
    # turn equals applying them at once: a new slug is never an old one, and a
    # mention of a new slug is never a mention of an old one.
    for old, new in renames.items():
        text = _mention_of(old).sub("@" + new, text)
    return text


def mention_set(text: str) -> set[str]:
    """The slugs mentioned in ``text``, as a set: parse_mentions without the order."""
    if "@" not in text:
        return set()
    slugs = {run.rstrip("-").lower() for run in set(_MENTION_RE.findall(text))}
    return {slug for slug in slugs if len(slug) <= MAX_SLUG}


def closure(
    root: str,
    body_of: Callable[[str], str],
    is_skill: Callable[[str], bool],
) -> list[str]:
    """The root and every skill reachable through its mentions, pre-order DFS.

    Mentions that are not skills (tools, unknown slugs) are not followed.
    """
    # An explicit stack rather than recursion: a chain of thousands of skills
    # would otherwise hit the interpreter's recursion limit. Children are
    # pushed reversed and marked on pop, which yields the recursive pre-order.
    order: list[str] = []
    visited: set[str] = set()
    stack = [root]
    while stack:
        slug = stack.pop()
        if slug in visited:
            continue
        visited.add(slug)
        order.append(slug)
        children = [
            mention
            for mention in parse_mentions(body_of(slug))
            if mention not in visited and is_skill(mention)
        ]
        stack.extend(reversed(children))
    return order
