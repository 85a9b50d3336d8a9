"""Request bodies past a ceiling are refused from their Content-Length, before a byte is
read: Django writes a multipart body's files to a temporary file as it parses them (the
CSRF check parses every POST), so an unauthenticated POST of a gigabyte filled the disk
before any view could refuse it. The ceiling is PIXIE_REQUEST_MAX_BYTES (a supporting
file's limit, and a little for the form around it), and the bundle upload page's own,
larger one there (that page checks the person first, then the size, then reads).

A body whose length is not declared is read as empty by Django (it reads up to the
declared length only), so nothing is read past the ceiling either way.
"""

from django.conf import settings
from django.http import HttpResponse, JsonResponse

from pixie.core.errors import ErrorCode

UPLOAD_PATH = "/admin/catalog/bundleversion/upload/"
TOO_LARGE = "The request body is {length:,} bytes; the limit here is {limit:,} bytes."


def body_limit(path: str) -> int:
    if path == UPLOAD_PATH:
        return settings.PIXIE_BUNDLE_MAX_BYTES + settings.PIXIE_REQUEST_MAX_BYTES
    return settings.PIXIE_REQUEST_MAX_BYTES


class RequestBodyLimit:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH") or "0"
        length = int(declared) if declared.isascii() and declared.isdigit() else 0
        limit = body_limit(request.path_info)
        if length > limit:
            message = TOO_LARGE.format(length=length, limit=limit)
            if request.path_info.startswith("/api/"):
                response = JsonResponse(
                    {"code": ErrorCode.TOO_LARGE, "detail": message, "problems": [message]},
                    status=413,
                )
            else:
                response = HttpResponse(message, status=413, content_type="text/plain")
            response["Connection"] = "close"  # the body is not read: the connection ends
            return response
        return self.get_response(request)
