"""The delivery URLs a client reads, under one base URL per token:

    /deliver/<token>/                                   404, saying what the URL is for
    /deliver/<token>/.well-known/agent-skills/index.json   the discovery index (v0.2.0)
    /deliver/<token>/.well-known/skills/index.json         the same (the client's older path)
    /deliver/<token>/archives/<skill>/<sha256>.zip         one skill's archive

No session, no cookie, no header: the token in the path is the credential (taken out of
the request by secret_paths before anything logs it). A wrong or revoked token answers the
same 404 as a path that was never a delivery URL, and an address that keeps sending wrong
ones is refused for a while (django-ratelimit, in the "ratelimit" cache)."""

from __future__ import annotations

import hashlib
import re

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.http import parse_etags
from django.views.decorators.csrf import csrf_exempt
from django_ratelimit.core import get_usage

from pixie.core.web.addresses import client_address

from .clients import record_fetch, record_index_read
from .index import token_index
from .models import SkillArchive
from .tokens import token_for_secret

INDEX_PATHS = {".well-known/agent-skills/index.json", ".well-known/skills/index.json"}
ARCHIVE = re.compile(r"archives/([a-z0-9-]{1,64})/([0-9a-f]{64})\.zip")
# The archives' addresses as the index gives them, relative to the index's own URL.
ARCHIVE_PREFIX = "../../"
WRONG_TOKEN_GROUP = "delivery-wrong-token"  # noqa: S105 (a counter's name)

NOT_HERE = (
    "Nothing is delivered at this address. A Pixie delivery URL is added whole with "
    "`npx skills add <URL>`; if it worked before, its token may have been revoked: ask an "
    "owner of the workspace for the new one.\n"
)
BASE = (
    "This is a Pixie delivery URL: give it whole to the skills client "
    "(`DISABLE_TELEMETRY=1 npx skills add <this URL>`). Its index is at "
    ".well-known/agent-skills/index.json below it.\n"
)


def _text(status: int, text: str) -> HttpResponse:
    return _private(HttpResponse(text, status=status, content_type="text/plain; charset=utf-8"))


def _private(response: HttpResponse, cache: str = "no-cache") -> HttpResponse:
    response["Cache-Control"] = f"private, {cache}"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex"
    return response


def _wrong_tokens(request, *, increment: bool) -> int:
    """Seconds this address is to wait, having sent too many wrong tokens lately (0: it
    need not; counting this request when ``increment``). A cache that is down lets
    requests through: a valid token is checked in the database either way."""
    rate = settings.PIXIE_DELIVERY_WRONG_TOKEN_RATE
    if not rate:
        return 0
    address = client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
    try:
        usage = get_usage(
            request,
            group=WRONG_TOKEN_GROUP,
            key=lambda _group, _request: address,
            rate=rate,
            increment=increment,
        )
    except Exception:  # noqa: BLE001 (the cache is down: the database still decides)
        return 0
    if not usage:
        return 0
    # django-ratelimit's should_limit (count > limit) is for a count that includes the
    # request being checked; checked before counting (increment=False), as deliver()
    # does, it would let one wrong token more than the rate through. Limited once
    # ``limit`` wrong tokens are counted, as pixie.login_throttle does.
    over = usage["should_limit"] if increment else usage["count"] >= usage["limit"]
    # The counter's window says when the address may try again.
    return max(1, int(usage["time_left"])) if over else 0


# Exempt from CSRF: the token in the path is the only credential (no session, no cookie),
# so there is nothing for a cross-site request to borrow; CsrfViewMiddleware would
# otherwise answer a POST 403 with its HTML page before this view gives the 405 below.
@csrf_exempt
def deliver(request, rest: str = ""):
    if request.method not in ("GET", "HEAD"):
        response = _text(405, "Delivery URLs are read with GET.\n")
        response["Allow"] = "GET, HEAD"
        return response
    if wait := _wrong_tokens(request, increment=False):
        response = _text(429, "Too many requests with unknown delivery URLs from here.\n")
        response["Retry-After"] = str(wait)
        return response
    token = token_for_secret(getattr(request, "delivery_secret", ""))
    if token is None:
        _wrong_tokens(request, increment=True)
        return _text(404, NOT_HERE)
    rest = rest.lstrip("/")
    if rest == "":
        return _text(404, BASE)
    if rest in INDEX_PATHS:
        return _index(request, token)
    match = ARCHIVE.fullmatch(rest)
    if match is not None:
        return _archive(request, token, slug=match[1], digest=match[2])
    return _text(404, "No such file under this delivery URL.\n")


def _index(request, token):
    index = token_index(token)
    body = index.body(ARCHIVE_PREFIX)
    etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
    record_index_read(token, request)
    if etag in parse_etags(request.headers.get("If-None-Match", "")):
        return _private(_not_modified(etag))
    response = HttpResponse(body, content_type="application/json")
    response["ETag"] = etag
    return _private(response)


def _archive(request, token, *, slug: str, digest: str):
    entry = token_index(token).find(slug, digest)
    if entry is None:
        return _text(
            404,
            "This archive is not what this delivery URL serves now; "
            "`npx skills update` fetches the current one.\n",
        )
    etag = f'"{digest}"'
    record_fetch(token, request, entry)
    if etag in parse_etags(request.headers.get("If-None-Match", "")):
        return _private(_not_modified(etag), "max-age=86400, immutable")
    content = (
        SkillArchive.objects.filter(content_key=entry.content.content_key)
        .values_list("content", flat=True)
        .first()
    )
    response = HttpResponse(bytes(content), content_type="application/zip")
    response["ETag"] = etag
    response["Content-Disposition"] = f'attachment; filename="{slug}.zip"'
    return _private(response, "max-age=86400, immutable")


def _not_modified(etag: str) -> HttpResponse:
    response = HttpResponseNotModified()
    response["ETag"] = etag
    return response
