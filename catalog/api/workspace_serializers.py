"""A workspace's skills as the API shows and edits them."""

from django.urls import reverse
from rest_framework import serializers

from catalog.models import WorkspaceSkill
from catalog.skill_files_display import file_rows, size_of
from catalog.validators import SKILL_DESCRIPTION_MAX
from pixie.core.web.api import StrictSerializer


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
