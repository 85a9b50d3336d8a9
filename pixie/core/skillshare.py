"""Skill shares: the wire format, its hard validation, and the import merge.

Pure standard-library code: no Django, no database. A share is a skill plus
its skill closure, carried as an ordinary message whose body is the JSON
``{"pixie_skill_share": {"skill": {...}, "closure": [...]}}``.
"""

from __future__ import annotations

import json
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from pixie.core.namespace.engine import (
    apply_renames,
    is_slug,
    make_slug,
    mention_set,
    parse_mentions,
)

SENTINEL = "pixie_skill_share"
MAX_ITEMS = 12
MAX_NAME = 80
MAX_SHORT = 400
MAX_BODY = 8000
MAX_WIRE_BYTES = 64 * 1024

_ITEM_KEYS = frozenset({"id", "name", "shortDescription", "detailedBody"})
_SHARE_KEYS = frozenset({"skill", "closure"})


@dataclass(frozen=True)
class Item:
    """One skill as it travels: its authored content and nothing else."""

    id: str
    name: str
    short_description: str
    detailed_body: str


@dataclass(frozen=True)
class Share:
    """A decoded share: the shared skill and the skills it mentions."""

    skill: Item
    closure: tuple[Item, ...] = ()

    @property
    def items(self) -> tuple[Item, ...]:
        return (self.skill, *self.closure)


def _item_to_wire(item: Item) -> dict[str, str]:
    return {
        "id": item.id,
        "name": item.name,
        "shortDescription": item.short_description,
        "detailedBody": item.detailed_body,
    }


def encode(skill: Item, closure: Sequence[Item]) -> str:
    """The message body carrying ``skill`` and its closure."""
    payload = {
        SENTINEL: {
            "skill": _item_to_wire(skill),
            "closure": [_item_to_wire(item) for item in closure],
        }
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


class _Refused(ValueError):
    """Raised from inside the JSON parser to abandon a malformed body."""


def _refuse(_value: object) -> NoReturn:
    raise _Refused


def _is_clean(text: str) -> bool:
    # Lone surrogates (from "\ud800" escapes) cannot be stored or displayed
    # faithfully, and NUL truncates strings in C-backed storage and UIs.
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unique_clean_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of duplicate keys; two parsers disagreeing on
    # which value counts is a classic smuggling route, so refuse outright.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result or not _is_clean(key):
            raise _Refused
        result[key] = value
    return result


def _item_from_wire(raw: object) -> Item | None:
    if not isinstance(raw, dict) or raw.keys() != _ITEM_KEYS:
        return None
    values = raw.values()
    if not all(isinstance(value, str) and _is_clean(value) for value in values):
        return None
    item = Item(
        id=raw["id"],
        name=raw["name"],
        short_description=raw["shortDescription"],
        detailed_body=raw["detailedBody"],
    )
    if not is_slug(item.id):
        return None
    if not 0 < len(item.name) <= MAX_NAME:
        return None
    if len(item.short_description) > MAX_SHORT or len(item.detailed_body) > MAX_BODY:
        return None
    return item


def decode(body: object) -> Share | None:
    """The share carried by ``body``, or None if it is not a well-formed one.

    Never raises: a malformed body is just an ordinary chat message.
    """
    # Cheap refusals first, before the parser spends anything on the body.
    if not isinstance(body, str) or len(body) > MAX_WIRE_BYTES:
        return None
    if SENTINEL not in body:
        return None
    try:
        if len(body.encode("utf-8")) > MAX_WIRE_BYTES:
            return None
        # No number, boolean or null can appear anywhere in a valid share, so
        # numbers and the non-standard constants are refused during parsing.
        document = json.loads(
            body,
            object_pairs_hook=_unique_clean_keys,
            parse_constant=_refuse,
            parse_int=_refuse,
            parse_float=_refuse,
        )
    except (ValueError, RecursionError):
        # ValueError covers JSONDecodeError, _Refused and UnicodeEncodeError.
        return None
    if not isinstance(document, dict) or document.keys() != {SENTINEL}:
        return None
    envelope = document[SENTINEL]
    if not isinstance(envelope, dict) or envelope.keys() != _SHARE_KEYS:
        return None
    raw_closure = envelope["closure"]
    if not isinstance(raw_closure, list) or len(raw_closure) + 1 > MAX_ITEMS:
        return None
    items = [_item_from_wire(raw) for raw in [envelope["skill"], *raw_closure]]
    if any(item is None for item in items):
        return None
    ids = {item.id for item in items}
    if len(ids) != len(items):
        return None
    return Share(skill=items[0], closure=tuple(items[1:]))


def unresolved_mentions(
    share: Share,
    local_skill_slugs: Container[str],
    tool_slugs: Container[str],
) -> list[str]:
    """Mentions in the share's bodies that nothing on this side resolves."""
    own_ids = {item.id for item in share.items}
    unresolved: dict[str, None] = {}
    for item in share.items:
        for slug in parse_mentions(item.detailed_body):
            if slug in own_ids or slug in local_skill_slugs or slug in tool_slugs:
                continue
            unresolved.setdefault(slug)
    return list(unresolved)


@dataclass
class Outcome:
    """What an import added, what it skipped as identical, and its renames."""

    imported: list[Item] = field(default_factory=list)
    skipped_identical: list[str] = field(default_factory=list)
    renames: list[tuple[str, str]] = field(default_factory=list)

    @property
    def nothing_new(self) -> bool:
        return not self.imported


def _identical(item: Item, local_entry: tuple[str, str] | None) -> bool:
    if local_entry is None:
        return False
    name, body = local_entry
    return name == item.name and body == item.detailed_body


def _skippable(
    items: tuple[Item, ...],
    local: Mapping[str, tuple[str, str]],
    tool_slugs: Container[str],
    mentions: Mapping[str, set[str]],
) -> set[str]:
    """Ids of incoming items that may be dropped in favour of the local copy.

    An identical item is only skippable if none of its mentions point at an
    incoming item that will be re-slugged: the local copy's mention resolves
    to the recipient's unrelated skill of that name, the incoming one to its
    bundle-mate, so the two would not mean the same thing. Ids are assumed
    unique, as ``decode`` guarantees.
    """
    colliding = {item.id for item in items if item.id in local or item.id in tool_slugs}
    skippable = {item.id for item in items if _identical(item, local.get(item.id))}
    changed = True
    while changed:
        re_slugged = colliding - skippable
        unsafe = {slug for slug in skippable if mentions[slug] & re_slugged}
        skippable -= unsafe
        changed = bool(unsafe)
    return skippable


def merge(
    share: Share,
    local: Mapping[str, tuple[str, str]],
    tool_slugs: Container[str],
) -> Outcome:
    """Merge ``share`` into ``local`` (slug -> (name, body)) without touching it.

    Items whose slug is free import as they are; items identical to the local
    skill of that slug are skipped; the rest are re-slugged from their name,
    and the rename cascades over the bodies of the incoming items only.
    """
    outcome = Outcome()
    # Each body's mentions are read once, for both uses below.
    mentions = {item.id: mention_set(item.detailed_body) for item in share.items}
    skippable = _skippable(share.items, local, tool_slugs, mentions)
    working: list[Item] = []
    for item in share.items:
        if item.id in skippable:
            outcome.skipped_identical.append(item.id)
        else:
            working.append(item)

    current_ids = {item.id for item in share.items}
    # Slugs the bundle already mentions are avoided too: a mention that
    # resolved to nothing must not start resolving to a freshly re-slugged
    # bundle-mate it never meant.
    mentioned = set().union(*mentions.values())

    def is_taken(slug: str) -> bool:
        return slug in local or slug in tool_slugs or slug in current_ids or slug in mentioned

    renames: dict[str, str] = {}
    for item in working:
        if item.id not in local and item.id not in tool_slugs:
            continue
        renames[item.id] = make_slug(item.name, is_taken)
        current_ids.add(renames[item.id])
    outcome.renames = list(renames.items())
    if renames:
        # A new slug is never an old one nor mentioned anywhere, so renaming all at
        # once, in one pass over each body, equals cascading them one by one.
        working = [
            replace(
                item,
                id=renames.get(item.id, item.id),
                detailed_body=apply_renames(
                    {old: new for old, new in renames.items() if old in mentions[item.id]},
                    item.detailed_body,
                ),
            )
            for item in working
        ]
    outcome.imported = working
    return outcome
