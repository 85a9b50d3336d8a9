"""The bundle folder format: read and written without touching the database.

    <folder>/bundle.toml (or bundle.yaml)   slug, name, version, description, notes,
                                            publisher, skills, [[hosts]], [[credentials]]
    <folder>/skills/<slug>/SKILL.md         YAML frontmatter, then the Markdown body

A SKILL.md in the public Agent Skills format (name, description, license,
compatibility, metadata, allowed-tools) loads as is and keeps those fields.
Every problem names the file it is in; reading stops at nothing so a person sees
all of them at once.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w
import yaml

from catalog.validators import (
    BODY_MAX,
    DESCRIPTION_MAX,
    NAME_MAX,
    is_credential_name,
    is_host,
    is_semver,
)
from pixie.errors import ValidationFailed
from pixie.namespace import is_slug

MANIFEST_KEYS = {
    "slug", "name", "version", "description", "notes", "publisher", "skills", "hosts",
    "credentials",
}  # fmt: skip
HOST_KEYS = {"host", "port", "purpose"}
CREDENTIAL_KEYS = {"name", "host", "purpose"}
PIXIE_SKILL_KEYS = {"name", "description", "version", "approvals"}
# Kept verbatim in SkillVersion.frontmatter so a dump writes them back.
AGENT_SKILLS_KEYS = {"license", "compatibility", "metadata", "allowed-tools"}
APPROVAL_KEYS = {"operation", "rule"}
MAX_FILE_BYTES = 256 * 1024


class BundleFileError(ValidationFailed):
    code = "bad_bundle_file"


@dataclass(frozen=True)
class SkillSpec:
    slug: str
    version: str
    name: str
    description: str
    body: str
    approvals: list[dict[str, str]] = field(default_factory=list)
    frontmatter: dict[str, Any] = field(default_factory=dict)
    source: str = field(default="", compare=False)


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


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice instead of keeping the last."""


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


def _read_text(path: Path, problems: list[str], label: str) -> str | None:
    if not path.is_file():
        problems.append(f"{label}: file is missing")
        return None
    if path.stat().st_size > MAX_FILE_BYTES:
        problems.append(f"{label}: file is larger than {MAX_FILE_BYTES // 1024} KiB")
        return None
    try:
        return path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        problems.append(f"{label}: not UTF-8 text")
        return None


def _text(value, label: str, key: str, limit: int, problems: list[str], *, required=True):
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f"{label}: '{key}' must be a non-empty string")
        return ""
    if len(value) > limit:
        problems.append(f"{label}: '{key}' is {len(value)} characters; the limit is {limit}")
    if "\x00" in value:
        problems.append(f"{label}: '{key}' contains a NUL character")
    return value


def _unknown_keys(data: dict, allowed: set[str], label: str, problems: list[str]) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        problems.append(
            f"{label}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """(yaml, body) of a SKILL.md, or None when it does not open with a --- block."""
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


def parse_skill_file(
    path: Path, slug: str, default_version: str, problems: list[str], label: str
) -> SkillSpec | None:
    text = _read_text(path, problems, label)
    if text is None:
        return None
    parts = split_frontmatter(text)
    if parts is None:
        problems.append(f"{label}: must start with a '---' YAML frontmatter block")
        return None
    raw_yaml, body = parts
    try:
        meta = yaml.load(raw_yaml, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        problems.append(f"{label}: frontmatter is not valid YAML ({_first_line(exc)})")
        return None
    if not isinstance(meta, dict):
        problems.append(f"{label}: frontmatter must be a mapping of keys to values")
        return None
    before = len(problems)
    _unknown_keys(meta, PIXIE_SKILL_KEYS | AGENT_SKILLS_KEYS, label, problems)
    name = _text(meta.get("name"), label, "name", NAME_MAX, problems)
    description = _text(meta.get("description"), label, "description", DESCRIPTION_MAX, problems)
    if "\n" in description.strip():
        problems.append(f"{label}: 'description' must be one line")
    version = _skill_version(meta, default_version, label, problems)
    approvals = _approvals(meta.get("approvals", []), label, problems)
    body = normalize_body(body)
    if not body:
        problems.append(f"{label}: the body is empty")
    elif len(body) > BODY_MAX:
        problems.append(f"{label}: the body is {len(body)} characters; the limit is {BODY_MAX}")
    if "\x00" in body:
        problems.append(f"{label}: the body contains a NUL character")
    if len(problems) > before:
        return None
    extras = {k: meta[k] for k in meta if k in AGENT_SKILLS_KEYS}
    return SkillSpec(
        slug=slug,
        version=version,
        name=name,
        description=description.strip(),
        body=body,
        approvals=approvals,
        frontmatter=extras,
        source=label,
    )


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


def _skill_version(meta: dict, default: str, label: str, problems: list[str]) -> str:
    version = meta.get("version")
    if version is None:
        # Agent Skills files carry no version of their own: metadata.version if
        # it is one, else the bundle's version.
        metadata = meta.get("metadata")
        candidate = metadata.get("version") if isinstance(metadata, dict) else None
        return candidate if is_semver(candidate) else default
    if not is_semver(version):
        problems.append(
            f"{label}: 'version' {version!r} is not a semantic version such as 2.1.0 "
            "(quote it if YAML reads it as a number)"
        )
        return default
    return version


def _approvals(value, label: str, problems: list[str]) -> list[dict[str, str]]:
    if not isinstance(value, list):
        problems.append(f"{label}: 'approvals' must be a list of {{operation, rule}}")
        return []
    approvals = []
    for index, item in enumerate(value, start=1):
        where = f"{label}: approvals[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be a mapping with 'operation' and 'rule'")
            continue
        _unknown_keys(item, APPROVAL_KEYS, where, problems)
        operation = item.get("operation")
        if not is_slug(operation):
            problems.append(f"{where}: 'operation' {operation!r} must be a slug like take-payment")
        rule = _text(item.get("rule"), where, "rule", DESCRIPTION_MAX, problems)
        approvals.append({"operation": operation, "rule": rule})
    return approvals


def _read_manifest(folder: Path, problems: list[str]) -> tuple[dict | None, str]:
    toml_path, yaml_path = folder / "bundle.toml", folder / "bundle.yaml"
    if toml_path.exists() and yaml_path.exists():
        problems.append(f"{folder}: has both bundle.toml and bundle.yaml; keep one")
        return None, "bundle.toml"
    if yaml_path.exists():
        text = _read_text(yaml_path, problems, "bundle.yaml")
        if text is None:
            return None, "bundle.yaml"
        try:
            data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as exc:
            problems.append(f"bundle.yaml: not valid YAML ({_first_line(exc)})")
            return None, "bundle.yaml"
        return data, "bundle.yaml"
    text = _read_text(toml_path, problems, "bundle.toml")
    if text is None:
        return None, "bundle.toml"
    try:
        return tomllib.loads(text), "bundle.toml"
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"bundle.toml: not valid TOML ({_first_line(exc)})")
        return None, "bundle.toml"


def read_bundle_folder(folder: Path | str, *, default_publisher: str = "pixie") -> BundleSpec:
    """Parse and validate a bundle folder; raise BundleFileError listing every problem."""
    folder = Path(folder)
    problems: list[str] = []
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
    name = _text(data.get("name"), label, "name", NAME_MAX, problems)
    version = data.get("version")
    if not is_semver(version):
        problems.append(f"{label}: 'version' {version!r} is not a semantic version such as 2.1.0")
        version = "0.0.0"
    description = _text(
        data.get("description", ""), label, "description", DESCRIPTION_MAX, problems,
        required=False,
    )  # fmt: skip
    notes = _text(data.get("notes", ""), label, "notes", BODY_MAX, problems, required=False)
    publisher = data.get("publisher", default_publisher)
    if not is_slug(publisher):
        problems.append(f"{label}: 'publisher' {publisher!r} must be a slug")

    skills = _skills(folder, data.get("skills"), version, label, problems)
    hosts = _hosts(data.get("hosts", []), label, problems)
    credentials = _credentials(
        data.get("credentials", []), {h.host for h in hosts}, label, problems
    )
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
    )


def _skills(folder: Path, value, version: str, label: str, problems: list[str]) -> list[SkillSpec]:
    if not isinstance(value, list) or not value:
        problems.append(f"{label}: 'skills' must be a non-empty list of skill folder names")
        return []
    specs, seen = [], set()
    for slug in value:
        if not is_slug(slug):
            problems.append(f"{label}: skill {slug!r} must match ^[a-z0-9][a-z0-9-]{{0,63}}$")
            continue
        if slug in seen:
            problems.append(f"{label}: skill {slug} is listed twice")
            continue
        seen.add(slug)
        skill_label = f"skills/{slug}/SKILL.md"
        spec = parse_skill_file(folder / "skills" / slug / "SKILL.md", slug, version, problems,
                                skill_label)  # fmt: skip
        if spec:
            specs.append(spec)
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
    meta: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "version": spec.version,
    }
    if spec.approvals:
        meta["approvals"] = spec.approvals
    meta.update(spec.frontmatter)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{spec.body}\n"


def write_bundle_folder(spec: BundleSpec, folder: Path | str) -> Path:
    """Write a bundle folder that read_bundle_folder reads back to the same spec."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise BundleFileError(f"{folder}: folder exists and is not empty")
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
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bundle.toml").write_text(tomli_w.dumps(manifest, multiline_strings=True))
    for skill in spec.skills:
        skill_dir = folder / "skills" / skill.slug
        skill_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(render_skill_file(skill), encoding="utf-8")
    return folder
