from rest_framework import serializers

from catalog.models import Bundle, BundleCredential, BundleHost, BundleSkill, BundleVersion
from catalog.selectors import latest_published
from catalog.validators import version_key


class PublisherSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField()


class VersionSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleVersion
        fields = ["version", "status", "published_at", "yank_reason"]


class BundleSerializer(serializers.ModelSerializer):
    publisher = PublisherSerializer()
    latest_version = serializers.SerializerMethodField()

    class Meta:
        model = Bundle
        fields = ["slug", "name", "description", "publisher", "latest_version"]

    def get_latest_version(self, bundle) -> str | None:
        latest = latest_published(bundle.visible_versions)
        return latest.version if latest else None


class BundleDetailSerializer(BundleSerializer):
    versions = serializers.SerializerMethodField()

    class Meta(BundleSerializer.Meta):
        fields = [*BundleSerializer.Meta.fields, "versions"]

    def get_versions(self, bundle) -> list[dict]:
        ordered = sorted(
            bundle.visible_versions, key=lambda v: version_key(v.version), reverse=True
        )
        return VersionSummarySerializer(ordered, many=True).data


class BundleSkillSerializer(serializers.ModelSerializer):
    slug = serializers.CharField(source="skill_version.package.slug")
    version = serializers.CharField(source="skill_version.version")
    name = serializers.CharField(source="skill_version.name")
    description = serializers.CharField(source="skill_version.description")
    body = serializers.CharField(source="skill_version.body")
    approvals = serializers.JSONField(source="skill_version.approvals")
    frontmatter = serializers.JSONField(source="skill_version.frontmatter")

    class Meta:
        model = BundleSkill
        fields = [
            "position",
            "slug",
            "version",
            "name",
            "description",
            "body",
            "approvals",
            "frontmatter",
        ]


class BundleHostSerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleHost
        fields = ["host", "port", "purpose"]


class BundleCredentialSerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleCredential
        fields = ["name", "host", "purpose"]


class ApprovalRuleSerializer(serializers.Serializer):
    skill = serializers.CharField()
    operation = serializers.CharField()
    rule = serializers.CharField()


class BundleVersionSerializer(serializers.ModelSerializer):
    bundle = serializers.CharField(source="bundle.slug")
    name = serializers.CharField(source="bundle.name")
    publisher = PublisherSerializer(source="bundle.publisher")
    skills = BundleSkillSerializer(many=True)
    hosts = BundleHostSerializer(many=True)
    credentials = BundleCredentialSerializer(many=True)
    approval_rules = serializers.SerializerMethodField()

    class Meta:
        model = BundleVersion
        fields = [
            "bundle",
            "name",
            "version",
            "status",
            "description",
            "notes",
            "publisher",
            "published_at",
            "yank_reason",
            "skills",
            "hosts",
            "credentials",
            "approval_rules",
        ]

    @staticmethod
    def get_approval_rules(bundle_version) -> list[dict]:
        rules = [
            {"skill": entry.skill_version.package.slug, **approval}
            for entry in bundle_version.skills.all()
            for approval in entry.skill_version.approvals
        ]
        return ApprovalRuleSerializer(rules, many=True).data
