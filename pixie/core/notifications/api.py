"""The API of a person's notifications: theirs in a workspace (and marking them read), and
which they receive (pixie.core.notifications.service)."""

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from pixie.core.models import Notification
from pixie.core.notifications.service import (
    notification_choices,
    notification_choices_set,
    notifications_mark_read,
    notifications_shown,
)
from pixie.core.web.api import InWorkspace, StrictSerializer


class NotificationSerializer(serializers.ModelSerializer):
    url = serializers.CharField(help_text="Where to act on it: a page of the admin, its path.")

    class Meta:
        model = Notification
        fields = ["id", "kind", "title", "url", "created_at", "read_at"]


class MarkReadSerializer(StrictSerializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        max_length=500,  # under DATA_UPLOAD_MAX_NUMBER_FIELDS, for a form-encoded body too
        help_text="Only these; without it, every unread notification in the workspace.",
    )


class MarkedSerializer(serializers.Serializer):
    marked = serializers.IntegerField()


class ChoiceSerializer(StrictSerializer):
    in_home = serializers.BooleanField(help_text="Shown in the workspace home.")
    by_email = serializers.BooleanField(help_text="Sent by email (to a login with an address).")


class ChoicesSerializer(StrictSerializer):
    """One entry a kind; a PUT may name only some (the others stay as they were)."""

    plan_waiting = ChoiceSerializer(required=False)
    plan_failed = ChoiceSerializer(required=False)
    share_arrived = ChoiceSerializer(required=False)
    version_yanked = ChoiceSerializer(required=False)
    version_published = ChoiceSerializer(required=False)
    owners_and_rules = ChoiceSerializer(required=False)
    delivery_maker_left = ChoiceSerializer(required=False)
    source_draft_waiting = ChoiceSerializer(required=False)
    source_failed = ChoiceSerializer(required=False)


class NotificationList(InWorkspace, generics.ListAPIView):
    """The requesting person's notifications in the workspace, unread first."""

    serializer_class = NotificationSerializer

    def get_queryset(self):
        return notifications_shown(user=self.request.user, workspace=self.workspace())


class NotificationsRead(InWorkspace, APIView):
    member_writes = frozenset({"POST"})  # each person marks their own notices read

    @extend_schema(request=MarkReadSerializer, responses=MarkedSerializer)
    def post(self, request, workspace):
        body = MarkReadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        marked = notifications_mark_read(
            user=request.user, workspace=self.workspace(), ids=body.validated_data.get("ids")
        )
        return Response({"marked": marked})


class NotificationChoices(APIView):
    """The requesting person's choice for every kind (both on unless they chose)."""

    @extend_schema(responses=ChoicesSerializer)
    def get(self, request):
        return Response(notification_choices(user=request.user))

    @extend_schema(request=ChoicesSerializer, responses=ChoicesSerializer)
    def put(self, request):
        body = ChoicesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(notification_choices_set(user=request.user, choices=body.validated_data))


W = "workspaces/<slug:workspace>"
urlpatterns = [
    path(f"{W}/notifications/", NotificationList.as_view(), name="notification-list"),
    path(f"{W}/notifications/read/", NotificationsRead.as_view(), name="notification-read"),
    path("notification-choices/", NotificationChoices.as_view(), name="notification-choices"),
]
