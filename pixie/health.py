"""Probes for load balancers and the production script; no login.

GET /healthz: can this process reach its database and its broker? JSON, 200
when both answer and 503 otherwise. It names what failed, never how (a
driver's error can carry a host or a password).

GET /livez: is this process alive and serving? Plain text, always 200, and it
touches neither the database nor the broker, so a slow database does not get
healthy web workers restarted. It also serves the benchmarks as the cheapest
request the stack can answer (benchmarks/load.py --ratio).
"""

import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

log = logging.getLogger(__name__)


def database_reachable() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        log.exception("health check: database unreachable")
        return False


def broker_state() -> str:
    """'ok', 'unreachable', or 'in-process' when no broker is configured."""
    if not settings.REDIS_URL:
        return "in-process"
    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2
        )
        with client:
            client.ping()
        return "ok"
    except redis.RedisError:
        log.exception("health check: broker unreachable")
        return "unreachable"


@never_cache
@require_GET
def healthz(request):
    database = "ok" if database_reachable() else "unreachable"
    broker = broker_state()
    healthy = database == "ok" and broker != "unreachable"
    return JsonResponse(
        {"status": "ok" if healthy else "unhealthy", "database": database, "broker": broker},
        status=200 if healthy else 503,
    )


@never_cache
@require_GET
def livez(request):
    return HttpResponse("ok\n", content_type="text/plain")
