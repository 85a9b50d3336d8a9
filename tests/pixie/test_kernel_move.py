"""The kernel moved from pixie/'s root into pixie/core/ with its app label kept: a
database made by the code before the move migrates under the code after it, and its
history, audit chain and generations are all still there and still read."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The last commit with the kernel at pixie/'s root (pixie/models.py, pixie/audit.py, ...).
BEFORE_MOVE = "b7c172356763a7f083f785f80dadd62dc7d67bae"

# Run by the code of either tree with its own modules: counts of what must survive.
APPLY_A_PLAN = """
from django.contrib.auth import get_user_model
from catalog.models import BundleVersion, Plan
from pixie.installer.plans import plan_approve, plan_create
from {models} import Workspace
owner = get_user_model().objects.get(username="owner")
workspace = Workspace.objects.get(slug="acme")
version = BundleVersion.objects.filter(status="published").order_by("pk").first()
plan = plan_create(workspace=workspace, kind=Plan.Kind.INSTALL, bundle_version=version, actor=owner)
plan_approve(plan=plan, actor=owner)
plan.refresh_from_db()
assert plan.status == Plan.State.APPLIED, plan.status
"""
READ_HISTORY = """
import json
from reversion.models import Version
from catalog.models import Generation
from {models} import AuditEntry, Workspace
workspace = Workspace.objects.get(slug="acme")
print(json.dumps({{
    "workspace_versions": Version.objects.get_for_object(workspace).count(),
    "audit_entries": AuditEntry.objects.count(),
    "generations": list(
        Generation.objects.filter(installation__workspace=workspace)
        .values_list("number", flat=True)
    ),
}}))
"""


def _git_has(commit: str) -> bool:
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=REPO, capture_output=True
    )
    return found.returncode == 0


def _manage(tree: Path, data: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env |= {"PIXIE_DATA_DIR": str(data), "DJANGO_SETTINGS_MODULE": "pixie.settings"}
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=tree, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)} in {tree}:\n{done.stderr}"
    return done.stdout


def _history(tree: Path, data: Path, models: str) -> dict:
    # The last line: the lines before it are the apps' logs (JSON too).
    out = _manage(tree, data, "shell", "-c", READ_HISTORY.format(models=models))
    return json.loads(out.strip().splitlines()[-1])


def _tables(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: conn.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}  # noqa: S608


@pytest.mark.slow
def test_a_database_made_before_the_kernel_moved_keeps_its_history(tmp_path):
    if not _git_has(BEFORE_MOVE):
        pytest.skip("needs the repository's history (a clone, not an export)")
    old = tmp_path / "old"
    old.mkdir()
    archive = subprocess.run(
        ["git", "archive", BEFORE_MOVE], cwd=REPO, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    data = tmp_path / "data"

    # The old code: its migrations, the demo catalog and workspace, one plan applied.
    _manage(old, data, "migrate", "--no-input")
    _manage(old, data, "demo")
    _manage(old, data, "shell", "-c", APPLY_A_PLAN.format(models="pixie.models"))
    before = _history(old, data, "pixie.models")
    tables_before = _tables(data / "pixie.sqlite3")
    assert before["workspace_versions"] > 0 and before["generations"] == [1]

    # The new code on the same database: nothing to migrate for the move, every row kept.
    _manage(REPO, data, "migrate", "--no-input")
    tables_after = _tables(data / "pixie.sqlite3")
    # Migrations added since (delivery's, a notification kind) write their own bookkeeping:
    # the migrations applied, their models' content types and permissions, and SQLite's
    # sequences for those, and the operators' and auditors' groups given a new app's
    # permissions (sources'). Every other table keeps exactly its rows.
    bookkeeping = {"django_migrations", "django_content_type", "auth_permission",
                   "sqlite_sequence", "auth_group_permissions"}  # fmt: skip
    kept = {t: n for t, n in tables_before.items() if t not in bookkeeping}
    assert {t: tables_after.get(t) for t in kept} == kept
    granted = tables_after["auth_group_permissions"] - tables_before["auth_group_permissions"]
    assert granted == 5  # operators: add, change, delete, view a source; auditors: view
    after = _history(REPO, data, "pixie.core.models")
    assert after == before
    verified = _manage(REPO, data, "audit_verify")
    assert "every digest matches" in verified
    assert f"{before['audit_entries']:,} entries" in verified
