"""Helpers for tests that run real Celery workers against Redis and PostgreSQL."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from benchmarks.load import process_group

ROOT = Path(__file__).resolve().parents[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def database_url() -> str:
    """The test database, for a worker started as a separate process."""
    settings = connection.settings_dict
    host = settings["HOST"] or "127.0.0.1"
    port = settings["PORT"] or 5432
    password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
    return f"postgres://{settings['USER']}{password}@{host}:{port}/{settings['NAME']}"


def start_worker_process(redis_url, queue, log_path=None, *, args=(), **extra_env):
    """A `celery worker` subprocess on this test's queue; kill it with SIGKILL to crash it.
    Its log goes to log_path (shown when a test fails) or nowhere."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "CELERY_UNACKED_RESTORE_THROTTLE": "1",
        **extra_env,
    }
    command = [
        sys.executable, "-m", "celery", "-A", "pixie", "worker", "-P", "solo", "-Q", queue,
        "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info", *args,
    ]  # fmt: skip
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    # A session of its own, so stop() also ends what it forked (beat runs as a child).
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(*processes):
    for process in processes:
        if process is None:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the worker and its children
        process.wait(timeout=30)
        # A child the kernel has not finished tearing down (a busy machine) still shows in
        # the group for a moment: wait it out, killing the group again, for at most 10 s.
        deadline = time.monotonic() + 10
        while process_group(process.pid) and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            time.sleep(0.05)
