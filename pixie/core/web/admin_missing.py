"""Where an object a reader may not see is simply not there (404), in the admin's own
views as in ours.

Django's change, delete and history views read the object with ``get_object`` and,
when it is None, check the reader's permission and then redirect to the index with a
warning. Our admins answer 404 from ``get_object`` instead, after the same permission
check Django makes first, so that a person without the model permission still gets
its 403 and the rest get a 404 that tells nothing."""


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
