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
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, HttpResponse, HttpResponseNotModified
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.debug import sensitive_variables
from django_ratelimit.core import get_usage

from pixie.core.people.members import site_url_for
from pixie.core.web.addresses import client_address

from .clients import record_fetch, record_index_read, record_plugin_fetch
from .index import token_index
from .marketplace import workspace_marketplace
from .memo import Memo
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


# Addresses that used up their wrong tokens, each until its window ends (time.monotonic):
# refused here before any query. The count itself is django-ratelimit's, shared by every
# process (Redis when there is one); a request with a valid token costs it nothing.
LIMITED = Memo(entries=10_000)


def _waiting(address: str) -> int:
    """Seconds ``address`` is still to wait (0: none), as this process knows it."""
    until = LIMITED.get(address)
    return max(1, int(until - time.monotonic()) + 1) if until else 0


def _count_wrong(request, address: str) -> int:
    """Count a wrong token from ``address``; the seconds it is now to wait (0: none).

    Limited once the rate's count of wrong tokens is reached, this one included (the
    answer to this one stays a 404). Another process learns of it at that address's next
    wrong token; in the meantime it may serve a valid one, which tells a guesser nothing
    a 256-bit token lets them use. A cache that is down counts nothing: the database still
    decides every token."""
    rate = settings.PIXIE_DELIVERY_WRONG_TOKEN_RATE
    if not rate:
        return 0
    try:
        usage = get_usage(
            request,
            group=WRONG_TOKEN_GROUP,
            key=lambda _group, _request: address,
            rate=rate,
            increment=True,
        )
    except Exception:  # noqa: BLE001 (the cache is down)
        return 0
    if not usage or usage["count"] < usage["limit"]:
        return 0
    wait = max(1, int(usage["time_left"]))
    LIMITED.put(address, time.monotonic() + wait)
    return wait


def _too_many(wait: int) -> HttpResponse:
    response = _text(429, "Too many requests with unknown delivery URLs from here.\n")
    response["Retry-After"] = str(wait)
    return response


# Exempt from CSRF: the token in the path is the only credential (no session, no cookie),
# so there is nothing for a cross-site request to borrow; CsrfViewMiddleware would
# otherwise answer a POST 403 with its HTML page before this view gives the 405 below.
@csrf_exempt
@sensitive_variables()  # the token, in the path form's URLs: none in an error report
def deliver(request, rest: str = ""):
    if request.method not in ("GET", "HEAD"):
        response = _text(405, "Delivery URLs are read with GET.\n")
        response["Allow"] = "GET, HEAD"
        return response
    token = _token(request, getattr(request, "delivery_secret", ""))
    if isinstance(token, HttpResponse):
        return token
    rest = rest.lstrip("/")
    if rest == "":
        return _text(404, BASE)
    if rest in INDEX_PATHS:
        return _index(request, token)
    match = ARCHIVE.fullmatch(rest)
    if match is not None:
        return _archive(request, token, slug=match[1], digest=match[2])
    if rest.startswith(CLAUDE):
        secret = request.delivery_secret
        return _claude(request, token, rest, f"{site_url_for(request)}/deliver/{secret}/")
    return _text(404, "No such file under this delivery URL.\n")


@csrf_exempt
@sensitive_variables()  # the token, in the path form's URLs: none in an error report
def claude_marketplace(request, rest: str = ""):
    """The workspace's Claude Code marketplace read with its token as a header,
    ``Authorization: Bearer pxd_…``, as Claude Code sends the managed settings' headers
    (to the marketplace and to archives of the same origin)."""
    if request.method not in ("GET", "HEAD"):
        response = _text(405, "Delivery URLs are read with GET.\n")
        response["Allow"] = "GET, HEAD"
        return response
    token = _token(request, getattr(request, "delivery_secret", ""))
    if isinstance(token, HttpResponse):
        return token
    return _claude(request, token, CLAUDE + rest, f"{site_url_for(request)}/")


@sensitive_variables()  # the token, in the path form's URLs: none in an error report
def _token(request, secret: str):
    """The live token with ``secret``, or the answer to give: 429 to an address past its
    wrong tokens, 404 to a wrong or revoked token (the same as to no delivery URL)."""
    address = client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
    if wait := _waiting(address):
        return _too_many(wait)
    token = token_for_secret(secret)
    if token is None:
        _count_wrong(request, address)
        return _text(404, NOT_HERE)
    return token


@dataclass(frozen=True)
class Served:
    """A token's index as served: its body, its ETag, and its entries by archive."""

    body: bytes
    etag: str
    archives: dict  # (slug, digest) -> Entry


# Each web process keeps the indexes it served (memo.py), by their token and the state of
# the rows they came from.
INDEXES = Memo(entries=256)


def served(token) -> Served:
    key = (token.key_hash, hashlib.sha256((token.state or "").encode()).hexdigest())
    found = INDEXES.get(key)
    if found is None:
        index = token_index(token)
        body = index.body(ARCHIVE_PREFIX)
        found = Served(
            body=body,
            etag=f'"{hashlib.sha256(body).hexdigest()[:32]}"',
            archives={(entry.slug, entry.digest): entry for entry in index.served},
        )
        INDEXES.put(key, found)
    return found


def _index(request, token):
    index = served(token)
    record_index_read(token, request)
    if client_has(request.headers.get("If-None-Match", ""), index.etag):
        return _private(_not_modified(index.etag))
    response = HttpResponse(index.body, content_type="application/json")
    response["ETag"] = index.etag
    return _private(response)


def _archive(request, token, *, slug: str, digest: str):
    entry = served(token).archives.get((slug, digest))
    if entry is None:
        return _text(
            404,
            "This archive is not what this delivery URL serves now; "
            "`npx skills update` fetches the current one.\n",
        )
    etag = f'"{digest}"'
    record_fetch(token, request, entry)
    if client_has(request.headers.get("If-None-Match", ""), etag):
        return _private(_not_modified(etag), "max-age=86400, immutable")
    response = FileResponse(
        stored_file(entry.content.content_key, entry.digest).open("rb"),
        content_type="application/zip",
        as_attachment=True,
        filename=f"{slug}.zip",
    )
    response["ETag"] = etag
    return _private(response, "max-age=86400, immutable")


def stored_file(content_key: str, digest: str) -> Path:
    """An archive (a skill's or a plugin's) as a file under DATA_DIR/delivery/, named by
    its digest: written once from the database, then served as a file (gunicorn hands it
    to the kernel's sendfile, with no copy through Python). Written beside its name, then
    renamed: a reader never sees half of one."""
    folder = Path(settings.DATA_DIR) / "delivery"
    path = folder / f"{digest}.zip"
    if not path.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        content = (
            SkillArchive.objects.filter(content_key=content_key)
            .values_list("content", flat=True)
            .get()
        )
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as part:
            part.write(content)
        os.replace(part.name, path)
    return path


ENTITY_TAG = re.compile(r'(?:W/)?"[^"]*"')


def client_has(header: str, etag: str) -> bool:
    """Whether an If-None-Match header says the client holds what ``etag`` names (RFC
    9110, 13.1.2): ``*``, or a listed entity tag equal to it under the weak comparison
    that field calls for (``W/"x"`` matches ``"x"``: a proxy that compresses a response
    weakens its tag, and its clients still revalidate with it). A member that is not an
    entity tag is left out."""
    if header.strip() == "*":
        return True
    opaque = etag.removeprefix("W/")
    members = (member.strip() for member in header.split(","))
    return any(
        ENTITY_TAG.fullmatch(member) and member.removeprefix("W/") == opaque for member in members
    )


def _not_modified(etag: str) -> HttpResponse:
    response = HttpResponseNotModified()
    response["ETag"] = etag
    return response


# --- Claude Code's marketplace (marketplace.py) -----------------------------------------

CLAUDE = "claude/"
PLUGIN = re.compile(r"claude/plugins/([a-z0-9-]{1,64})/([0-9a-f]{64})\.zip")
ONLY_WORKSPACE_TOKENS = (
    "A Claude Code marketplace is a workspace's: it is read with a delivery token made for "
    "the whole workspace, not for one agent.\n"
)


@dataclass(frozen=True)
class ServedMarketplace:
    body: bytes
    etag: str
    plugins: dict  # (name, digest) -> Plugin


MARKETPLACES = Memo(entries=64)


@sensitive_variables()  # the token, in the path form's URLs: none in an error report
def served_marketplace(token, base: str) -> ServedMarketplace:
    """``base``: where the archives' URLs start (absolute: Claude Code needs https)."""
    key = (
        "claude", token.key_hash, base,
        hashlib.sha256((token.state or "").encode()).hexdigest(),
    )  # fmt: skip
    found = MARKETPLACES.get(key)
    if found is None:
        marketplace = workspace_marketplace(token.workspace_id)
        document = marketplace.document(lambda plugin: base + plugin.archive_path)
        body = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()
        found = ServedMarketplace(
            body=body,
            etag=f'"{hashlib.sha256(body).hexdigest()[:32]}"',
            plugins={(plugin.name, plugin.digest): plugin for plugin in marketplace.plugins},
        )
        MARKETPLACES.put(key, found)
    return found


@sensitive_variables()  # the token, in the path form's URLs: none in an error report
def _claude(request, token, rest: str, base: str):
    if token.agent_id is not None:
        return _text(404, ONLY_WORKSPACE_TOKENS)
    if rest == CLAUDE + "marketplace.json":
        marketplace = served_marketplace(token, base)
        record_index_read(token, request)
        if client_has(request.headers.get("If-None-Match", ""), marketplace.etag):
            return _private(_not_modified(marketplace.etag))
        response = HttpResponse(marketplace.body, content_type="application/json")
        response["ETag"] = marketplace.etag
        return _private(response)
    match = PLUGIN.fullmatch(rest)
    if match is None:
        return _text(404, "No such file in this marketplace.\n")
    plugin = served_marketplace(token, base).plugins.get((match[1], match[2]))
    if plugin is None:
        return _text(404, "This plugin archive is not what this marketplace serves now.\n")
    record_plugin_fetch(token, request, plugin)
    etag = f'"{plugin.digest}"'
    if client_has(request.headers.get("If-None-Match", ""), etag):
        return _private(_not_modified(etag), "max-age=86400, immutable")
    response = FileResponse(
        stored_file(plugin.content_key, plugin.digest).open("rb"),
        content_type="application/zip",
        as_attachment=True,
        filename=f"{plugin.name}.zip",
    )
    response["ETag"] = etag
    return _private(response, "max-age=86400, immutable")
