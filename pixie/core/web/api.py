"""API plumbing shared by every app, and the one shape of every refusal.

Every 4xx answer of the API, whatever raised it (a service's PixieError, a serializer,
the JSON parser, DRF's authentication, a path no route matches), has one body:

    {"code": "invalid", "detail": "name: This field is required.",
     "problems": ["name: This field is required."], "fields": {"name": ["..."]}}

``code`` is stable for programs, ``detail`` is for a person, ``problems`` names every
problem (one item at least), and ``fields`` (only when a serializer refused the body)
keeps DRF's per-field messages, nested as the body is. The schema's ``Error`` component
(pixie.core.web.schema) describes it.
"""

import logging
import re

from django.http import Http404, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from pixie.core.errors import ErrorCode, PixieError, ValidationFailed
from pixie.core.people.permissions import (
    may_act,
    owner_refusal_words,
    token_workspace_id,
    workspace_for_auditor,
    workspace_for_history_reader,
    workspace_for_member,
)

log = logging.getLogger(__name__)
_DJANGO_NOT_FOUND = re.compile(r"No \w+ matches the given query\.")


def error_body(*, code: str, problems: list[str], fields=None) -> dict:
    body = {"code": code, "detail": "; ".join(problems), "problems": problems}
    if fields is not None:
        body["fields"] = fields
    return body


def pixie_error_body(exc: PixieError) -> dict:
    problems = exc.problems if isinstance(exc, ValidationFailed) else [exc.message]
    return error_body(code=exc.code, problems=problems)


def _field_problems(errors, prefix: str = "") -> list[str]:
    """DRF's nested field errors as lines, each naming where: `agents.2: Not a slug.`"""
    if isinstance(errors, dict):
        lines = []
        for key, value in errors.items():
            where = "" if key in ("non_field_errors", "detail") else f"{prefix}{key}"
            lines += _field_problems(value, f"{where}." if where else prefix)
        return lines
    if isinstance(errors, list):
        if all(not isinstance(item, dict | list) for item in errors):
            where = prefix.rstrip(".")
            return [f"{where}: {item}" if where else str(item) for item in errors]
        lines = []
        for index, item in enumerate(errors):
            lines += _field_problems(item, f"{prefix}{index}.")
        return lines
    where = prefix.rstrip(".")
    return [f"{where}: {errors}" if where else str(errors)]


def exception_handler(exc, context):
    if isinstance(exc, PixieError):
        return Response(pixie_error_body(exc), status=exc.status)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API error: a server error, which Django reports
    if isinstance(exc, ValidationError):
        problems = _field_problems(response.data) or ["The request is not valid."]
        response.data = error_body(code=ErrorCode.INVALID, problems=problems, fields=response.data)
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        code = _registered(getattr(detail, "code", None) or getattr(exc, "default_code", ""))
        words = str(detail) or str(exc)
        if isinstance(exc, Http404) and _DJANGO_NOT_FOUND.fullmatch(words):
            words = "Not found."  # get_object_or_404's words name a model class
        response.data = error_body(code=str(code), problems=[words])
    return response


def _registered(code) -> ErrorCode:
    """DRF's code for its refusal, as the ErrorCode it is registered as; a code nobody
    registered (a library's own) is answered as ``error`` and logged, so that the answer
    keeps to the schema."""
    try:
        return ErrorCode(str(code))
    except ValueError:
        log.warning("An API refusal carried the unregistered code %r; answered as 'error'.", code)
        return ErrorCode.ERROR


def not_found(request, exception):
    """Django's answer to a URL no route matches (handler404). Under /api/ it is JSON in
    the shape of every other refusal there, so a client that mistypes an id in a path (one
    that is not a slug or a number) reads a refusal it can parse, not an HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body(code=ErrorCode.NOT_FOUND, problems=["Not found."]), status=404
        )
    return page_not_found(request, exception)


class IsWorkspaceMember(BasePermission):
    """A view under /api/workspaces/{workspace}/ (InWorkspace): its members read it, and
    for a view that says so (``history_read``) auditors and operators read its history;
    anyone else is answered 404, so a stranger does not learn the workspace exists."""

    def has_permission(self, request, view) -> bool:
        view.workspace()  # Http404 for whoever may not read it
        return True


class IsWorkspaceOwner(IsWorkspaceMember):
    """...and writes there are its owners' (a member's only where the view's
    ``member_writes`` say so), refused before the view reads the body, in the words and
    code the services' ``require_owner`` uses. The rule is may_act's.

    A principal that is not a person (a delivery client's token) gets its own class
    beside these, reading ``request.auth``; these two are for people."""

    def has_permission(self, request, view) -> bool:
        workspace = view.workspace()
        if request.method in SAFE_METHODS:
            return True
        if may_act(role=view.role, method=request.method, member_writes=view.member_writes):
            return True
        # DRF answers a False with PermissionDenied(message, code) (and the browsable API
        # leaves the form out); the refusal reads as require_owner's.
        self.message = owner_refusal_words(workspace)
        self.code = ErrorCode.OWNER_REQUIRED
        return False


class InWorkspace:
    """Views under /api/workspaces/{workspace}/: the workspace, or 404 for non-members.

    Sets `self.role` to the user's role there, for the owner checks services make.
    """

    # History reads (a skill's revisions and comparisons, the workspace's history) are
    # auditors' and operators' too, for GET only, and not through a token limited to the
    # workspace (pixie.core.people.permissions.workspace_for_history_reader).
    history_read = False
    # Reads auditors make of every workspace (delivery's tokens and clients), GET only and
    # not through a token limited to a workspace; operators, who are not, read nothing here.
    audit_read = False
    # The writes a member who is not an owner may make here (the services' rule): every
    # other write of a workspace is its owners'. The browsable API offers its forms by it.
    member_writes: frozenset[str] = frozenset()

    def get_permissions(self):
        # DRF's defaults (a person, a token's limits), then the workspace's own rule.
        return [*super().get_permissions(), IsWorkspaceOwner()]

    def offers(self, method: str) -> bool:
        """Whether the browsable API offers this request's person a form for ``method``:
        a read to whoever reads, a write only to whom the service would allow it."""
        if method in SAFE_METHODS:
            return True
        if not hasattr(self, "_member_role"):
            try:
                _, self._member_role = workspace_for_member(
                    user=self.request.user, slug=self.kwargs["workspace"]
                )
            except Http404:
                self._member_role = None
        return may_act(role=self._member_role, method=method, member_writes=self.member_writes)

    def workspace(self):
        if not hasattr(self, "_workspace"):
            user, slug = self.request.user, self.kwargs["workspace"]
            if self.history_read and self.request.method in ("GET", "HEAD", "OPTIONS"):
                found = workspace_for_history_reader(
                    user=user, slug=slug, limited_to=token_workspace_id(self.request)
                )
            elif self.audit_read and self.request.method in ("GET", "HEAD", "OPTIONS"):
                found = workspace_for_auditor(
                    user=user, slug=slug, limited_to=token_workspace_id(self.request)
                )
            else:
                found = workspace_for_member(user=user, slug=slug)
            self._workspace, self.role = found
        return self._workspace


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know, so a typo is an error rather than ignored."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


class PixieBrowsableAPI(BrowsableAPIRenderer):
    """The browsable API (templates/rest_framework/api.html): a form only for what its
    reader may do. DRF asks the view's permission classes; a workspace's owner-only rule
    lives in its services, so a view that knows it (InWorkspace.offers) is asked too."""

    def show_form_for_method(self, view, method, request, obj):
        if not super().show_form_for_method(view, method, request, obj):
            return False
        offers = getattr(view, "offers", None)
        return offers is None or offers(method)
