"""Field rules shared by the models, the bundle loader and the API."""

import re

from django.core.exceptions import ValidationError

NAME_MAX = 80  # a display name
DESCRIPTION_MAX = 400  # one line about a bundle, a host, a credential
NOTES_MAX = 20_000  # a bundle version's release notes
# The Agent Skills format's own limits, for a skill folder's SKILL.md.
SKILL_NAME_MAX = 64
SKILL_DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
# The format's context guidance: past it a skill still loads, with a warning shown.
from catalog.skill_content import GUIDANCE_LINES, GUIDANCE_TOKENS  # noqa: E402, F401

# semver.org's own pattern: MAJOR.MINOR.PATCH with optional pre-release and build.
SEMVER_RE = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,  # \d is 0-9 only: "١.٢.٠" (Arabic-Indic digits) is not a version
)
CREDENTIAL_NAME_RE = re.compile(r"[A-Z][A-Z0-9_]{0,127}")
HOST_LABEL_RE = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def is_semver(value: object) -> bool:
    return isinstance(value, str) and SEMVER_RE.fullmatch(value) is not None


def version_key(value: str) -> tuple:
    """Sort key for semantic versions: releases after their pre-releases."""
    match = SEMVER_RE.fullmatch(value)
    if not match:
        return (0, 0, 0, 0, ())
    major, minor, patch, pre, _build = match.groups()
    pre_key: tuple = ()
    if pre:
        pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (int(major), int(minor), int(patch), 0 if pre else 1, pre_key)


def is_credential_name(value: object) -> bool:
    return isinstance(value, str) and CREDENTIAL_NAME_RE.fullmatch(value) is not None


def is_host(value: object) -> bool:
    """A DNS host name (no scheme, port, path or wildcard), lowercase."""
    if not isinstance(value, str) or not value or len(value) > 253:
        return False
    labels = value.split(".")
    return len(labels) >= 2 and all(HOST_LABEL_RE.fullmatch(label) for label in labels)


def validate_semver(value: str) -> None:
    if not is_semver(value):
        raise ValidationError(
            "%(value)r is not a semantic version (MAJOR.MINOR.PATCH, e.g. 2.1.0).",
            params={"value": value},
        )


def validate_credential_name(value: str) -> None:
    if not is_credential_name(value):
        raise ValidationError(
            "%(value)r is not a credential name: upper-case letters, digits and underscores, "
            "starting with a letter (e.g. LEDGER_API_TOKEN).",
            params={"value": value},
        )


def validate_host(value: str) -> None:
    if not is_host(value):
        raise ValidationError(
            "%(value)r is not a host name: lower-case DNS name such as ledger.example.com, "
            "without scheme, port or path.",
            params={"value": value},
        )


def body_too_large(body: str) -> str | None:
    """Why a skill body is over the catalog's ceiling (bytes per file), or None.

    Installed skills, local edits and agents' overrides follow the catalog's limit;
    the 8,000-character limit of a share applies to shares only.
    """
    from django.conf import settings

    size = len(body.encode("utf-8"))
    limit = settings.PIXIE_SKILL_FILE_MAX_BYTES
    if size > limit:
        return (
            f"is {size:,} bytes; the limit for one file is {limit:,} (PIXIE_SKILL_FILE_MAX_BYTES)"
        )
    return None
