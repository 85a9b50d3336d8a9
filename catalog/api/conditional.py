"""Conditional GETs for the catalog API: an ETag, and 304 for a client that already
holds it (Django's ``condition`` decorator), decided before anything is read but the
reader's facts.

An answer is made of the catalog's rows and of what the reader may see of them. The
catalog's stamp (catalog.models.stamp) changes in the same transaction as any of those
rows, memberships and roles included, and the reader's facts (catalog.selectors.
CatalogViewer) say what they may see: both come in one query, and the ETag is over
them, the address and the media type. Equal ETags are equal bytes, whoever asks, so a
fresh request for one is answered from what was rendered for it. Cache-Control: private
keeps shared caches from storing it, and no-cache makes every client ask again, so a
yank or a review is seen on the next request, never hidden behind a stored copy.
"""

from __future__ import annotations

import hashlib
import json
import secrets

from django.core.cache import caches
from django.http import HttpResponse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition
from rest_framework.response import Response

# Larger bodies are rendered each time rather than held in every web process's memory.
RENDERED_MAX_BYTES = 256 << 10


def etag_of(*parts) -> str:
    """A strong ETag's value over JSON-able parts (what the response says, or stands for);
    ``condition`` quotes it."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def _plain(value) -> str:
    # The same in every process: bytes by their digest (a memoryview's str is an address).
    if isinstance(value, bytes | bytearray | memoryview):
        return hashlib.sha256(bytes(value)).hexdigest()
    return str(value)


def catalog_etag(request, shape: dict, viewer) -> str:
    """The ETag of a catalog answer: over the answer's shape, the catalog's stamp and the
    reader's facts as read together (catalog_viewer(..., stamped=True)), the address,
    which makes the links, and the media type. Without a stamp to read, an ETag no
    request will name again: nothing is answered 304 or served as rendered."""
    if not viewer.stamp:
        return secrets.token_hex(20)
    facts = [viewer.sees_everything, viewer.in_a_workspace, viewer.publisher_ids]
    return etag_of(shape, viewer.stamp, facts, request.build_absolute_uri(),
                   request.accepted_media_type)  # fmt: skip


def conditional_get(etag_func):
    """For a view's ``get``: 304 when If-None-Match names the ETag ``etag_func(request,
    **kwargs)`` gives, and every answer marked private and to be checked again."""

    def decorate(get):
        get = method_decorator(condition(etag_func=etag_func))(get)
        return method_decorator(cache_control(private=True, no_cache=True))(get)

    return decorate


def rendered_once(view, request, etag: str, data_of, *, keep: bool = True):
    """The response for an ETag that stands for everything the response says: rendered to
    JSON once a process and kept, so a fresh request for it costs what a 304 costs plus
    sending the bytes. ``data_of`` reads and checks what the reader may see (an Http404
    from it is answered, not kept); what it made for these facts at this stamp is the
    same for everyone with them."""
    renderer, media_type = request.accepted_renderer, request.accepted_media_type
    if renderer.format != "json":  # the browsable API: rendered as usual
        return Response(data_of())
    key = f"catalog:rendered:{etag}:{media_type}"
    body = caches["rendered"].get(key)
    if body is None:
        body = renderer.render(data_of(), media_type, view.get_renderer_context())
        # keep: False for an ETag no request will name again (no stamp to read).
        if keep and len(body) <= RENDERED_MAX_BYTES:
            caches["rendered"].set(key, body, timeout=None)
    return HttpResponse(body, content_type=renderer.media_type)
