"""History over the API: a workspace's for its members, the whole audit log for staff.

Both read the audit entries (pixie.core.audit.log) beside reversion's revisions, so a page
costs the same few queries however long the history is, and pages by position (a
cursor), not by offset. An entry lists its first objects and counts them all; an
entry's objects page on at …/history/{id}/objects/.
"""

from typing import TypedDict

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.views import APIView
from reversion.models import Version

from pixie.core.audit.log import (
    CATALOG,
    LISTED_OBJECTS,
    audit_entries,
    audit_export,
    audit_query,
    entries_data,
    entry_rows,
    keyset,
)
from pixie.core.errors import ErrorCode, PermissionRefused
from pixie.core.models import AuditEntry
from pixie.core.people.permissions import reads_audit_log
from pixie.core.web.api import InWorkspace
from pixie.core.web.pagination import MAX_OFFSET, IdCursorPagination
from pixie.core.web.schema import AuditorReadSchema


class ChangedObject(TypedDict):
    type: str
    id: str
    name: str


class HistoryEntrySerializer(serializers.Serializer):
    """An entry as pixie.core.audit.log.entries_data gives it. The lists below build their
    pages from that data directly (EntriesAsData); this declares their shape, and a test
    holds the two alike."""

    id = serializers.IntegerField(help_text="The revision's id.")
    at = serializers.DateTimeField()
    by = serializers.CharField(allow_null=True)
    comment = serializers.CharField()
    channel = serializers.ChoiceField(
        choices=AuditEntry.Channel.choices, help_text="The path the change came through."
    )
    plan = serializers.IntegerField(allow_null=True)
    object_count = serializers.IntegerField(help_text="How many objects the change recorded.")
    objects = serializers.SerializerMethodField(
        help_text=f"The first {LISTED_OBJECTS} of them; the rest page on at …/objects/."
    )

    def get_objects(self, entry) -> list[ChangedObject]:
        """Each object the change recorded: its kind (app.model), id, and name then."""
        return entry["objects"]


class AuditEntrySerializer(HistoryEntrySerializer):
    where = serializers.CharField(
        help_text='"the catalog", a workspace\'s name, "acme and the catalog", or '
        '"several workspaces".'
    )
    scope = serializers.ChoiceField(choices=AuditEntry.Scope.choices)
    workspace = serializers.CharField(allow_null=True, help_text="Its slug.")


class NewestFirst(IdCursorPagination):
    ordering = "-revision_id"  # the id itself: "-revision" would sort by Revision.Meta
    page_size = 50


AT = serializers.DateTimeField()  # the API's form of a time, as the serializer gives it


class EntriesAsData:
    """A list of entries read as plain values (two queries a page) and given as its
    serializer declares them, without running it: field by field through DRF, fifty
    entries cost more than reading them did."""

    def list(self, request, *args, **kwargs):
        entries = self.get_queryset()
        cursor = self.paginator.decode_cursor(request)  # a made-up one: 404
        if cursor is not None and cursor.position is not None:
            # DRF bounds the entry's revision_id; keyset() bounds the revision's side of
            # the join too, without which a page deep in the log walks down to it.
            entries = keyset(entries, int(cursor.position), newer=cursor.reverse)
        rows = self.paginate_queryset(entry_rows(entries))
        fields = list(self.get_serializer().fields)
        return self.get_paginated_response(
            [
                {name: entry[name] for name in fields} | {"at": AT.to_representation(entry["at"])}
                for entry in entries_data(rows, LISTED_OBJECTS)
            ]
        )


class WorkspaceHistory(EntriesAsData, InWorkspace, generics.ListAPIView):
    """Every recorded change to the workspace: who, when, why, the path it came through,
    the plan it belongs to and the objects it recorded. Its members read it, and auditors."""

    history_read = True
    serializer_class = HistoryEntrySerializer
    pagination_class = NewestFirst

    def get_queryset(self):
        workspace = self.workspace()
        # Written for this workspace and still showing in it: an entry moved here outside
        # Pixie is left out (and the chain check reports it).
        return AuditEntry.objects.filter(workspace=workspace, workspace_key=workspace.pk)


class ObjectSerializer(serializers.Serializer):
    type = serializers.SerializerMethodField()
    id = serializers.CharField(source="object_id")
    name = serializers.CharField(source="object_repr")

    def get_type(self, version) -> str:
        return f"{version.content_type.app_label}.{version.content_type.model}"


class ByRecordingOrder(IdCursorPagination):
    ordering = "id"
    page_size = 100


class HistoryEntryObjects(InWorkspace, generics.ListAPIView):
    """Every object one change to the workspace recorded, in the order it recorded them."""

    history_read = True
    serializer_class = ObjectSerializer
    pagination_class = ByRecordingOrder

    def get_queryset(self):
        entry = None
        if self.kwargs["pk"] <= MAX_OFFSET:  # past bigint: no such id, not a crash
            workspace = self.workspace()
            entry = AuditEntry.objects.filter(
                workspace=workspace, workspace_key=workspace.pk, revision_id=self.kwargs["pk"]
            ).first()
        if entry is None:
            raise NotFound("This workspace's history has no such change.")
        return Version.objects.filter(revision_id=entry.revision_id).select_related(
            "content_type"
        )


# --- the audit log, for auditors and operators --------------------------------------

FILTER_PARAMETERS = [
    OpenApiParameter("person", str, description="A username: their changes only."),
    OpenApiParameter(
        "workspace", str, description=f"A workspace's slug, or {CATALOG!r} for the catalog's."
    ),
    OpenApiParameter("type", str, description='A kind of object, "app.model".'),
    OpenApiParameter("plan", int, description="A plan's number: its changes only."),
    OpenApiParameter("channel", str, enum=AuditEntry.Channel.values),
    OpenApiParameter("since", OpenApiTypes.DATE, description="From this day (inclusive)."),
    OpenApiParameter("until", OpenApiTypes.DATE, description="To this day (inclusive)."),
    OpenApiParameter("search", str, description="Words in the comment, or a username."),
]


class ReadsAuditLog:
    schema = AuditorReadSchema()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if not reads_audit_log(request.user):
            raise PermissionRefused(
                "Only auditors and operators read the audit log; a workspace's members "
                "read its history at /api/workspaces/{workspace}/history/.",
                code=ErrorCode.AUDITOR_REQUIRED,
            )

    def entries(self):
        return audit_entries(audit_query(self.request.query_params))


@extend_schema(parameters=FILTER_PARAMETERS)
class AuditLog(EntriesAsData, ReadsAuditLog, generics.ListAPIView):
    """Every recorded change across the catalog and all workspaces, newest first, with
    the filters of the admin's audit log."""

    serializer_class = AuditEntrySerializer
    pagination_class = NewestFirst

    def get_queryset(self):
        return self.entries()


class AnyAccept(BaseContentNegotiation):
    """The exports answer a download whatever Accept asks; a refusal is JSON."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class AuditExportCSV(ReadsAuditLog, APIView):
    """The filtered rows whole, streamed as CSV (one row a change)."""

    as_csv = True
    content_negotiation_class = AnyAccept

    @extend_schema(parameters=FILTER_PARAMETERS, responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request):
        return audit_export(self.entries(), csv=self.as_csv)


class AuditExportJSONL(AuditExportCSV):
    """The filtered rows whole, streamed as JSON Lines (one object a change, as the list
    gives them)."""

    as_csv = False

    @extend_schema(
        parameters=FILTER_PARAMETERS, responses={(200, "application/jsonl"): OpenApiTypes.STR}
    )
    def get(self, request):
        return audit_export(self.entries(), csv=self.as_csv)
