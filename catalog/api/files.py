"""Serving a skill's file: never rendered by the browser as a page of ours.

Every answer says nosniff and a sandbox policy; plain text and raster images are shown
inline (text as text/plain in UTF-8), anything else is a download.
"""

from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse

from catalog.skill_content import is_text

RASTER_IMAGES = {
    "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/avif",
    "image/x-icon", "image/vnd.microsoft.icon",
}  # fmt: skip
# Text the browser would run or render as a document: downloaded, never shown inline.
ACTIVE = {
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/javascript",
    "application/javascript", "application/ecmascript", "text/xml", "application/xml",
    "text/css", "application/pdf",
}  # fmt: skip
TEXT_LIKE = {"application/json", "application/yaml", "application/toml", "application/x-sh"}


_AS_STORED = OpenApiResponse(
    OpenApiTypes.BINARY,
    description=(
        "The file's bytes as stored. Text is shown inline as text/plain in UTF-8 and raster "
        "images inline as themselves; anything else is a download (Content-Disposition: "
        "attachment) as its own media type, or application/octet-stream for what a browser "
        "would run or render. X-Pixie-Media-Type names the stored media type."
    ),
)
# What file_response answers, for the schema of each view that uses it.
FILE_RESPONSES = {
    (200, media_type): _AS_STORED
    for media_type in ("text/plain", "image/*", "application/octet-stream", "*/*")
}


def file_response(path: str, data: bytes, media_type: str, *, etag: str = "") -> HttpResponse:
    name = path.rsplit("/", 1)[-1]
    if media_type in RASTER_IMAGES:
        content_type, attachment = media_type, False
    elif (
        media_type not in ACTIVE
        and (media_type.startswith("text/") or media_type in TEXT_LIKE)
        and is_text(data)
    ):
        content_type, attachment = "text/plain; charset=utf-8", False
    elif media_type in ACTIVE:
        content_type, attachment = "application/octet-stream", True
    else:
        content_type, attachment = media_type or "application/octet-stream", True
    response = HttpResponse(data, content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox"
    response["Content-Disposition"] = content_disposition_header(attachment, name)
    response["X-Pixie-Media-Type"] = media_type
    if etag:
        response["ETag"] = f'"{etag}"'
    return response
