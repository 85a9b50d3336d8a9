"""The npm ``skills`` CLI (1.7.4, on the Node.js 22 the repository's package.json pins),
run for real against a Pixie server: what people run to put skills into Claude Code,
Codex, Cursor and the rest.

``npm ci --omit=optional`` at the repository's root installs both (scripts/test does when
npm exists; .ci/run always). Without them the tests that need the client skip, saying why;
under CI=true, or
PIXIE_REQUIRE_CLIENTS=1 as .ci/run sets, they fail instead."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules" / ".bin" / "node"
CLI = ROOT / "node_modules" / "skills" / "bin" / "cli.mjs"


def require_cli() -> None:
    if NODE.exists() and CLI.exists():
        return
    message = (
        f"the skills CLI is not installed ({CLI.relative_to(ROOT)}): run `npm ci --omit=optional` "
        "at the repository's root (needs npm)"
    )
    if os.environ.get("CI") == "true" or os.environ.get("PIXIE_REQUIRE_CLIENTS") == "1":
        pytest.fail(message)
    pytest.skip(message)


@dataclass
class Run:
    status: int
    output: str


@dataclass
class SkillsCli:
    home: Path  # the client's HOME: its global lock file and caches stay in the test

    def run(self, *args: str, cwd: Path, timeout: float = 60) -> Run:
        cwd.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": f"{NODE.parent}:{os.environ.get('PATH', '')}",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".state"),
            # Unless told not to, the client reports every install, URL and token
            # included, to its vendor (docs/DELIVERY.md).
            "DISABLE_TELEMETRY": "1",
            "DO_NOT_TRACK": "1",
            "NO_COLOR": "1",
            "CI": "1",
        }
        done = subprocess.run(  # noqa: S603 (our own pinned client)
            [str(NODE), str(CLI), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return Run(done.returncode, done.stdout + done.stderr)
