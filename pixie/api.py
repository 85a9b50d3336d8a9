"""API plumbing shared by every app: domain errors become 4xx JSON with a code."""

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import PixieError, ValidationFailed


def exception_handler(exc, context):
    if isinstance(exc, PixieError):
        data = {"code": exc.code, "detail": exc.message}
        if isinstance(exc, ValidationFailed):
            data["problems"] = exc.problems
        return Response(data, status=exc.status)
    return drf_exception_handler(exc, context)
