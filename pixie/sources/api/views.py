"""Sources over the API, operators only: they list, add, change, pause, resume and delete
sources, ask for a check and accept a rewritten history; auditors read. Thin callers of
pixie.sources.editing, the admin's door too, so both accept and refuse the same input:
its problems come back by field, as a serializer's do (``fields``)."""

from __future__ import annotations

from contextlib import contextmanager

from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from pixie.core.errors import ErrorCode
from pixie.core.people.permissions import is_auditor, is_operator
from pixie.core.web.pagination import MAX_OFFSET
from pixie.core.web.schema import OperatorSchema

from ..editing import (
    SourceInvalid,
    source_check_request,
    source_create,
    source_delete,
    source_pause,
    source_rewrite_accept,
    source_update,
)
from ..models import Source
from .serializers import SourceRequestSerializer, SourceSerializer

READ_REFUSAL = "Only operators and auditors read sources."
WRITE_REFUSAL = (
    "Only an operator (a superuser or a member of the group operators) can change sources."
)


class OperatorsOnly(BasePermission):
    """Operators read and change sources, auditors read them; anyone else is refused,
    a read too (a token limited to a workspace never gets here: TokenLimits refuses it)."""

    def has_permission(self, request, view) -> bool:
        if is_operator(request.user):
            return True
        reads = request.method in SAFE_METHODS
        if reads and is_auditor(request.user):
            return True
        self.message = READ_REFUSAL if reads else WRITE_REFUSAL
        self.code = ErrorCode.OPERATOR_REQUIRED
        return False


class ForOperators:
    schema = OperatorSchema()

    def get_permissions(self):
        # DRF's defaults (a person, a token's limits), then the operators' rule.
        return [*super().get_permissions(), OperatorsOnly()]


def sources():
    """Sources with what their answer shows, in a fixed number of queries a page."""
    return Source.objects.select_related("bundle", "waiting_draft__bundle").order_by("pk")


def source_get(pk: int) -> Source:
    source = sources().filter(pk=pk).first() if pk <= MAX_OFFSET else None
    if source is None:
        raise NotFound(f"There is no source #{pk}.")
    return source


@contextmanager
def refused_by_field():
    """editing's problems, by field, in the body every refused field gets."""
    try:
        yield
    except SourceInvalid as exc:
        raise ValidationError(exc.by_field) from None


def shown(pk: int, *, answer=status.HTTP_200_OK) -> Response:
    return Response(SourceSerializer(source_get(pk)).data, status=answer)


class SourceList(ForOperators, generics.ListAPIView):
    serializer_class = SourceSerializer

    def get_queryset(self):
        return sources()

    def get(self, request, *args, **kwargs):
        """Every source the catalog follows, with its last check and any draft waiting
        for review (operators and auditors)."""
        return super().get(request, *args, **kwargs)

    @extend_schema(request=SourceRequestSerializer, responses={201: SourceSerializer})
    def post(self, request):
        """Add a source (operators); unless it is added paused, its first check is asked
        for at once, and a draft it makes waits for review. Every problem is named by
        field, and nothing is saved."""
        given = SourceRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        with refused_by_field():
            source = source_create(actor=request.user, **given.validated_data)
        if not source.paused:
            source_check_request(source)
        return shown(source.pk, answer=status.HTTP_201_CREATED)


class SourceDetail(ForOperators, APIView):
    @extend_schema(responses=SourceSerializer)
    def get(self, request, pk):
        """A source, its last check and any draft waiting for review."""
        return shown(pk)

    @extend_schema(request=SourceRequestSerializer, responses=SourceSerializer)
    def patch(self, request, pk):
        """Change a source (operators): only the fields given. A different repository,
        ref, folder, skill list or metadata is read afresh, at a check due at once."""
        source = source_get(pk)
        given = SourceRequestSerializer(data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        with refused_by_field():
            source_update(source, actor=request.user, **given.validated_data)
        return shown(pk)

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        """Delete a source and its mirror (operators). The versions it made keep their
        provenance; its waiting draft stays a draft to publish or discard."""
        source_delete(source_get(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SourceCheck(ForOperators, APIView):
    @extend_schema(request=None, responses={202: SourceSerializer})
    def post(self, request, pk):
        """Ask for a check now (operators): its outcome shows on the source once it has
        run. A paused source is not checked (409)."""
        source_check_request(source_get(pk))
        return shown(pk, answer=status.HTTP_202_ACCEPTED)


class SourcePause(ForOperators, APIView):
    paused = True

    @extend_schema(request=None, responses=SourceSerializer)
    def post(self, request, pk):
        """Pause a source (operators): it is not checked until resumed."""
        source_pause(source_get(pk), actor=request.user, paused=self.paused)
        return shown(pk)


class SourceResume(SourcePause):
    paused = False

    @extend_schema(request=None, responses=SourceSerializer)
    def post(self, request, pk):
        """Resume a source (operators): it is checked when due, at once if overdue."""
        return super().post(request, pk)


class SourceAcceptRewrite(ForOperators, APIView):
    @extend_schema(request=None, responses={202: SourceSerializer})
    def post(self, request, pk):
        """After its ref was rewritten (force-pushed) or moved backwards: follow it as it
        now is (operators). A check is asked for, which compares the content with the
        bundle's newest version and makes a draft if it differs (a paused source: once
        resumed). Refused (409) when the last check found no rewritten history."""
        source = source_rewrite_accept(source_get(pk), actor=request.user)
        if not source.paused:
            source_check_request(source)
        return shown(pk, answer=status.HTTP_202_ACCEPTED)
