"""The bundle folder format: read and written without touching the database.

    <folder>/bundle.toml (or bundle.yaml)   slug, name, version, description, notes,
                                            publisher, skills, [[hosts]], [[credentials]],
                                            [[approvals]]
    <folder>/skills/<slug>/SKILL.md         an Agent Skills folder: YAML frontmatter,
    <folder>/skills/<slug>/...              the Markdown body, and any supporting files
                                            (scripts/, references/, assets/, ...)
    <folder>/bundle.signature.json          optional: the publisher's signature over the
                                            version's manifest (catalog.manifest)

A skill folder follows the public Agent Skills format: `name` equal to the folder
name, `description` up to 1,024 characters, optional `license`, `compatibility`,
`metadata` and `allowed-tools`. Pixie's own fields live in `metadata` (`version`,
`display-name`) and in bundle.toml (`[[approvals]]`). Files in Pixie's earlier
shape (a display name in `name`, top-level `version` and `approvals`) still load.
Any other frontmatter key is kept as it is and reported as a notice.

Every problem names the file it is in; reading stops at nothing so a person sees
all of them at once. Nothing is skipped silently: a file deliberately ignored
(such as .DS_Store) is named in the notices.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import tomli_w
import yaml
from django.conf import settings

from catalog.manifest import SIGNATURE_FILE, SignatureFile, parse_signature_file
from catalog.skill_content import media_type, sha256_of, skill_digest
from catalog.validators import (
    COMPATIBILITY_MAX,
    DESCRIPTION_MAX,
    NAME_MAX,
    NOTES_MAX,
    SKILL_DESCRIPTION_MAX,
    SKILL_NAME_MAX,
    is_credential_name,
    is_host,
    is_semver,
)
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.names import name_problem
from pixie.core.namespace.engine import is_slug

MANIFEST_KEYS = {
    "slug", "name", "version", "description", "notes", "publisher", "skills", "hosts",
    "credentials", "approvals",
}  # fmt: skip
HOST_KEYS = {"host", "port", "purpose"}
CREDENTIAL_KEYS = {"name", "host", "purpose"}
MANIFEST_APPROVAL_KEYS = {"skill", "operation", "rule"}
APPROVAL_KEYS = {"operation", "rule"}
# The Agent Skills format's fields; anything else is kept and reported.
AGENT_SKILLS_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
# Pixie's earlier shape put these at the top level of the frontmatter.
LEGACY_KEYS = {"version", "approvals"}
SKILL_FILE = "SKILL.md"
# Operating-system and editor clutter: not part of a skill, never stored, always named.
IGNORED_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}
IGNORED_DIRS = {".git", "__pycache__", ".svn", ".hg"}
BOM = "\ufeff"
# How deep lists and tables may nest in a manifest or a frontmatter (the deepest the
# formats' own examples go is 3 or 4).
MAX_NESTING = 20


class BundleFileError(ValidationFailed):
    code = ErrorCode.BAD_BUNDLE_FILE


@dataclass(frozen=True)
class FileSpec:
    """A supporting file of a skill folder (anything but SKILL.md)."""

    path: str
    data: bytes = field(repr=False)
    executable: bool = False

    @property
    def size(self) -> int:
        return len(self.data)

    @cached_property  # hashing 50 MiB once, not once per use
    def sha256(self) -> str:
        return sha256_of(self.data)

    @property
    def media_type(self) -> str:
        return media_type(self.path, self.data)


@dataclass(frozen=True)
class SkillSpec:
    slug: str
    version: str
    name: str
    description: str
    body: str
    approvals: list[dict[str, str]] = field(default_factory=list)
    frontmatter: dict[str, Any] = field(default_factory=dict)
    files: tuple[FileSpec, ...] = ()
    # SKILL.md exactly as it was read ("" when the skill was not read from a file).
    skill_md: str = ""
    source: str = field(default="", compare=False)
    # False when the version label was taken from the bundle, not the skill's file.
    version_given: bool = field(default=True, compare=False)
    # True when the approvals are in SKILL.md (the earlier shape), not in bundle.toml.
    approvals_in_file: bool = field(default=False, compare=False)

    @cached_property
    def digest(self) -> str:
        return skill_digest(
            name=self.name,
            description=self.description,
            body=self.body,
            approvals=self.approvals,
            frontmatter=self.frontmatter,
            files=((f.path, f.executable, f.sha256) for f in self.files),
        )


@dataclass(frozen=True)
class HostSpec:
    host: str
    port: int
    purpose: str


@dataclass(frozen=True)
class CredentialSpec:
    name: str
    host: str
    purpose: str


@dataclass(frozen=True)
class BundleSpec:
    slug: str
    name: str
    version: str
    description: str
    notes: str
    publisher: str
    skills: list[SkillSpec]
    hosts: list[HostSpec]
    credentials: list[CredentialSpec]
    # What a person should know that refuses nothing: kept keys, ignored files.
    notices: list[str] = field(default_factory=list, compare=False)
    # The publisher's signature that came with the folder (or that a stored version has).
    signature: SignatureFile | None = field(default=None, compare=False)


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice instead of keeping the last, and reads
    dates as the strings they were written as (a skill's frontmatter is stored as JSON)."""


def _construct_mapping(loader, node, deep=False):
    keys = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in keys:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears twice", key_node.start_mark
            )
        keys.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class YamlRefused(yaml.YAMLError):
    """YAML Pixie will not expand: an alias, or nesting past MAX_NESTING."""


def _load_yaml(text: str):
    """The YAML's value, after a first pass over its events (streamed, linear in the
    text) refuses what would expand out of all proportion before anything is built: an
    alias (*name; a few of them nested make gigabytes of a few hundred bytes: a
    'billion laughs') and nesting deeper than MAX_NESTING (which would exhaust the stack
    of PyYAML's recursive composer)."""
    depth = 0
    for event in yaml.parse(text, Loader=_StrictLoader):
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(
                f"an alias (*{event.anchor}) at line {event.start_mark.line + 1}: Pixie does "
                "not expand YAML aliases; write the value out"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise YamlRefused(
                    f"nested more than {MAX_NESTING} levels deep at line "
                    f"{event.start_mark.line + 1}"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def _load_toml(text: str) -> dict:
    """tomllib's value, refused past MAX_NESTING levels (tomllib recurses into each array
    and inline table: a few thousand brackets exhaust its stack)."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(f"nested more than {MAX_NESTING} levels deep") from None
    if _deeper_than(data, MAX_NESTING):
        raise tomllib.TOMLDecodeError(f"nested more than {MAX_NESTING} levels deep")
    return data


def _deeper_than(value, limit: int) -> bool:
    """Whether ``value`` nests lists and tables more than ``limit`` levels (the top one
    counts), level by level: no recursion."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return False


def _decode(data: bytes, problems: list[str], label: str) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(f"{label}: not UTF-8 text")
        return None
    if "\x00" in text:
        problems.append(f"{label}: contains a NUL character")
        return None
    return text


LINK_REFUSED = "is a symbolic link; a bundle holds files, not links (copy the file in its place)"
FOLDER_LINK_REFUSED = (
    "is a symbolic link; a bundle holds folders, not links (copy the folder in its place)"
)
SPECIAL_REFUSED = "is not a regular file (a device, pipe or socket)"


class FileRefused(Exception):
    """A path that is not read: why, in words that follow its name."""


def kind_problem(mode: int) -> str | None:
    """Why an entry of this (lstat) mode is not read as a file, or None for a regular file."""
    if stat.S_ISLNK(mode):
        return LINK_REFUSED
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(mode):
        return SPECIAL_REFUSED
    return None


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file. A link, device, pipe or socket is refused (FileRefused)
    without being opened for reading: the path is looked at with lstat, then opened without
    following a link and without waiting on a pipe, and looked at again once open, so a file
    swapped for a link in between is refused too."""
    try:
        problem = kind_problem(os.lstat(path).st_mode)
    except FileNotFoundError:
        raise FileRefused("file is missing") from None
    except OSError as exc:
        raise FileRefused(f"cannot be read ({exc.strerror})") from None
    if problem:
        raise FileRefused(problem)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(LINK_REFUSED) from None
        raise FileRefused(f"cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        problem = kind_problem(info.st_mode)
        if problem:
            raise FileRefused(problem)
        if info.st_size > limit:
            raise FileRefused(
                f"is {info.st_size:,} bytes; the limit for one file is {limit:,} "
                "(PIXIE_SKILL_FILE_MAX_BYTES)"
            )
        data = file.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise FileRefused(f"is larger than {limit:,} bytes (PIXIE_SKILL_FILE_MAX_BYTES)")
    return data


def _read_text(path: Path, problems: list[str], label: str) -> str | None:
    """A text file's content with a leading BOM dropped and CRLF read as LF."""
    try:
        data = read_regular_file(path, settings.PIXIE_SKILL_FILE_MAX_BYTES)
    except FileRefused as exc:
        problems.append(f"{label}: {exc}")
        return None
    text = _decode(data, problems, label)
    return None if text is None else text.removeprefix(BOM).replace("\r\n", "\n")


def _text(value, label: str, key: str, limit: int, problems: list[str], *, required=True,
          rule: str = "the limit") -> str:  # fmt: skip
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f"{label}: '{key}' must be a non-empty string")
        return ""
    if len(value) > limit:
        problems.append(f"{label}: '{key}' is {len(value):,} characters; {rule} is {limit:,}")
    if "\x00" in value:
        problems.append(f"{label}: '{key}' contains a NUL character")
    return value


def _name(value, label: str, key: str, problems: list[str]) -> str:
    """A display name: required text, at most NAME_MAX characters, one line."""
    name = _text(value, label, key, NAME_MAX, problems).strip()
    if problem := name_problem(name):
        problems.append(f"{label}: '{key}' {problem}")
    return name


def _unknown_keys(data: dict, allowed: set[str], label: str, problems: list[str]) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        problems.append(
            f"{label}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """(yaml, body) of a SKILL.md (BOM dropped, LF line ends), or None when it does not
    open with a --- block."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            return None
    return text[4 : end + 1], text[end + 5 :]


def normalize_body(body: str) -> str:
    return body.lstrip("\n").rstrip()


def agent_skills_name_problem(name: object, folder: str) -> str | None:
    """Why ``name`` breaks the Agent Skills rule for a skill's name, or None."""
    rule = "(Agent Skills: 1-64 lowercase letters, digits and hyphens)"
    if not isinstance(name, str) or not name:
        return f"'name' must be a non-empty string {rule}"
    if not name.isascii():
        return (
            f"'name' {name!r} has non-ASCII letters; the Agent Skills format allows them, but "
            "Pixie's slugs are ASCII ([a-z0-9-]): rename the folder and the name"
        )
    if len(name) > SKILL_NAME_MAX:
        return f"'name' is {len(name)} characters; the Agent Skills limit is {SKILL_NAME_MAX}"
    if not is_slug(name.strip("-") or "-") or name != name.lower():
        return f"'name' {name!r} may hold only lowercase letters, digits and hyphens {rule}"
    if name.startswith("-") or name.endswith("-"):
        return f"'name' {name!r} must not start or end with a hyphen (Agent Skills)"
    if "--" in name:
        return f"'name' {name!r} must not contain two hyphens in a row (Agent Skills)"
    if name != folder:
        return f"'name' {name!r} must equal the skill's folder name {folder!r} (Agent Skills)"
    return None


def _jsonable(value) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def parse_skill_md(
    raw: str, slug: str, default_version: str, problems: list[str], notices: list[str],
    label: str, *, files: tuple[FileSpec, ...] = (), approvals_from_manifest=None,
) -> SkillSpec | None:  # fmt: skip
    """Read one SKILL.md (its text exactly as in the file) into a SkillSpec."""
    text = raw.removeprefix(BOM).replace("\r\n", "\n")
    parts = split_frontmatter(text)
    if parts is None:
        problems.append(f"{label}: must start with a '---' YAML frontmatter block")
        return None
    raw_yaml, body = parts
    try:
        meta = _load_yaml(raw_yaml)
    except yaml.YAMLError as exc:
        problems.append(f"{label}: frontmatter is not valid YAML ({_first_line(exc)})")
        return None
    if not isinstance(meta, dict):
        problems.append(f"{label}: frontmatter must be a mapping of keys to values")
        return None
    before = len(problems)
    bad_keys = [k for k in meta if not isinstance(k, str)]
    if bad_keys:
        problems.append(f"{label}: frontmatter keys must be text; got {bad_keys[0]!r}")
        return None
    legacy = bool(LEGACY_KEYS & set(meta))
    metadata = meta.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        problems.append(f"{label}: 'metadata' must be a mapping of keys to values (Agent Skills)")
        metadata = None
    if legacy:
        name = _name(meta.get("name"), label, "name", problems)
    else:
        problem = agent_skills_name_problem(meta.get("name"), slug)
        if problem:
            problems.append(f"{label}: {problem}")
        display = (metadata or {}).get("display-name")
        name = display.strip() if isinstance(display, str) and display.strip() else slug
        if len(name) > NAME_MAX:
            problems.append(
                f"{label}: 'metadata.display-name' is {len(name)} characters; the limit is "
                f"{NAME_MAX}"
            )
        elif problem := name_problem(name):
            problems.append(f"{label}: 'metadata.display-name' {problem}")
    description = _text(
        meta.get("description"), label, "description", SKILL_DESCRIPTION_MAX, problems,
        rule="the Agent Skills limit",
    ).strip()  # fmt: skip
    compatibility = meta.get("compatibility")
    if compatibility is not None:
        _text(compatibility, label, "compatibility", COMPATIBILITY_MAX, problems,
              rule="the Agent Skills limit")  # fmt: skip
    for key in ("license",):
        if key in meta and not isinstance(meta[key], str):
            problems.append(f"{label}: '{key}' must be text (Agent Skills)")
    if isinstance(metadata, dict):
        odd = sorted(str(k) for k, v in metadata.items() if not isinstance(v, str))
        if odd:
            notices.append(
                f"{label}: metadata {', '.join(odd)} kept as written; the Agent Skills format "
                "expects text values"
            )
    version, version_given = _skill_version(meta, legacy, default_version, label, problems)
    approvals = _approvals(meta.get("approvals", []), label, problems)
    in_file = "approvals" in meta
    if approvals_from_manifest:
        if in_file:
            problems.append(
                f"{label}: approvals are given both here and in the bundle's [[approvals]]; "
                "keep one"
            )
        approvals = approvals_from_manifest
    body = normalize_body(body)
    if not body:
        problems.append(f"{label}: the body is empty")
    frontmatter = {k: v for k, v in meta.items() if k not in {"name", "description"} | LEGACY_KEYS}
    for key, value in frontmatter.items():
        if not _jsonable(value):
            problems.append(f"{label}: '{key}' holds a value that cannot be stored as JSON")
    if len(problems) > before:
        return None
    extra = sorted(k for k in frontmatter if k not in AGENT_SKILLS_KEYS)
    if extra:
        notices.append(
            f"{label}: kept {', '.join(repr(k) for k in extra)} as written (not an Agent Skills "
            "field; clients that know it use it)"
        )
    if legacy:
        notices.append(
            f"{label}: written in Pixie's earlier shape (display name in 'name', top-level "
            f"{' and '.join(sorted(LEGACY_KEYS & set(meta)))}); it loads as it is"
        )
    return SkillSpec(
        slug=slug,
        version=version,
        name=name,
        description=description,
        body=body,
        approvals=approvals,
        frontmatter=frontmatter,
        files=files,
        skill_md=raw,
        source=label,
        version_given=version_given,
        approvals_in_file=in_file,
    )


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


def _skill_version(meta: dict, legacy: bool, default: str, label: str, problems: list[str]):
    """(version label, whether the file gave it): top-level `version` in the earlier shape,
    else metadata.version when it is a semantic version, else the bundle's version."""
    version = meta.get("version")
    if version is None:
        metadata = meta.get("metadata")
        candidate = metadata.get("version") if isinstance(metadata, dict) else None
        return (candidate, True) if is_semver(candidate) else (default, False)
    if not is_semver(version):
        problems.append(
            f"{label}: 'version' {version!r} is not a semantic version such as 2.1.0 "
            "(quote it if YAML reads it as a number)"
        )
        return default, False
    return version, True


def _approvals(value, label: str, problems: list[str], keys=APPROVAL_KEYS) -> list[dict]:
    if not isinstance(value, list):
        problems.append(f"{label}: 'approvals' must be a list of {{operation, rule}}")
        return []
    approvals = []
    for index, item in enumerate(value, start=1):
        where = f"{label}: approvals[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be a mapping with 'operation' and 'rule'")
            continue
        _unknown_keys(item, keys, where, problems)
        operation = item.get("operation")
        if not is_slug(operation):
            problems.append(f"{where}: 'operation' {operation!r} must be a slug like take-payment")
        rule = _text(item.get("rule"), where, "rule", DESCRIPTION_MAX, problems)
        approvals.append({"operation": operation, "rule": rule, **(
            {"skill": item.get("skill")} if "skill" in keys else {})})  # fmt: skip
    return approvals


@dataclass
class _Budget:
    """The bundle's byte ceiling, shared by every skill folder read."""

    left: int
    exceeded: bool = False


def file_name_problem(name: str) -> str | None:
    """Why a file or folder name cannot be stored as it is, or None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8"
    if any(ord(c) < 32 or c == "\x7f" for c in name):
        return "its name holds a control character"
    if "\\" in name:
        return "its name holds a backslash, which names a folder on some systems"
    return None


def read_skill_folder(
    folder: Path, label: str, problems: list[str], notices: list[str], budget: _Budget
) -> tuple[str | None, tuple[FileSpec, ...]]:
    """(SKILL.md's text exactly as stored, the other files) of one skill folder.

    Regular files only: a symbolic link, a device or a pipe is refused, naming it.
    """
    files: list[FileSpec] = []
    skill_md: str | None = None
    limit = settings.PIXIE_SKILL_FILE_MAX_BYTES
    max_files = settings.PIXIE_SKILL_MAX_FILES
    pending = [(folder, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{label}/{prefix}: cannot be read ({exc.strerror})")
            continue
        if not entries and prefix:
            notices.append(f"{label}/{prefix.rstrip('/')}: an empty folder is not kept")
        for entry in entries:
            relative = prefix + entry.name
            where = f"{label}/{relative}"
            why = file_name_problem(entry.name)
            if why:
                problems.append(f"{label}/{relative!r}: refused: {why}")
                continue
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{where}: {LINK_REFUSED}")
            elif stat.S_ISDIR(mode):
                if entry.name in IGNORED_DIRS:
                    notices.append(f"{where}/: ignored (tool or version-control folder)")
                else:
                    pending.append((Path(entry.path), relative + "/"))
            elif not stat.S_ISREG(mode):
                problems.append(f"{where}: {SPECIAL_REFUSED}")
            elif entry.name in IGNORED_FILES or entry.name.endswith(".pyc"):
                notices.append(f"{where}: ignored (operating-system or compiler clutter)")
            else:
                size = entry.stat(follow_symlinks=False).st_size
                if size > limit:
                    problems.append(
                        f"{where}: is {size:,} bytes; the limit for one file is {limit:,} "
                        "(PIXIE_SKILL_FILE_MAX_BYTES)"
                    )
                    continue
                budget.left -= size
                if budget.left < 0:
                    budget.exceeded = True
                    continue
                try:
                    data = read_regular_file(Path(entry.path), limit)
                except FileRefused as exc:
                    problems.append(f"{where}: {exc}")
                    continue
                if relative == SKILL_FILE:
                    skill_md = _decode(data, problems, where)
                else:
                    files.append(FileSpec(relative, data, bool(mode & 0o111)))
    if len(files) > max_files:
        problems.append(
            f"{label}: holds {len(files):,} files; the limit for one skill is {max_files:,} "
            "(PIXIE_SKILL_MAX_FILES)"
        )
    if skill_md is None and not any(p.startswith(f"{label}/{SKILL_FILE}") for p in problems):
        problems.append(f"{label}/{SKILL_FILE}: file is missing")
    files.sort(key=lambda f: f.path)
    return skill_md, tuple(files)


# How far a folder without bundle.toml is looked into for skill folders, to say what it
# holds: public collections keep theirs one to four folders down (skills/<name>/,
# skills/.curated/<name>/, plugins/<plugin>/skills/<name>/).
SKILL_SEARCH_DEPTH = 4
SKILL_SEARCH_FOLDERS = 5_000
# Folders that hold no skill of a collection: not looked into.
SKILL_SEARCH_SKIPPED = {".git", "node_modules", "__pycache__", ".venv"}
NAMES_SHOWN = 10


def skill_folders_in(folder: Path) -> list[str]:
    """The folders under ``folder`` (relative, sorted) that hold a SKILL.md, "." for the
    folder itself. Links are not followed; the search stops at SKILL_SEARCH_DEPTH levels and
    SKILL_SEARCH_FOLDERS folders, so a huge tree costs a bounded walk."""
    found: list[str] = []
    walk = os.walk(folder, followlinks=False)
    for visited, (here, subfolders, files) in enumerate(walk, start=1):
        relative = Path(here).relative_to(folder)
        if SKILL_FILE in files:
            found.append(relative.as_posix())
        if visited >= SKILL_SEARCH_FOLDERS:
            break
        if len(relative.parts) >= SKILL_SEARCH_DEPTH:
            subfolders[:] = []
        else:
            subfolders[:] = sorted(d for d in subfolders if d not in SKILL_SEARCH_SKIPPED)
    return sorted(found)


def missing_manifest_hint(folder: Path, *, what: str = "this folder") -> str:
    """What a folder without bundle.toml holds and what to write, or "" if it holds no
    skill: a published collection (skill folders, no bundle.toml) or one skill folder is
    what an operator most often has in hand."""
    try:
        skill_folders = skill_folders_in(folder)
    except OSError:
        return ""
    if not skill_folders:
        return ""
    if skill_folders == ["."]:
        return (
            f"{what} is one skill (SKILL.md at its top): a bundle folder holds it as "
            "skills/<name>/SKILL.md next to a bundle.toml that names it "
            '(slug, name, version and skills = ["<name>"]; docs/SKILL_FORMAT.md)'
        )
    names = [Path(path).name for path in skill_folders if path != "."]
    shown = ", ".join(f'"{name}"' for name in names[:NAMES_SHOWN])
    more = f", ... ({len(names) - NAMES_SHOWN} more)" if len(names) > NAMES_SHOWN else ""
    where = (
        ""
        if all(path == f"skills/{Path(path).name}" for path in skill_folders)
        else f" ({skill_folders[0]}, ...); move each to skills/<name>/"
    )
    return (
        f"{what} holds {len(names)} skill folder{'' if len(names) == 1 else 's'} "
        f"(SKILL.md){where}; write a bundle.toml beside skills/ with slug, name, version and "
        f"skills = [{shown}{more}] in the order agents get them (docs/SKILL_FORMAT.md)"
    )


def _read_manifest(folder: Path, problems: list[str]) -> tuple[dict | None, str]:
    toml_path, yaml_path = folder / "bundle.toml", folder / "bundle.yaml"
    if not os.path.lexists(toml_path) and not os.path.lexists(yaml_path):
        hint = missing_manifest_hint(folder)
        if hint:
            problems.append(f"bundle.toml: file is missing: {hint}")
            return None, "bundle.toml"
    # lexists: a link is there (and refused by name), whether or not it leads anywhere.
    if os.path.lexists(toml_path) and os.path.lexists(yaml_path):
        problems.append(f"{folder}: has both bundle.toml and bundle.yaml; keep one")
        return None, "bundle.toml"
    if os.path.lexists(yaml_path):
        text = _read_text(yaml_path, problems, "bundle.yaml")
        if text is None:
            return None, "bundle.yaml"
        try:
            data = _load_yaml(text)
        except yaml.YAMLError as exc:
            problems.append(f"bundle.yaml: not valid YAML ({_first_line(exc)})")
            return None, "bundle.yaml"
        return data, "bundle.yaml"
    text = _read_text(toml_path, problems, "bundle.toml")
    if text is None:
        return None, "bundle.toml"
    try:
        return _load_toml(text), "bundle.toml"
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"bundle.toml: not valid TOML ({_first_line(exc)})")
        return None, "bundle.toml"


def read_bundle_folder(folder: Path | str, *, default_publisher: str = "pixie") -> BundleSpec:
    """Parse and validate a bundle folder; raise BundleFileError listing every problem."""
    folder = Path(folder)
    problems: list[str] = []
    notices: list[str] = []
    if not folder.is_dir():
        raise BundleFileError(f"{folder}: no such folder")
    data, label = _read_manifest(folder, problems)
    if data is None:
        raise BundleFileError(problems)
    if not isinstance(data, dict):
        raise BundleFileError(f"{label}: must be a table of keys")
    _unknown_keys(data, MANIFEST_KEYS, label, problems)
    slug = data.get("slug")
    if not is_slug(slug):
        problems.append(f"{label}: 'slug' {slug!r} must match ^[a-z0-9][a-z0-9-]{{0,63}}$")
    name = _name(data.get("name"), label, "name", problems)
    version = data.get("version")
    if not is_semver(version):
        problems.append(f"{label}: 'version' {version!r} is not a semantic version such as 2.1.0")
        version = "0.0.0"
    description = _text(
        data.get("description", ""), label, "description", DESCRIPTION_MAX, problems,
        required=False,
    )  # fmt: skip
    notes = _text(data.get("notes", ""), label, "notes", NOTES_MAX, problems, required=False)
    publisher = data.get("publisher", default_publisher)
    if not is_slug(publisher):
        problems.append(f"{label}: 'publisher' {publisher!r} must be a slug")

    approvals = _manifest_approvals(data.get("approvals", []), data.get("skills"), label, problems)
    skills = _skills(folder, data.get("skills"), version, approvals, label, problems, notices)
    hosts = _hosts(data.get("hosts", []), label, problems)
    credentials = _credentials(
        data.get("credentials", []), {h.host for h in hosts}, label, problems
    )
    _notice_strays(folder, data.get("skills"), label, notices)
    signature = _read_signature(folder, problems)
    if problems:
        raise BundleFileError(problems)
    return BundleSpec(
        slug=slug,
        name=name,
        version=version,
        description=description.strip(),
        notes=notes.strip(),
        publisher=publisher,
        skills=skills,
        hosts=hosts,
        credentials=credentials,
        notices=notices,
        signature=signature,
    )


def _read_signature(folder: Path, problems: list[str]) -> SignatureFile | None:
    """bundle.signature.json's fields, if the folder has one (checked against the catalog's
    keys and the content by bundle_load, not here)."""
    path = folder / SIGNATURE_FILE
    if not os.path.lexists(path):
        return None
    text = _read_text(path, problems, SIGNATURE_FILE)
    if text is None:
        return None
    signature, found = parse_signature_file(text)
    problems.extend(found)
    return signature


def _listed(skills) -> set[str]:
    """The names a manifest's 'skills' lists (anything else in it is refused by _skills,
    and must not break the checks that read the list before)."""
    return {s for s in skills if isinstance(s, str)} if isinstance(skills, list) else set()


def _notice_strays(folder: Path, listed, label: str, notices: list[str]) -> None:
    """Name what the folder holds beyond the manifest and the listed skills."""
    listed = _listed(listed)
    for entry in sorted(os.listdir(folder)):
        if entry in {"bundle.toml", "bundle.yaml", "skills", SIGNATURE_FILE} | IGNORED_FILES:
            continue
        notices.append(f"{entry}: not part of any skill ({label} lists skills under skills/); "
                       "not stored")  # fmt: skip
    skills_dir = folder / "skills"
    if skills_dir.is_dir() and not skills_dir.is_symlink():
        for entry in sorted(os.listdir(skills_dir)):
            if entry not in listed and entry not in IGNORED_FILES:
                notices.append(f"skills/{entry}: not listed in {label}'s 'skills'; not loaded")


def _manifest_approvals(value, skills, label: str, problems: list[str]) -> dict[str, list]:
    """bundle.toml's [[approvals]] (skill, operation, rule), by skill."""
    by_skill: dict[str, list] = {}
    listed = _listed(skills)
    for approval in _approvals(value, label, problems, keys=MANIFEST_APPROVAL_KEYS):
        skill = approval.pop("skill")
        if not isinstance(skill, str) or skill not in listed:
            problems.append(
                f"{label}: approvals: skill {skill!r} is not one of the bundle's skills"
            )
            continue
        by_skill.setdefault(skill, []).append(approval)
    return by_skill


def _skills(folder: Path, value, version: str, approvals: dict, label: str,
            problems: list[str], notices: list[str]) -> list[SkillSpec]:  # fmt: skip
    if not isinstance(value, list) or not value:
        problems.append(f"{label}: 'skills' must be a non-empty list of skill folder names")
        return []
    specs, seen = [], set()
    budget = _Budget(left=settings.PIXIE_BUNDLE_MAX_BYTES)
    if os.path.islink(folder / "skills"):
        problems.append(f"skills: {FOLDER_LINK_REFUSED}")
        return []
    for slug in value:
        if not is_slug(slug):
            problems.append(f"{label}: skill {slug!r} must match ^[a-z0-9][a-z0-9-]{{0,63}}$")
            continue
        if slug in seen:
            problems.append(f"{label}: skill {slug} is listed twice")
            continue
        seen.add(slug)
        skill_label = f"skills/{slug}"
        skill_dir = folder / "skills" / slug
        if skill_dir.is_symlink():
            problems.append(f"{skill_label}: {FOLDER_LINK_REFUSED}")
            continue
        if not skill_dir.is_dir():
            missing = not os.path.lexists(skill_dir)
            problems.append(
                f"{skill_label}/{SKILL_FILE}: file is missing"
                if missing
                else f"{skill_label}: is not a folder"
            )
            continue
        raw, files = read_skill_folder(skill_dir, skill_label, problems, notices, budget)
        if raw is None:
            continue
        spec = parse_skill_md(
            raw, slug, version, problems, notices, f"{skill_label}/{SKILL_FILE}", files=files,
            approvals_from_manifest=approvals.get(slug),
        )  # fmt: skip
        if spec:
            specs.append(spec)
    if budget.exceeded:
        limit = settings.PIXIE_BUNDLE_MAX_BYTES
        problems.append(
            f"{label}: the skill folders hold more than {limit:,} bytes, the limit for one "
            "bundle (PIXIE_BUNDLE_MAX_BYTES)"
        )
    return specs


def _hosts(value, label: str, problems: list[str]) -> list[HostSpec]:
    if not isinstance(value, list):
        problems.append(f"{label}: 'hosts' must be a list of tables")
        return []
    hosts, seen = [], set()
    for index, item in enumerate(value, start=1):
        where = f"{label}: hosts[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be a table with host, port, purpose")
            continue
        _unknown_keys(item, HOST_KEYS, where, problems)
        host, port = item.get("host"), item.get("port", 443)
        if not is_host(host):
            problems.append(f"{where}: 'host' {host!r} must be a lower-case DNS name")
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            problems.append(f"{where}: 'port' {port!r} must be a number from 1 to 65535")
        purpose = _text(item.get("purpose"), where, "purpose", DESCRIPTION_MAX, problems)
        if (host, port) in seen:
            problems.append(f"{where}: {host}:{port} is listed twice")
        seen.add((host, port))
        hosts.append(HostSpec(host=host, port=port, purpose=purpose))
    return hosts


def _credentials(value, hosts: set[str], label: str, problems: list[str]) -> list[CredentialSpec]:
    if not isinstance(value, list):
        problems.append(f"{label}: 'credentials' must be a list of tables")
        return []
    credentials, seen = [], set()
    for index, item in enumerate(value, start=1):
        where = f"{label}: credentials[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be a table with name, host, purpose")
            continue
        _unknown_keys(item, CREDENTIAL_KEYS, where, problems)
        name, host = item.get("name"), item.get("host")
        if not is_credential_name(name):
            problems.append(
                f"{where}: 'name' {name!r} must be an environment variable name like "
                "LEDGER_API_TOKEN"
            )
        if host not in hosts:
            problems.append(f"{where}: 'host' {host!r} is not one of the bundle's hosts")
        purpose = _text(item.get("purpose"), where, "purpose", DESCRIPTION_MAX, problems)
        if name in seen:
            problems.append(f"{where}: {name} is listed twice")
        seen.add(name)
        credentials.append(CredentialSpec(name=name, host=host, purpose=purpose))
    return credentials


def render_skill_file(spec: SkillSpec) -> str:
    """SKILL.md for a skill that was not read from a file, in the Agent Skills shape:
    Pixie's version and display name go in `metadata`, approvals in bundle.toml."""
    meta: dict[str, Any] = {"name": spec.slug, "description": spec.description}
    meta.update(spec.frontmatter)
    metadata = dict(meta.get("metadata") or {})
    if spec.name != spec.slug:
        metadata["display-name"] = spec.name
    metadata["version"] = spec.version
    meta["metadata"] = metadata
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{spec.body}\n"


def skill_md_text(spec: SkillSpec) -> str:
    """SKILL.md as it was loaded (byte for byte), or rendered when it never was a file."""
    return spec.skill_md or render_skill_file(spec)


def write_bundle_folder(spec: BundleSpec, folder: Path | str) -> Path:
    """Write a bundle folder that read_bundle_folder reads back to the same spec: each
    SKILL.md and supporting file byte for byte, with its executable bit."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise BundleFileError(f"{folder}: folder exists and is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bundle.toml").write_text(manifest_text(spec))
    if spec.signature is not None:
        (folder / SIGNATURE_FILE).write_text(spec.signature.as_json())
    for skill in spec.skills:
        skill_dir = folder / "skills" / skill.slug
        skill_dir.mkdir(parents=True)
        (skill_dir / SKILL_FILE).write_bytes(skill_md_text(skill).encode("utf-8"))
        for file in skill.files:
            target = skill_dir / file.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.data)
            target.chmod(0o755 if file.executable else 0o644)
    return folder


def manifest_text(spec: BundleSpec) -> str:
    manifest: dict[str, Any] = {
        "slug": spec.slug,
        "name": spec.name,
        "version": spec.version,
        "description": spec.description,
        "notes": spec.notes,
        "publisher": spec.publisher,
        "skills": [skill.slug for skill in spec.skills],
        "hosts": [{"host": h.host, "port": h.port, "purpose": h.purpose} for h in spec.hosts],
        "credentials": [
            {"name": c.name, "host": c.host, "purpose": c.purpose} for c in spec.credentials
        ],
        "approvals": [
            {"skill": skill.slug, **approval}
            for skill in spec.skills
            if not skill.approvals_in_file
            for approval in skill.approvals
        ],
    }
    if not manifest["approvals"]:
        del manifest["approvals"]
    return tomli_w.dumps(manifest, multiline_strings=True)


def has_frontmatter_key(skill_md: str, key: str) -> bool:
    """Whether a stored SKILL.md's frontmatter holds ``key`` (for a dump's manifest)."""
    parts = split_frontmatter(skill_md.removeprefix(BOM).replace("\r\n", "\n"))
    if parts is None:
        return False
    try:
        meta = _load_yaml(parts[0])
    except yaml.YAMLError:
        return False
    return isinstance(meta, dict) and key in meta
