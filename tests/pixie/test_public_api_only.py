"""Pixie uses its libraries through their documented API only (issue #44): the checker
scripts/private_api_check finds no private or internal use in the application's code, and
it does find each kind when one is written."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKER = ROOT / "scripts" / "private_api_check"


def check(*paths) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(CHECKER), *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_application_uses_no_private_or_internal_api():
    result = check()
    assert result.returncode == 0, result.stdout
    assert "0 finding(s)" in result.stderr


def test_each_kind_of_private_use_is_found(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from django.contrib import admin\n"
        "from django.utils.http import parse_etags\n"
        "from reversion import revisions\n"
        "revisions._save_revision = print\n"
        "class Hidden(admin.ModelAdmin):\n"
        "    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):\n"
        "        return None\n"
        "    def registry(self):\n"
        "        return self.admin_site._registry\n"
    )
    result = check(planted)
    assert result.returncode == 1
    found = [line.split(": ", 1)[1] for line in result.stdout.splitlines()]
    assert found == [
        "[undocumented] imports django.utils.http.parse_etags: not in django.utils.http's"
        " documented API",
        "[private] replaces reversion.revisions._save_revision (monkeypatch)",
        "[override] Hidden._get_obj_does_not_exist_redirect: a private method only a library"
        " calls",
        "[private] self.admin_site._registry: a library object's private attribute",
    ]
