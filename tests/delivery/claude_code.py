"""Claude Code itself (npm @anthropic-ai/claude-code, pinned in package.json's
optionalDependencies), for its own validator: `claude plugin validate <dir> --strict`, which
runs offline in about half a second.

It is large (about 390 MB), so the README's test command installs the clients with
``--omit=optional`` and the tests that need it skip, saying why; .ci/run installs it
(PIXIE_REQUIRE_CLIENTS=1 there makes a missing one fail)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "node_modules" / ".bin" / "claude"


def require_claude() -> None:
    if CLAUDE.exists():
        return
    message = (
        "Claude Code is not installed (node_modules/.bin/claude): it is package.json's "
        "optional dependency, which `npm ci --omit=optional` leaves out; .ci/run installs it"
    )
    if os.environ.get("CI") == "true" or os.environ.get("PIXIE_REQUIRE_CLIENTS") == "1":
        pytest.fail(message)
    pytest.skip(message)


@dataclass
class Verdict:
    status: int
    output: str


def validate(folder: Path, home: Path) -> Verdict:
    """`claude plugin validate <folder> --strict` (a marketplace's folder, holding
    .claude-plugin/marketplace.json, or a plugin's, holding .claude-plugin/plugin.json)."""
    done = subprocess.run(  # noqa: S603 (our own pinned client)
        [str(CLAUDE), "plugin", "validate", str(folder), "--strict"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return Verdict(done.returncode, done.stdout + done.stderr)
