"""A page a view refuses with Http404 reads the same under DEBUG (./scripts/dev, the
README's first command) as in production: Pixie's "Not found" page, or JSON under /api/.

With DEBUG on, Django answers an Http404 with its debug page, which lists the site's URL
patterns and the exception's words to whoever asked: a member who opens another
workspace's page read that instead of a refusal. (A URL no route matches is refused
before any view runs, so under DEBUG it still gets Django's page.)"""

from django.http import Http404


class NotFoundPages:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, Http404):
            return None
        # What Django itself answers without DEBUG (handler404, pixie.urls). Imported here:
        # pixie.api loads DRF, whose settings name pixie.api (a middleware loads first).
        from .api import not_found

        return not_found(request, exception)
