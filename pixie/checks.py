"""System checks `manage.py check` runs: what a developer's defaults leave unprotected."""

import os
import stat
from pathlib import Path

from django.conf import settings
from django.core.checks import Tags, Warning, register

NEW_KEY = "openssl rand -base64 32"


@register(Tags.security)
def key_encryption_key_check(app_configs, **kwargs):
    """pixie.W001: workspaces' private keys are wrapped under a key anyone can derive."""
    source_key = getattr(settings, "PIXIE_SOURCE_KEY_ENCRYPTION_KEY", None)
    if not source_key or source_key != settings.PIXIE_KEY_ENCRYPTION_KEY:
        return []
    return [
        Warning(
            "Private keys (workspaces' and publishers') are encrypted with the development "
            "key-encryption key, derived from a secret written in Pixie's source: anyone with "
            "the source and a copy of the database can open them.",
            hint=(
                "Set PIXIE_KEY_ENCRYPTION_KEY to the base64 of 32 random bytes "
                f"({NEW_KEY}) before workspaces and publishers make their keys: keys "
                "wrapped under one key do not open under another."
            ),
            id="pixie.W001",
        )
    ]


@register(Tags.security)
def private_files_check(app_configs, **kwargs):
    """pixie.W002: the SQLite database or data/ can be read by other users."""
    # data/ holds uploads and the demo's logins whatever the database is.
    name = _sqlite_file()
    loose = readable_by_others([Path(settings.DATA_DIR)] + ([Path(name)] if name else []))
    if not loose:
        return []
    return [
        Warning(
            f"Other users of this machine can read Pixie's data: {', '.join(loose)}.",
            hint="chmod 700 the data folder and 600 the SQLite file (Pixie could not: "
            "they belong to another user).",
            id="pixie.W002",
        )
    ]


@register(Tags.compatibility)
def renamed_environment_check(app_configs, **kwargs):
    """pixie.W003: an environment variable set under the name it had before a rename."""
    return [
        Warning(
            f"{old} is deprecated and will stop working in a later release"
            + (f"; {new} is set too, and wins." if os.environ.get(new) else "."),
            hint=f"Set {new} instead (the same value, the same meaning) and unset {old}.",
            id="pixie.W003",
        )
        for new, old in getattr(settings, "RENAMED_ENV", {}).items()
        if os.environ.get(old)
    ]


def readable_by_others(paths: list[Path]) -> list[str]:
    """Each path other users may read or write, with its mode ("data (0755)")."""
    loose = []
    for path in paths:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            continue
        if mode & 0o077:
            loose.append(f"{path} ({mode:04o})")
    return loose


def _sqlite_file() -> str | None:
    """The default database's file when it is SQLite on disk, else None."""
    database = settings.DATABASES["default"]
    name = str(database.get("NAME") or "")
    if database["ENGINE"] != "django.db.backends.sqlite3" or name in ("", ":memory:"):
        return None
    return None if name.startswith("file:") else name
