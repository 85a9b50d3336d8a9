"""Sources as the API shows them, and the bodies it takes. The bodies say only what type
each field is: every rule (a URL this server follows, a ref git allows, a variable's name
rather than a token, metadata bundle.toml takes, an interval in range) is
pixie.sources.editing's, as for the admin's form."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.models import Bundle
from pixie.core.web.api import StrictSerializer

from ..editing import INTERVAL_MAX, INTERVAL_MIN, SKILLS_MAX
from ..models import Source

_field = Source._meta.get_field
_minimum, _maximum = int(INTERVAL_MIN.total_seconds()), int(INTERVAL_MAX.total_seconds())
INTERVAL_WORDS = f"Seconds between two checks, from {_minimum} (1 minute) to {_maximum} (30 days)."
METADATA_WORDS = (
    "The bundle's own data when the repository has no bundle.toml, as bundle.toml's keys: "
    "slug, name, description, notes, publisher, hosts, credentials, approvals. Empty: the "
    "repository's bundle.toml."
)
KINDS = ", ".join(f"{value} ({label.lower()})" for value, label in Source.Kind.choices)


class IntervalField(serializers.IntegerField):
    """A duration as whole seconds."""

    def to_representation(self, value: timedelta) -> int:
        return int(value.total_seconds())

    def to_internal_value(self, data):
        seconds = super().to_internal_value(data)
        try:
            return timedelta(seconds=seconds)
        except OverflowError:
            return seconds  # no duration at all: editing names the range


@extend_schema_field({"type": "object", "additionalProperties": True})
class MetadataField(serializers.JSONField):
    """bundle.toml's keys as an object (editing says which keys and values it takes)."""


class WaitingDraftSerializer(serializers.Serializer):
    """The draft the last upstream change made, waiting for an operator's review."""

    id = serializers.IntegerField()
    bundle = serializers.CharField(source="bundle.slug", help_text="The bundle's slug.")
    version = serializers.CharField()
    url = serializers.SerializerMethodField(help_text="The draft in the API.")
    admin_url = serializers.SerializerMethodField(help_text="Its review page in the admin.")

    @staticmethod
    def get_url(draft) -> str:
        return reverse(
            "bundle-version-detail", kwargs={"slug": draft.bundle.slug, "version": draft.version}
        )

    @staticmethod
    def get_admin_url(draft) -> str:
        return reverse("admin:catalog_bundleversion_change", args=[draft.pk])


class SourceSerializer(serializers.ModelSerializer):
    bundle = serializers.SlugRelatedField(
        slug_field="slug",
        read_only=True,
        allow_null=True,
        help_text="The slug of the bundle it feeds; null until its first check makes it.",
    )
    interval = IntervalField(read_only=True, help_text=INTERVAL_WORDS)
    skills = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="The skill folders' names, in the bundle's order; empty: every folder "
        "holding a SKILL.md.",
    )
    metadata = MetadataField(read_only=True, help_text=METADATA_WORDS)
    waiting_draft = WaitingDraftSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Source
        fields = [
            "id", "kind", "url", "ref", "folder", "skills", "metadata", "credential_variable",
            "interval", "paused", "bundle", "last_checked_at", "last_result", "last_message",
            "last_commit", "next_check_at", "waiting_draft", "created_at",
        ]  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "credential_variable": {
                "help_text": "The NAME of the environment variable holding the deploy token "
                "(never the token); empty: a public repository."
            },
            "last_commit": {
                "help_text": "The commit the last check that read the repository saw (for a "
                "discovery index, the digest of the entries it chose)."
            },
        }


class SourceRequestSerializer(StrictSerializer):
    """A source's fields as given; on a change (PATCH), only those to change."""

    kind = serializers.CharField(required=False, help_text=f"One of: {KINDS}. Default: git.")
    url = serializers.CharField(
        max_length=_field("url").max_length,
        help_text="A git repository's https:// URL (https://github.com/owner/skills.git), or "
        "a site's discovery index (https://example.com/.well-known/agent-skills/index.json).",
    )
    ref = serializers.CharField(
        required=False,
        max_length=_field("ref").max_length,
        help_text="The branch, tag or commit's full SHA to follow. Default: main.",
    )
    folder = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=_field("folder").max_length,
        help_text="The folder in the repository holding the skill folders; empty: its top.",
    )
    skills = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text=f"The skill folders' names, in the bundle's order (at most {SKILLS_MAX}); "
        "empty: every folder holding a SKILL.md.",
    )
    metadata = MetadataField(required=False, help_text=METADATA_WORDS)
    credential_variable = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=_field("credential_variable").max_length,
        help_text="The NAME of the environment variable holding a deploy token, e.g. "
        "SKILLS_DEPLOY_TOKEN; never the token itself.",
    )
    interval = IntervalField(required=False, help_text=f"{INTERVAL_WORDS} Default: 3600.")
    paused = serializers.BooleanField(
        required=False, help_text="Paused: not checked until resumed."
    )
    bundle = serializers.SlugRelatedField(
        slug_field="slug",
        queryset=Bundle.objects.all(),
        required=False,
        allow_null=True,
        error_messages={"does_not_exist": "There is no bundle {value}."},
        help_text="The slug of the bundle it feeds; null: its first check makes one from the "
        "metadata or the repository's bundle.toml.",
    )
