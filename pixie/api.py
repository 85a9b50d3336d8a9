"""API plumbing shared by every app: domain errors become 4xx JSON with a code."""

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
