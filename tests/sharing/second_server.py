"""A second Pixie server in its own process and database, on a loopback port."""

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.live_api import api_call
from tests.migrated import MigratedDatabase

ROOT = Path(__file__).resolve().parents[2]

SETUP = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from catalog.services.workspace_skills import skill_create
from pixie.core.models import Membership, Workspace
from pixie.sharing.services import contact_card_export

rita = get_user_model().objects.create_user("rita", password="a-long-test-password")
desk = Workspace.objects.create(slug="remote-desk", name="Remote Desk")
Membership.objects.create(workspace=desk, user=rita, role="owner")
skill_create(workspace=desk, slug="meeting-prep", name="Meeting Prep",
             short_description="Rita's own.", body="Book the room first.", actor=rita)
with open(OUT, "w") as out:
    json.dump({"token": Token.objects.create(user=rita).key,
               "card": contact_card_export(workspace=desk)}, out)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class SecondServer:
    directory: Path
    migrated: MigratedDatabase  # the conftest's migrated_sqlite, copied for this server
    port: int = field(default_factory=free_port)
    token: str = ""
    card: dict = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def database(self) -> Path:
        return self.directory / "remote.sqlite3"

    def env(self) -> dict:
        return {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{self.database}",
            "PIXIE_DATA_DIR": str(self.directory),
            "PIXIE_PUBLIC_URL": self.url,
            "PIXIE_KEY_ENCRYPTION_KEY": self.migrated.key_encryption_key,
            "REDIS_URL": "",
            "DEBUG": "1",
            "PIXIE_DISPATCH_ALLOW_PRIVATE": "1",  # it replies to us on loopback
        }

    def prepare(self) -> None:
        """Its database (a copy of one migrated already), with Rita, owner of Remote Desk."""
        self._env = self.env()
        self.migrated.copy_to(self.database)
        out = self.directory / "setup.json"
        self._manage("shell", "-v", "0", "-c", f"OUT = {str(out)!r}\n" + SETUP)
        details = json.loads(out.read_text())
        self.token, self.card = details["token"], details["card"]

    def _manage(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self._env,
            check=True,
            capture_output=True,
            timeout=180,
        )

    def start(self) -> None:
        log = open(self.directory / "runserver.log", "ab")  # noqa: SIM115 (closed with the process)
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
            cwd=ROOT,
            env=self._env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.log())
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the second server did not start:\n" + self.log())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self.process = None

    def log(self) -> str:
        path = self.directory / "runserver.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def api(self, method: str, path: str, data: dict | None = None) -> tuple[int, dict]:
        """Call the second server's API as Rita, with her token."""
        return api_call(self.url, self.token, method, path, data, timeout=30)
