"""Structured logs: one JSON object a line, with the request or task they belong to.

LOG_FORMAT=json selects JsonFormatter (production); the default plain format
suits a developer's terminal. Either way every record carries request_id and
task_id (empty outside a request or a task), set by RequestIdMiddleware and by
the Celery signals below.
"""

import json
import logging
import re
import time
import uuid
from contextvars import ContextVar

from celery.signals import task_postrun, task_prerun

request_id_var: ContextVar[str] = ContextVar("request_id", default="")
task_id_var: ContextVar[str] = ContextVar("task_id", default="")
request_path_var: ContextVar[str] = ContextVar("request_path", default="")

# An incoming X-Request-ID is kept only if it cannot forge or break a log line.
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
request_log = logging.getLogger("pixie.request")

# Attributes every LogRecord has; anything else was passed with extra=.
_STANDARD_ATTRIBUTES = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class ContextFilter(logging.Filter):
    """Stamp each record with the current request and task ids."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        record.task_id = task_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    converter = time.gmtime

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRIBUTES and not key.startswith("_") and value != "":
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def request_id_from(header: str | None) -> str:
    if header and SAFE_REQUEST_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex


# One-time secrets that travel in a path: an invitation's link and a password link's
# token. The log keeps where the request went, never the secret.
_SECRET_IN_PATH = re.compile(r"^(/accounts/(?:invitation|set-password/[^/]+))/[^/]+/")


def loggable_path(path: str) -> str:
    return _SECRET_IN_PATH.sub(r"\1/…/", path)


class RequestIdMiddleware:
    """Give every request an id, log one line for it, and answer it in X-Request-ID."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = request_id_from(request.headers.get("X-Request-ID"))
        token = request_id_var.set(request_id)
        path_token = request_path_var.set(request.path)
        started = time.monotonic()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            request_log.info(
                "%s %s %s",
                request.method,
                loggable_path(request.path),
                response.status_code,
                extra={
                    "method": request.method,
                    "path": loggable_path(request.path),
                    "status": response.status_code,
                    "duration_ms": round((time.monotonic() - started) * 1000, 1),
                },
            )
            return response
        finally:
            request_id_var.reset(token)
            request_path_var.reset(path_token)


@task_prerun.connect
def _task_started(task_id=None, **_):
    task_id_var.set(task_id or "")


@task_postrun.connect
def _task_finished(**_):
    task_id_var.set("")
