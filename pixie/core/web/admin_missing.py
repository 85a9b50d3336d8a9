"""Where an object a reader may not see is simply not there (404), in the admin's own
views as in ours.

Django's change, delete and history views read the object with ``get_object`` and,
when it is None, check the reader's permission and then redirect to the index with a
warning. Our admins answer 404 from ``get_object`` instead, after the same permission
check Django makes first, so that a person without the model permission still gets
its 403 and the rest get a 404 that tells nothing."""

from django.http import Http404


def answers_not_found(model_admin, request) -> bool:
    """Whether a missing object is this reader's 404: the check each of Django's views
    makes before it looks at the object (none for history and our own pages)."""
    view = request.resolver_match.url_name if request.resolver_match else ""
    if view.endswith("_delete"):
        return model_admin.has_delete_permission(request)
    if view.endswith("_change"):
        if request.method == "POST":
            return model_admin.has_change_permission(request)
        return model_admin.has_view_or_change_permission(request)
    return True


class MissingIsNotFound:
    """For a ModelAdmin (put before it in the bases): an object this reader may not see,
    or that is not there, answers 404 from ``get_object``, after Django's own permission
    check; ``object_not_found`` (AdminPages) answers the same on our own pages."""

    def object_not_found(self, request, object_id):
        raise Http404(f"No {self.opts.verbose_name} {object_id}.")

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None and answers_not_found(self, request):
            self.object_not_found(request, object_id)
        return obj
