from django.urls import reverse
from rest_framework import serializers

from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.skill_files_display import file_rows, size_of
from catalog.validators import SKILL_DESCRIPTION_MAX
from egress.models import CredentialRequirement, EgressRule


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know, so a typo is an error rather than ignored."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


class PlanRequestSerializer(StrictSerializer):
    kind = serializers.ChoiceField(choices=Plan.Kind.choices)
    bundle = serializers.SlugField(max_length=64, required=False)
    version = serializers.CharField(max_length=64, required=False)
    agents = serializers.ListField(
        child=serializers.SlugField(max_length=64), required=False, max_length=200, default=list
    )
    fork_choices = serializers.DictField(
        child=serializers.ChoiceField(choices=["keep", "take", "merge"]),
        required=False,
        default=dict,
    )

    def validate(self, attrs):
        if attrs["kind"] != Plan.Kind.REPOINT and not attrs.get("bundle"):
            raise serializers.ValidationError({"bundle": ["Required except for a repoint."]})
        if attrs["kind"] in (Plan.Kind.INSTALL, Plan.Kind.UPGRADE) and not attrs.get("version"):
            raise serializers.ValidationError({"version": ["Required for install and upgrade."]})
        return attrs


class RejectSerializer(StrictSerializer):
    reason = serializers.CharField(max_length=400)


class PlanSerializer(serializers.ModelSerializer):
    bundle = serializers.SerializerMethodField()
    version = serializers.CharField(source="bundle_version.version", default=None, allow_null=True)
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    decided_by = serializers.CharField(source="decided_by.username", default=None, allow_null=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Plan
        fields = [
            "id",
            "kind",
            "status",
            "progress",
            "bundle",
            "version",
            "summary",
            "expands_reach",
            "steps",
            "error",
            "reject_reason",
            "created_by",
            "created_at",
            "decided_by",
            "decided_at",
            "finished_at",
        ]

    def get_progress(self, plan) -> dict | None:
        from catalog.services.repoint import progress_of

        return progress_of(plan) if plan.kind == Plan.Kind.REPOINT else None

    def get_bundle(self, plan) -> str | None:
        if plan.bundle_version_id:
            return plan.bundle_version.bundle.slug
        return plan.installation.bundle.slug if plan.installation_id else None


class PlanSummarySerializer(PlanSerializer):
    class Meta(PlanSerializer.Meta):
        fields = [f for f in PlanSerializer.Meta.fields if f != "steps"]


class SkillSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="head.name")
    short_description = serializers.CharField(source="head.short_description")
    body = serializers.CharField(source="head.body")
    revision = serializers.IntegerField(source="head.number")
    upstream = serializers.SerializerMethodField()
    installed_from = serializers.SerializerMethodField()
    size = serializers.SerializerMethodField()
    files = serializers.SerializerMethodField()

    class Meta:
        model = WorkspaceSkill
        fields = [
            "slug",
            "name",
            "short_description",
            "body",
            "revision",
            "enabled",
            "advertised",
            "upstream",
            "installed_from",
            "archived_at",
            "size",
            "files",
        ]

    def get_size(self, skill) -> dict | None:
        """Lines and estimated tokens of the head revision's body, with the warning past
        the Agent Skills guidance; bytes of the body and every file."""
        head = skill.head
        if head is None:
            return None
        files = sum(f.size for f in head.files.all())
        return {**size_of(head.body), "bytes": len(head.body.encode("utf-8")) + files}

    def get_files(self, skill) -> list[dict]:
        """The head revision's supporting files; SKILL.md is served at files/SKILL.md."""
        if skill.head is None:
            return []
        workspace = skill.workspace.slug
        return file_rows(
            skill.head.files.all(),
            lambda path: reverse(
                "skill-file", kwargs={"workspace": workspace, "slug": skill.slug, "path": path}
            ),
        )

    def get_upstream(self, skill) -> str | None:
        upstream = skill.head.upstream if skill.head else None
        return upstream.label if upstream else None

    def get_installed_from(self, skill) -> str | None:
        installation = skill.installation
        return str(installation.bundle_version) if installation else None


class SkillEditSerializer(StrictSerializer):
    name = serializers.CharField(max_length=80, required=False)
    short_description = serializers.CharField(
        max_length=SKILL_DESCRIPTION_MAX, required=False, allow_blank=True
    )
    # The body's ceiling is in bytes (the catalog's per-file limit); the service checks it.
    body = serializers.CharField(required=False)


class EgressRuleSerializer(serializers.ModelSerializer):
    approved_by = serializers.CharField(
        source="approved_by.username", default=None, allow_null=True
    )

    class Meta:
        model = EgressRule
        fields = [
            "host",
            "port",
            "purpose",
            "credential_name",
            "approved_by",
            "approved_at",
            "plan",
        ]


class CredentialSerializer(serializers.ModelSerializer):
    confirmed_by = serializers.CharField(
        source="confirmed_by.username", default=None, allow_null=True
    )

    class Meta:
        model = CredentialRequirement
        fields = ["name", "host", "purpose", "confirmed", "confirmed_by", "confirmed_at"]


class InstallationSerializer(serializers.ModelSerializer):
    bundle = serializers.CharField(source="bundle.slug")
    version = serializers.CharField(source="bundle_version.version")
    installed_by = serializers.CharField(
        source="installed_by.username", default=None, allow_null=True
    )

    class Meta:
        model = Installation
        fields = ["bundle", "version", "installed_at", "installed_by"]
