"""Shapes of the sharing API: what it accepts, and what it answers."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.api.serializers import FindingSerializer
from pixie.core.web.api import StrictSerializer
from pixie.sharing import crypto
from pixie.sharing.models import Contact
from pixie.sharing.services import OpenedMessage
from pixie.sharing.shares import share_findings

# --- requests ---------------------------------------------------------------------


class ContactAddSerializer(StrictSerializer):
    card = serializers.JSONField(required=False, help_text="A contact card (JSON or its text).")
    workspace = serializers.CharField(
        required=False, help_text="Or: the slug of a workspace on this server."
    )

    def validate(self, attrs):
        if ("card" in attrs) == ("workspace" in attrs):
            raise serializers.ValidationError("send either a card or a workspace, not both")
        return attrs


class TextSendSerializer(StrictSerializer):
    contact = serializers.IntegerField()
    text = serializers.CharField(trim_whitespace=False)


class AddSenderSerializer(StrictSerializer):
    fingerprint = serializers.CharField(
        max_length=64,
        help_text="The fingerprint you compared with the sender's card: the message's own "
        "`fingerprint`, or the sender is not added.",
    )


class ShareSendSerializer(StrictSerializer):
    contact = serializers.IntegerField()
    skill = serializers.CharField(help_text="The slug of the workspace skill to share.")


class RenameSerializer(StrictSerializer):
    slug = serializers.CharField(help_text="The new slug; free of skills and tools.")


# --- answers ----------------------------------------------------------------------


class ContactSerializer(serializers.ModelSerializer):
    workspace = serializers.CharField(source="remote_workspace")
    fingerprint = serializers.SerializerMethodField()
    added_at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Contact
        fields = ["id", "name", "workspace", "inbox_url", "fingerprint", "added_at"]

    def get_fingerprint(self, contact) -> str:
        return crypto.fingerprint(
            crypto.key_from_b64(contact.signing_public_key),
            crypto.key_from_b64(contact.box_public_key),
        )


class SkillSummarySerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    short_description = serializers.CharField()


class ShareSummarySerializer(serializers.Serializer):
    skill = SkillSummarySerializer()
    linked_skills = serializers.IntegerField()


class ContactRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()


class MessageSerializer(serializers.Serializer):
    """A message as its workspace reads it (an OpenedMessage)."""

    id = serializers.IntegerField(source="message.pk")
    message_id = serializers.UUIDField(source="message.message_id")
    direction = serializers.CharField(source="message.direction")
    created_at = serializers.DateTimeField(source="message.created_at")
    sent_at = serializers.DateTimeField(allow_null=True)
    correspondent = serializers.CharField()
    sender = serializers.CharField(help_text="self, known, unknown or mismatched")
    fingerprint = serializers.CharField(
        help_text="Of the keys that signed it: compare it with the sender's card before "
        "adding an unknown sender (POST …/add-sender/)."
    )
    contact = ContactRefSerializer(allow_null=True)
    kind = serializers.SerializerMethodField(help_text="share, text or unreadable")
    text = serializers.SerializerMethodField()
    share = serializers.SerializerMethodField()
    can_import = serializers.BooleanField()
    imported = serializers.SerializerMethodField()
    findings = serializers.SerializerMethodField()
    delivery = serializers.CharField(source="message.delivery", allow_null=True)
    delivery_error = serializers.CharField(source="dispatch_problem", allow_null=True)

    def get_kind(self, opened: OpenedMessage) -> str:
        if opened.problem:
            return "unreadable"
        return "share" if opened.share else "text"

    def get_text(self, opened: OpenedMessage) -> str | None:
        return opened.text if self.get_kind(opened) == "text" else None

    @extend_schema_field(ShareSummarySerializer(allow_null=True))
    def get_share(self, opened: OpenedMessage) -> dict | None:
        if opened.share is None:
            return None
        skill = opened.share.skill
        return {
            "skill": {
                "id": skill.id,
                "name": skill.name,
                "short_description": skill.short_description,
            },
            "linked_skills": opened.linked_count,
        }

    @extend_schema_field(FindingSerializer(many=True))
    def get_findings(self, opened: OpenedMessage) -> list[dict]:
        """What a person should weigh in a share's text before importing it."""
        return share_findings(opened.share) if opened.share is not None else []

    def get_imported(self, opened: OpenedMessage) -> bool:
        return opened.share_import is not None

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["delivery"] = data["delivery"] or None
        data["delivery_error"] = data["delivery_error"] or None
        return data


class ItemSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    short_description = serializers.CharField()
    detailed_body = serializers.CharField()


class OutcomeSerializer(serializers.Serializer):
    imported = SkillSummarySerializer(many=True)
    skipped_identical = serializers.ListField(child=serializers.CharField())
    renames = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text='[{"from": "meeting-prep", "to": "meeting-prep-2"}]',
    )
    lines = serializers.ListField(child=serializers.CharField())
    repeated = serializers.BooleanField(help_text="True when this share had been imported before")


class ReviewSerializer(serializers.Serializer):
    message = MessageSerializer()
    items = ItemSerializer(many=True)
    unresolved_mentions = serializers.ListField(child=serializers.CharField())
    findings = FindingSerializer(many=True)
    can_import = serializers.BooleanField()
    why_not = serializers.CharField(allow_null=True)
    outcome = OutcomeSerializer(allow_null=True)


class RenameResultSerializer(serializers.Serializer):
    slug = serializers.CharField()
    rewritten = serializers.ListField(child=serializers.CharField())


class DirectoryListingSerializer(StrictSerializer):
    listed = serializers.BooleanField(
        help_text="Whether owners of other workspaces on this server may add this one as a "
        "contact by its slug (off by default; contacts made before stay)."
    )
