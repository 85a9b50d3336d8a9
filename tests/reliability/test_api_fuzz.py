"""13. A client no one here wrote: schemathesis, reading only /api/schema/, calls every
operation of a real Pixie server and checks each answer against the schema.

The server runs as production does (DEBUG off) but with tasks in-process, on a database
of its own (a new PostgreSQL database named after the test database, or a SQLite file),
with the demo loaded, a bundle installed, an upgrade proposed and a turn taken, so
there is something behind the ids. Schemathesis calls as the demo owner, with a fixed
seed and bounded examples and time, through its examples, coverage and fuzzing phases,
and every answer must be no server error, with a status code, content type and body
the schema documents. The slow run (--slow, as CI runs it) makes a light pass (8 examples
an operation, one pass of each phase); PIXIE_HEAVY=1 a heavy one (100 examples, fuzzing
repeated for 10 minutes).

A failure prints schemathesis's report (each case with a curl line to replay it) and
the server's error lines; the server's whole log is left in the test's tmp_path.
"""

import base64
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import xml.etree.ElementTree as ET  # noqa: S405 - our own tool's report, not input
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
import psycopg
import pytest

from benchmarks.load import free_port, process_group
from tests.live_api import api_call
from tests.services import service_missing

# The "stack" group starts a whole Pixie each: one at a time, on one worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack")]

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
MAX_EXAMPLES = 100 if HEAVY else 8
# The light pass runs each phase once (about 1,600 requests, two minutes on SQLite here),
# the same requests for the same seed; it is killed, and fails, past LIGHT_SECONDS. The
# heavy pass gets schemathesis's own time budget, which it spends repeating the fuzzing.
LIGHT_SECONDS = 600
HEAVY_BUDGET = 600
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
]

# Values from the demo that generated ids, slugs and bodies use most of the time, so
# operations reach real objects as well as missing ones.
CONFIG = """
[dictionaries.workspaces]
values = ["acme"]
[dictionaries.agents]
values = ["collections", "front-desk"]
[dictionaries.slugs]
values = ["accounts-receivable", "support-desk", "invoice-chase", "take-payment",
          "apply-credit-note", "ar-ground-rules"]
[dictionaries.versions]
values = ["2.1.0", "2.2.0", "1.0.0"]
[dictionaries.ids]
values = [1, 2, 3]
[dictionaries.credentials]
values = ["LEDGER_API_TOKEN"]
[dictionaries.files]
values = ["SKILL.md"]

[parameters]
"path.workspace" = { dictionary = "workspaces", probability = 0.9 }
"path.agent" = { dictionary = "agents", probability = 0.8 }
"path.skill" = { dictionary = "slugs", probability = 0.7 }
"path.slug" = { dictionary = "slugs", probability = 0.7 }
"path.version" = { dictionary = "versions", probability = 0.7 }
"path.id" = { dictionary = "ids", probability = 0.7 }
"path.name" = { dictionary = "credentials", probability = 0.7 }
"path.path" = { dictionary = "files", probability = 0.5 }
"body.skill" = { dictionary = "slugs", probability = 0.5 }
"body.bundle" = { dictionary = "slugs", probability = 0.5 }
"body.version" = { dictionary = "versions", probability = 0.5 }
"body.contact" = { dictionary = "ids", probability = 0.5 }
"""


def _postgres_url(test_database_url: str, name: str) -> str:
    parts = urlsplit(test_database_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture
def fuzz_database(tmp_path):
    """A database of the server's own: on PostgreSQL a new one named after the test
    database (dropped afterwards), else a SQLite file in the test's folder."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        yield f"sqlite:///{tmp_path / 'fuzz.sqlite3'}"
        return
    config = dj_database_url.parse(url)
    name = f"test_{config['NAME']}_fuzz_{uuid.uuid4().hex[:8]}"
    admin_url = _postgres_url(url, "postgres")
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError:
        service_missing(f"needs PostgreSQL at {url}")
    try:
        yield _postgres_url(url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class FuzzServer:
    def __init__(self, database_url: str, directory: Path):
        self.port = free_port()
        self.directory = directory
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = directory / "server.log"
        self.token = ""
        self.process: subprocess.Popen | None = None
        self.env = {
            **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
            "DATABASE_URL": database_url,
            "REDIS_URL": "",  # tasks run in-process: nothing is left queued for later tests
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback, no TLS proxy in front
            "PIXIE_DATA_DIR": str(directory),
            "PIXIE_PUBLIC_URL": self.url,
            "PIXIE_ALLOW_HTTP_INBOX": "1",
            "PIXIE_KEY_ENCRYPTION_KEY": base64.b64encode(secrets.token_bytes(32)).decode(),
        }

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def prepare(self) -> None:
        """Migrated, the demo loaded, and a token for the demo owner."""
        self.manage("migrate", "--noinput", "-v", "0")
        self.manage("demo")
        said = self.manage("drf_create_token", "owner")
        self.token = re.search(r"Generated token (\w+) for user owner", said).group(1)

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            try:
                with urllib.request.urlopen(self.url + "/livez", timeout=2):  # noqa: S310
                    return
            except OSError:
                time.sleep(0.2)
        pytest.fail("the server did not start:\n" + self.log.read_text()[-3000:])

    def stop(self) -> None:
        if self.process is not None and (
            self.process.poll() is None or process_group(self.process.pid)
        ):
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)

    def api(self, method: str, path: str, data: dict | None = None) -> tuple[int, dict]:
        return api_call(self.url, self.token, method, path, data, timeout=60)


@pytest.fixture
def fuzz_server(fuzz_database, tmp_path):
    server = FuzzServer(fuzz_database, tmp_path)
    server.prepare()
    try:
        server.start()
        yield server
    finally:
        server.stop()
    assert process_group(server.process.pid) == [], "the server left processes behind"


def _give_it_history(server: FuzzServer) -> None:
    """An installed bundle (skills, egress rules, a credential), a proposed upgrade
    and a turn: plan 1 applied, plan 2 proposed, turn 1 started."""
    acme = "/api/workspaces/acme"
    status, plan = server.api(
        "POST", f"{acme}/plans/",
        {"kind": "install", "bundle": "accounts-receivable", "version": "2.1.0",
         "agents": ["collections"]},
    )  # fmt: skip
    assert status == 201, plan
    status, approved = server.api("POST", f"{acme}/plans/{plan['id']}/approve/")
    assert status == 202 and approved["status"] == "applied", approved
    status, upgrade = server.api(
        "POST", f"{acme}/plans/",
        {"kind": "upgrade", "bundle": "accounts-receivable", "version": "2.2.0",
         "agents": ["collections"]},
    )  # fmt: skip
    assert status == 201, upgrade
    status, turn = server.api("POST", f"{acme}/agents/collections/turns/")
    assert status == 201, turn


def test_a_client_no_one_here_wrote_finds_no_server_error_and_no_schema_disagreement(
    fuzz_server, tmp_path, record_property
):
    _give_it_history(fuzz_server)
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    junit = tmp_path / "schemathesis-junit.xml"
    command = [
        str(SCHEMATHESIS), "--config-file", str(config), "run",
        f"{fuzz_server.url}/api/schema/",
        "--phases", "examples,coverage,fuzzing",
        "--checks", ",".join(CHECKS),
        "--seed", "1",
        "--max-examples", str(MAX_EXAMPLES),
        *(["--max-time", str(HEAVY_BUDGET)] if HEAVY else []),
        "--request-timeout", "30",
        "--workers", "1",
        "--header", f"Authorization: Token {fuzz_server.token}",
        # A fresh connection a request: Django's runserver (this harness, not production's
        # gunicorn) can read a kept-alive connection's next request from where the last
        # answer left the body unread, and answer it as HTTP/0.9 ("<!DOCTYPE HTML>" as a
        # status line); seen once in CI on a 404 that never read its body.
        "--header", "Connection: close",
        "--generation-database", "none",
        "--continue-on-failure",
        "--report", "junit", "--report-junit-path", str(junit),
        "--no-color",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True,
        timeout=HEAVY_BUDGET + 300 if HEAVY else LIGHT_SECONDS,
    )  # fmt: skip
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    operations = re.search(r"Tested: (\d+)", output)
    generated = re.search(r"(\d+) generated", output)
    assert operations and generated and junit.exists(), output[-5000:]
    suite = ET.parse(junit).getroot()  # noqa: S314 - see the import
    failed = [
        case.get("name")
        for case in suite.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]
    record_property(
        "figure",
        f"{operations.group(1)} operations, {generated.group(1)} test cases, "
        f"{len(failed)} failing operations in {seconds:.0f} s "
        f"(schemathesis, seed 1, up to {MAX_EXAMPLES} examples an operation)",
    )
    server_log = fuzz_server.log.read_text(errors="replace")
    assert done.returncode == 0 and not failed, (
        f"failing operations: {failed}\n{output[-20000:]}\n--- server log ---\n"
        + "\n".join(line for line in server_log.splitlines() if "ERROR" in line)[-5000:]
    )
    assert int(operations.group(1)) >= 40, output[-3000:]
