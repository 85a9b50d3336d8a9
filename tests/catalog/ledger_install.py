"""The Ledger Tools bundle (a 30,000-character skill with scripts/, references/ and a
binary asset) loaded, published and installed in a workspace through an approved plan."""

from __future__ import annotations

from pathlib import Path

from django.core.management import call_command

from catalog.models import BundleVersion, WorkspaceSkill
from tests.catalog.skill_folders import LEDGER_EXPORT_INTRO, bundle_folder, ledger_export_skill
from tests.catalog.skill_folders import long_body as _long_body
from tests.installer.flow import install

# Prose only: until code spans stop counting as mentions, no `@` sits inside code here.
PLAIN_INTRO = (
    "# Export ledger statements\n\n"
    "Use this skill when someone asks for a statement of account. Read the ledger with\n"
    "@ledger-lookup, never from memory. Run scripts/export.py to produce the PDF and read\n"
    "references/statement-fields.md for what each column means.\n\n"
)

LEDGER_EXPORT_FILES = ["assets/logo.png", "references/statement-fields.md", "scripts/export.py"]


def long_body(target_chars: int = 30_000) -> str:
    return PLAIN_INTRO + _long_body(target_chars)[len(LEDGER_EXPORT_INTRO) :]


def ledger_tools(root: Path, *, body: str | None = None) -> BundleVersion:
    """Load and publish Ledger Tools 1.0.0 from a folder written under ``root``."""
    folder = bundle_folder(root / "ledger-tools")
    ledger_export_skill(
        folder / "skills" / "ledger-export", body=long_body() if body is None else body
    )
    call_command("bundle_load", str(folder), "--publish")
    return BundleVersion.objects.get(bundle__slug="ledger-tools", version="1.0.0")


def install_ledger_tools(root, workspace, owner, capture, *, body=None, agents=()):
    """Ledger Tools installed in ``workspace``: its skills by slug."""
    install(workspace, ledger_tools(root, body=body), owner, capture, agents)
    return {
        skill.slug: skill
        for skill in WorkspaceSkill.objects.filter(workspace=workspace).select_related("head")
    }
