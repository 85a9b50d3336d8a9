"""A page Pixie does not have reads the same under DEBUG (./scripts/dev, the README's
first command) as in production: Pixie's "Not found" page, or JSON under /api/.

With DEBUG on, Django answers an Http404 with its debug page, which lists the site's URL
patterns and the exception's words to whoever asked: a member who opens another
workspace's page, or anyone who mistypes an address, read that instead of a refusal.
Two ways lead there: a view that raises Http404 (process_exception), and a URL no route
matches, refused before any view runs (checked here first, only under DEBUG: in
production Django itself answers both with handler404)."""

from django.conf import settings
from django.http import Http404
from django.urls import Resolver404, get_resolver


class NotFoundPages:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if settings.DEBUG:
            try:
                get_resolver(getattr(request, "urlconf", None)).resolve(request.path_info)
            except Resolver404 as exception:
                return _not_found(request, exception)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, Http404):
            return None
        return _not_found(request, exception)


def _not_found(request, exception):
    # What Django itself answers without DEBUG (handler404, pixie.urls). Imported here, on
    # purpose: pixie.core.web.api loads DRF, whose settings import pixie.core.web.api back
    # (its renderer and exception handler), and a middleware is loaded before either. Not
    # a cycle of Pixie's modules (tests/test_import_cycles.py), one through DRF's settings.
    from pixie.core.web.api import not_found

    return not_found(request, exception)
