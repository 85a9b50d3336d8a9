"""API plumbing shared by every app: domain errors become 4xx JSON with a code."""

from django.http import JsonResponse
from django.views.defaults import page_not_found
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import PixieError, ValidationFailed
from .permissions import workspace_for_member


def exception_handler(exc, context):
    if isinstance(exc, PixieError):
        data = {"code": exc.code, "detail": exc.message}
        if isinstance(exc, ValidationFailed):
            data["problems"] = exc.problems
        return Response(data, status=exc.status)
    return drf_exception_handler(exc, context)


def not_found(request, exception):
    """Django's answer to a URL no route matches (handler404). Under /api/ it is JSON in
    the shape of every other 404 there, so a client that mistypes an id in a path (one
    that is not a slug or a number) reads a refusal it can parse, not an HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


class InWorkspace:
    """Views under /api/workspaces/{workspace}/: the workspace, or 404 for non-members.

    Sets `self.role` to the user's role there, for the owner checks services make.
    """

    def workspace(self):
        if not hasattr(self, "_workspace"):
            self._workspace, self.role = workspace_for_member(
                user=self.request.user, slug=self.kwargs["workspace"]
            )
        return self._workspace
