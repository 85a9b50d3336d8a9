"""A delivery URL carries its token in the path (the ``skills`` client sends no header, no
cookie and drops the query string), so the token is taken out of the request before
anything else reads it: the request log line, the path every log record of the request
carries, django.request's "Not Found" warning, an error report's request and its WSGI
environ (gunicorn's access log reads the same environ) all see ``/deliver/…/``.

Claude Code's marketplace (/claude/…) sends its token as ``Authorization: Bearer …``: the
header is rewritten the same way. First in MIDDLEWARE. The views read the token from
``request.delivery_secret``.
"""

import re

PREFIX = "/deliver/"
CLAUDE_PREFIX = "/claude/"
HIDDEN = "…"
_DELIVERY = re.compile(r"^/deliver/([^/]*)(.*)\Z", re.DOTALL)
# Where a server may keep the path as it came (REQUEST_URI: uWSGI, RAW_URI: gunicorn).
_ENVIRON_PATHS = ("PATH_INFO", "REQUEST_URI", "RAW_URI")


# The same segment anywhere in a path that carries a prefix before it (SCRIPT_NAME).
_SEGMENT = re.compile(r"/deliver/[^/]*")


def hide_secret(path: str) -> str:
    return _SEGMENT.sub(f"{PREFIX}{HIDDEN}", path, count=1)


class DeliverySecretMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith(CLAUDE_PREFIX):
            # Claude Code's marketplace sends the token as a header: kept off the request
            # the same way (an error report lists every header).
            words = request.META.get("HTTP_AUTHORIZATION", "").split()
            if len(words) == 2 and words[0].lower() == "bearer":
                request.delivery_secret = words[1]
                request.META["HTTP_AUTHORIZATION"] = f"Bearer {HIDDEN}"
        match = _DELIVERY.match(request.path_info)
        if match is not None:
            request.delivery_secret = match[1]
            request.path_info = hide_secret(request.path_info)
            request.path = hide_secret(request.path)
            for key in _ENVIRON_PATHS:
                if isinstance(request.META.get(key), str):
                    request.META[key] = hide_secret(request.META[key])
        return self.get_response(request)
