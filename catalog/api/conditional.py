"""Conditional GETs for the catalog API: an ETag over what a response says, and 304 for a
client that already holds it, decided before the expensive part is serialised.

What a response says differs by user only in whether it is shown at all (the selectors
decide that first), so the ETag is over the response's content; Cache-Control: private
keeps shared caches from storing it, and no-cache makes every client ask again, so a
yank or a review is seen on the next request, never hidden behind a stored copy.
"""

from __future__ import annotations

import hashlib
import json

from django.core.cache import caches
from django.http import HttpResponse
from django.utils.cache import get_conditional_response, quote_etag
from rest_framework.response import Response

CACHE_CONTROL = "private, no-cache"
# Larger bodies are rendered each time rather than held in every web process's memory.
RENDERED_MAX_BYTES = 256 << 10


def etag_of(*parts) -> str:
    """A strong ETag over JSON-able parts (what the response says, or stands for)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=_plain)
    return quote_etag(hashlib.sha256(text.encode("utf-8")).hexdigest()[:40])


def _plain(value) -> str:
    # The same in every process: bytes by their digest (a memoryview's str is an address).
    if isinstance(value, bytes | bytearray | memoryview):
        return hashlib.sha256(bytes(value)).hexdigest()
    return str(value)


def not_modified(request, etag: str):
    """A 304 when the client's If-None-Match names this ETag, else None."""
    response = get_conditional_response(request, etag=etag)
    return with_validators(response, etag) if response is not None else None


def with_validators(response, etag: str):
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL
    return response


def rendered_once(view, request, etag: str, data_of):
    """The response for an ETag that stands for everything the response says (a published
    version's): rendered to JSON once a process and kept, so a fresh request for it costs
    what a 304 costs plus sending the bytes. Only the visibility check, made before, says
    whether this user may have it; the bytes are the same for everyone who may."""
    renderer, media_type = request.accepted_renderer, request.accepted_media_type
    if renderer.format != "json":  # the browsable API: rendered as usual
        return with_validators(Response(data_of()), etag)
    if (answer := rendered_before(request, etag)) is not None:
        return answer
    body = renderer.render(data_of(), media_type, view.get_renderer_context())
    if len(body) <= RENDERED_MAX_BYTES:
        caches["rendered"].set(_rendered_key(etag, media_type), body, timeout=None)
    return with_validators(HttpResponse(body, content_type=renderer.media_type), etag)


def answered_by_etag(request, etag: str):
    """A 304, or the answer rendered before for this ETag: None if the view must read."""
    return not_modified(request, etag) or rendered_before(request, etag)


def rendered_before(request, etag: str):
    """The answer rendered_once kept for this ETag, in the media type asked for, or None."""
    renderer, media_type = request.accepted_renderer, request.accepted_media_type
    if renderer.format != "json":
        return None
    body = caches["rendered"].get(_rendered_key(etag, media_type))
    if body is None:
        return None
    return with_validators(HttpResponse(body, content_type=renderer.media_type), etag)


def _rendered_key(etag: str, media_type: str) -> str:
    return f"catalog:rendered:{etag}:{media_type}"
