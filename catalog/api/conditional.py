"""Conditional GETs for the catalog API: an ETag over what a response says, and 304 for a
client that already holds it (Django's ``condition`` decorator), decided before the
expensive part is serialised.

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


def row_values(instance) -> list:
    """Every stored value of a model instance, for an ETag over the rows a response shows."""
    return [getattr(instance, field.attname) for field in instance._meta.concrete_fields]


def conditional_get(etag_func):
    """For a view's ``get``: 304 when If-None-Match names the ETag ``etag_func(request,
    **kwargs)`` gives, and every answer marked private and to be checked again."""

    def decorate(get):
        get = method_decorator(condition(etag_func=etag_func))(get)
        return method_decorator(cache_control(private=True, no_cache=True))(get)

    return decorate


def rendered_once(view, request, etag: str, data_of):
    """The response for an ETag that stands for everything the response says: rendered to
    JSON once a process and kept, so a fresh request for it costs what a 304 costs plus
    sending the bytes. Only the visibility check, made before, says whether this user
    may have it; the bytes are the same for everyone who may."""
    renderer, media_type = request.accepted_renderer, request.accepted_media_type
    if renderer.format != "json":  # the browsable API: rendered as usual
        return Response(data_of())
    key = f"catalog:rendered:{etag}:{media_type}"
    body = caches["rendered"].get(key)
    if body is None:
        body = renderer.render(data_of(), media_type, view.get_renderer_context())
        if len(body) <= RENDERED_MAX_BYTES:
            caches["rendered"].set(key, body, timeout=None)
    return HttpResponse(body, content_type=renderer.media_type)
