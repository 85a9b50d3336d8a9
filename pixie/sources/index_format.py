"""A site's Agent Skills discovery index (v0.2.0), read as Pixie serves it
(pixie.delivery.index) and as the format's text says:

    {"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
     "skills": [{"name": "invoice-chase", "type": "archive" | "skill-md",
                 "description": "...", "url": "<relative to the index's URL>",
                 "digest": "sha256:<64 lowercase hex>"}, ...]}

An ``archive`` entry is a .zip or .tar.gz holding the skill folder at its root, a
``skill-md`` entry the skill's one SKILL.md; each digest is the SHA-256 of the bytes at
its URL. Another ``$schema`` (or none: v0.1.0, which had no digests) is refused; an
entry of another type is skipped and named, as the format asks; unknown fields are
ignored.

Pure: the body is at most PIXIE_SOURCES_INDEX_MAX_BYTES (checked as it is read), parsed
once by json (linear; a nesting too deep for it is a refusal, not a crash), and every
rule below is a fixed-size check or a set lookup, so a hostile index costs its length.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from catalog.bundle_files import BundleFileError
from catalog.services.bundle_upload import MAX_PROBLEMS

from .upstream_text import upstream_line

SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
TYPES = ("archive", "skill-md")
# The Agent Skills name rule: groups of [a-z0-9] joined by single hyphens, 1 to 64.
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
NAME_MAX = 64
DIGEST = re.compile(r"sha256:([0-9a-f]{64})")
URL_MAX = 2000
SHOWN = 100  # characters of upstream's text a message quotes


@dataclass(frozen=True)
class IndexEntry:
    name: str
    type: str
    url: str  # as the index writes it: resolved against the index's own URL
    digest: str  # the SHA-256 in hex, without "sha256:"

    @property
    def shown_digest(self) -> str:
        return f"sha256:{self.digest}"


@dataclass(frozen=True)
class DiscoveryIndex:
    entries: list[IndexEntry]  # those of a type Pixie reads, in the index's order
    skipped: list[str]  # the entries of another type, named with it


def _shown(value: object) -> str:
    return upstream_line(str(value), limit=SHOWN)


def index_parse(body: bytes, *, max_entries: int) -> DiscoveryIndex:
    """The index's entries; BundleFileError naming every problem (at most MAX_PROBLEMS)."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise BundleFileError("The index nests its JSON too deeply to be read") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleFileError(f"The index is not JSON ({_shown(exc)})") from None
    if not isinstance(data, dict):
        raise BundleFileError("The index must be a JSON object with $schema and skills")
    schema = data.get("$schema")
    if schema != SCHEMA:
        found = f"its $schema is {_shown(schema)!r}" if schema is not None else "it has no $schema"
        raise BundleFileError(
            f"The index is not a discovery index of version 0.2.0 ({found}; Pixie reads {SCHEMA})"
        )
    skills = data.get("skills")
    if not isinstance(skills, list):
        raise BundleFileError("The index's 'skills' must be a list of entries")
    if len(skills) > max_entries:
        raise BundleFileError(
            f"The index lists {len(skills):,} skills; the limit for one source is "
            f"{max_entries:,} (PIXIE_SOURCES_INDEX_MAX_ENTRIES)"
        )
    entries: list[IndexEntry] = []
    skipped: list[str] = []
    problems: list[str] = []
    seen: set[str] = set()
    for position, item in enumerate(skills, start=1):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"… and perhaps more: reading stopped after {MAX_PROBLEMS} problems")
            break
        entry = _entry(item, position, problems)
        if entry is None:
            continue
        if entry.name in seen:
            problems.append(f"The index's entry {entry.name}: listed twice")
        elif entry.type not in TYPES:
            skipped.append(f"{entry.name} (type {_shown(entry.type)!r})")
        else:
            entries.append(entry)
        seen.add(entry.name)
    if problems:
        raise BundleFileError(problems)
    return DiscoveryIndex(entries, skipped)


def _entry(item: object, position: int, problems: list[str]) -> IndexEntry | None:
    where = f"The index's entry #{position}"
    if not isinstance(item, dict):
        problems.append(f"{where}: must be an object with name, type, url and digest")
        return None
    name, kind = item.get("name"), item.get("type")
    url, digest = item.get("url"), item.get("digest")
    if not isinstance(name, str) or len(name) > NAME_MAX or not NAME.fullmatch(name):
        problems.append(
            f"{where}: its name {_shown(name)!r} is not a skill's name (1 to {NAME_MAX} "
            "lowercase letters and digits in groups joined by single hyphens)"
        )
        return None
    where = f"The index's entry {name}"
    found = len(problems)
    if not isinstance(kind, str):
        problems.append(f"{where}: its type must be 'archive' or 'skill-md'")
    if not isinstance(url, str) or not url or len(url) > URL_MAX:
        problems.append(f"{where}: its url must be a URL of at most {URL_MAX:,} characters")
    matched = DIGEST.fullmatch(digest) if isinstance(digest, str) else None
    if matched is None:
        problems.append(
            f"{where}: its digest {_shown(digest)!r} is not sha256: and 64 lowercase hex digits"
        )
    if len(problems) > found:
        return None
    return IndexEntry(name, kind, url, matched.group(1))


def entries_choose(
    index: DiscoveryIndex, names: list[str] | None
) -> tuple[list[IndexEntry], list[str]]:
    """The entries to read, in order (every one, or those ``names`` lists, in its order),
    and the names listed that the index does not hold (or holds with a type Pixie does
    not read)."""
    if names is None:
        return list(index.entries), []
    by_name = {entry.name: entry for entry in index.entries}
    chosen, missing, seen = [], [], set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if name in by_name:
            chosen.append(by_name[name])
        else:
            missing.append(_shown(name))
    return chosen, missing


def index_digest(entries: list[IndexEntry]) -> str:
    """What identifies the chosen entries' content: the SHA-256 (hex) of each one's name,
    type and digest, in order. The same digest, the same bytes at every URL (each is
    checked against its own digest), so a check that finds it again reads nothing more."""
    lines = "".join(f"{entry.name} {entry.type} {entry.shown_digest}\n" for entry in entries)
    return hashlib.sha256(lines.encode()).hexdigest()
