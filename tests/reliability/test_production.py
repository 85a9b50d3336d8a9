"""scripts/prod runs the production stack: healthy, static files served by
WhiteNoise, JSON logs with request ids, and nothing left running after SIGTERM."""

import base64
import http.client
import io
import json
import logging
import os
import re
import secrets
import signal
import subprocess
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from benchmarks.load import free_port, process_group
from pixie.celery import app as celery_app
from pixie.core.logs import ContextFilter, JsonFormatter, request_id_from
from tests.services import service_missing

ROOT = Path(__file__).resolve().parents[2]
SERVER = "postgres://postgres@127.0.0.1:5432"


def _get(port, path, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        # As the TLS proxy in front of scripts/prod says it.
        connection.request("GET", path, headers={"X-Forwarded-Proto": "https", **(headers or {})})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


@pytest.fixture
def fresh_database():
    name = f"prod_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True, connect_timeout=3) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError:
        service_missing(f"needs PostgreSQL at {SERVER}")
    yield f"{SERVER}/{name}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def production(fresh_database, redis_url, tmp_path):
    port = free_port()
    log_path = tmp_path / "prod.log"
    env = {
        # Not the test process's async-unsafe allowance (set for the browser tests).
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "BEHIND_TLS_PROXY": "1",
        "DATABASE_URL": fresh_database,
        "REDIS_URL": redis_url,
        "PIXIE_KEY_ENCRYPTION_KEY": base64.b64encode(secrets.token_bytes(32)).decode(),
        "PORT": str(port),
        "WEB_CONCURRENCY": "2",
        "CELERY_CONCURRENCY": "1",
        # A queue of its own, so this worker takes no other test's tasks.
        "CELERY_TASK_DEFAULT_QUEUE": f"pixie-prod-{uuid.uuid4().hex[:8]}",
        "PIXIE_DATA_DIR": str(tmp_path),
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            ["scripts/prod"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        yield process, port, log_path
    finally:
        if process.poll() is None or process_group(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


# scripts/prod migrates a fresh database and collects static files before gunicorn
# starts: on 2 cores beside another worker's fuzzer or load run that took over 60 s
# (CI, 2026-12-06), as benchmarks/load.py allows 120. A start-up is not what this times.
def _wait_until_healthy(process, port, log_path, deadline=180):
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        assert process.poll() is None, log_path.read_text()[-3000:]
        try:
            status, _, body = _get(port, "/healthz")
            if status == 200:
                return json.loads(body)
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"no healthy /healthz in {deadline} s:\n{log_path.read_text()[-3000:]}")


def _json_lines(log_path):
    for line in log_path.read_text().splitlines():
        if line.startswith("{"):
            yield json.loads(line)


# Each of the "stack" group starts a whole Pixie of its own: one at a time, on one worker.
@pytest.mark.slow
@pytest.mark.xdist_group("stack")
def test_the_production_stack_serves_logs_and_stops_cleanly(production):
    process, port, log_path = production
    health = _wait_until_healthy(process, port, log_path)
    assert health == {"status": "ok", "database": "ok", "broker": "ok"}

    status, headers, body = _get(port, "/admin/login/", {"X-Request-ID": "probe-42"})
    assert status == 200 and b"csrfmiddlewaretoken" in body
    assert headers["X-Request-ID"] == "probe-42"
    stylesheet = re.search(rb'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', body)
    assert stylesheet, "DEBUG=0 links the content-hashed copies made by collectstatic"
    status, headers, css = _get(port, stylesheet.group(1).decode(), {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Type"].startswith("text/css")
    assert "immutable" in headers["Cache-Control"] and headers["Content-Encoding"] == "gzip"

    status, headers, _ = _get(port, "/healthz", {"X-Request-ID": "bad id with spaces"})
    assert status == 200 and re.fullmatch(r"[0-9a-f]{32}", headers["X-Request-ID"])

    time.sleep(0.5)  # let the worker flush its line
    requests = [line for line in _json_lines(log_path) if line["logger"] == "pixie.request"]
    login = next(line for line in requests if line["path"] == "/admin/login/")
    assert login["request_id"] == "probe-42" and login["status"] == 200
    assert not any(line["logger"] == "gunicorn.access" for line in _json_lines(log_path))

    group = process_group(process.pid)
    assert len(group) >= 4, "the script, gunicorn's master and workers, and Celery"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    # Gunicorn's workers and Celery's pool finish their work first: on a machine also
    # running another test suite that took more than 10 s once (CI, 2 cores).
    deadline = time.monotonic() + 30
    while process_group(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {pid: _command_line(pid) for pid in process_group(process.pid)}
    assert left == {}, f"still running 30 s after scripts/prod exited: {left}"


@pytest.mark.parametrize("incoming", ["", "has spaces", "x" * 65, "line\n", 'a"quote'])
def test_an_unsafe_incoming_request_id_is_replaced(incoming):
    assert re.fullmatch(r"[0-9a-f]{32}", request_id_from(incoming))


def test_a_safe_incoming_request_id_is_kept():
    assert request_id_from("lb-7f3a.2:1") == "lb-7f3a.2:1"


@celery_app.task(name="tests.reliability.log_something")
def log_something():
    logging.getLogger("pixie.test").info("inside a task")


def test_a_task_logs_as_json_with_its_task_id():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("pixie.test")
    # Other tests' workers reconfigure logging; this logger speaks regardless.
    previous = logger.level, logger.disabled
    logger.setLevel(logging.INFO)
    logger.disabled = False
    logger.addHandler(handler)
    try:
        log_something.apply(task_id="task-123")
        logger.info("after the task")
    finally:
        logger.removeHandler(handler)
        logger.level, logger.disabled = previous
    inside, after = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["message"] == "inside a task" and inside["task_id"] == "task-123"
    assert "task_id" not in after


@pytest.mark.django_db
def test_health_answers_503_without_a_broker_and_names_no_address(client, settings):
    settings.REDIS_URL = "redis://:hunter2@127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unhealthy", "database": "ok", "broker": "unreachable"}
    assert b"hunter2" not in response.content and b"127.0.0.1" not in response.content


@pytest.mark.django_db
def test_health_needs_no_login_and_answers_with_a_request_id(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="probe-1")
    assert response.status_code == 200 and response["X-Request-ID"] == "probe-1"
    assert response.json()["database"] == "ok"


def test_liveness_answers_plain_text_without_touching_the_database(client):
    # No django_db mark: any query would raise.
    response = client.get("/livez", HTTP_X_REQUEST_ID="probe-2")
    assert response.status_code == 200 and response.content == b"ok\n"
    assert response["Content-Type"].startswith("text/plain")
    assert response["X-Request-ID"] == "probe-2" and "no-cache" in response["Cache-Control"]
    assert client.post("/livez").status_code == 405


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "(gone)"
