"""A workspace's history for its members: every recorded change to it, newest first.

Read from the audit entries (pixie.audit.record_entry) beside reversion's revisions, so
a page costs the same few queries however long the history is, and pages by position
(a cursor), not by offset.
"""

from typing import TypedDict

from django.db.models import Prefetch
from rest_framework import generics, serializers
from rest_framework.pagination import CursorPagination
from reversion.models import Version

from .api import InWorkspace
from .models import AuditEntry


class ChangedObject(TypedDict):
    type: str
    id: str
    name: str


class HistoryEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField(source="revision_id", help_text="The revision's id.")
    at = serializers.DateTimeField(source="revision.date_created")
    by = serializers.CharField(source="revision.user.username", default=None, allow_null=True)
    comment = serializers.CharField(source="revision.comment")
    channel = serializers.ChoiceField(
        choices=AuditEntry.Channel.choices, help_text="The path the change came through."
    )
    plan = serializers.IntegerField(source="plan_id", allow_null=True)
    objects = serializers.SerializerMethodField()

    def get_objects(self, entry) -> list[ChangedObject]:
        """Each object the change recorded: its kind (app.model), id, and name then."""
        return [
            {
                "type": f"{version.content_type.app_label}.{version.content_type.model}",
                "id": version.object_id,
                "name": version.object_repr,
            }
            for version in entry.revision.version_set.all()
        ]


class NewestFirst(CursorPagination):
    ordering = "-revision_id"  # the id itself: "-revision" would sort by Revision.Meta
    page_size = 50


class WorkspaceHistory(InWorkspace, generics.ListAPIView):
    """Every recorded change to the workspace: who, when, why, the path it came through,
    the plan it belongs to and the objects it recorded."""

    serializer_class = HistoryEntrySerializer
    pagination_class = NewestFirst

    def get_queryset(self):
        versions = Version.objects.select_related("content_type").only(
            "revision_id", "object_id", "object_repr", "content_type"
        )
        return (
            AuditEntry.objects.filter(workspace=self.workspace())
            .select_related("revision__user")
            .prefetch_related(Prefetch("revision__version_set", queryset=versions))
        )
