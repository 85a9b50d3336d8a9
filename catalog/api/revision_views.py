"""A workspace skill's history in the API: its revisions, one whole, two compared, and
an owner's restore of an earlier one.

Members read them like the skill itself (404 for anyone else); thin callers of
catalog.skill_history and skill_restore.
"""

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.models import SkillRevision, WorkspaceSkill
from catalog.services.workspace_skills import skill_restore
from catalog.skill_files_display import file_rows
from catalog.skill_history import (
    revision_compare,
    revision_get,
    revision_number,
    revision_summaries,
)
from pixie.core.people.permissions import require_owner
from pixie.core.web.api import InWorkspace
from pixie.core.web.schema import QueryParametersSchema

from .serializers import FieldChangeSerializer, FileChangeSerializer, field_change_data
from .workspace_serializers import SkillSerializer
from .workspace_views import skills_of


class RevisionSummarySerializer(serializers.ModelSerializer):
    origin = serializers.CharField(help_text="catalog, merge, local, rename or import")
    upstream = serializers.SerializerMethodField()
    created_by = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = SkillRevision
        fields = [
            "number",
            "origin",
            "name",
            "short_description",
            "upstream",
            "created_by",
            "created_at",
            "comment",
            "url",
        ]

    def get_upstream(self, revision) -> str | None:
        """The catalog skill version this revision came from, as "package version"."""
        return revision.upstream.label if revision.upstream else None

    def get_created_by(self, revision) -> str | None:
        return revision.created_by.get_username() if revision.created_by else None

    def get_url(self, revision) -> str:
        skill = self.context["skill"]
        return reverse(
            "skill-revision-detail",
            kwargs={
                "workspace": skill.workspace.slug,
                "slug": skill.slug,
                "number": revision.number,
            },
        )


class RevisionSerializer(RevisionSummarySerializer):
    files = serializers.SerializerMethodField()

    class Meta(RevisionSummarySerializer.Meta):
        fields = [
            *RevisionSummarySerializer.Meta.fields,
            "body",
            "frontmatter",
            "approvals",
            "files",
        ]

    def get_files(self, revision) -> list[dict]:
        """Each supporting file: path, size, sha256, mode, executable, media type."""
        return file_rows(revision.files.all())


class ComparisonSerializer(serializers.Serializer):
    before = RevisionSummarySerializer()
    after = RevisionSummarySerializer()
    identical = serializers.BooleanField()
    fields = FieldChangeSerializer(many=True)
    files = FileChangeSerializer(many=True)


def skill_in(view) -> WorkspaceSkill:
    return generics.get_object_or_404(
        WorkspaceSkill.objects.filter(workspace=view.workspace()).select_related(
            "workspace", "head"
        ),
        slug=view.kwargs["slug"],
    )


@extend_schema(summary="A workspace skill's revisions, newest first")
class RevisionList(InWorkspace, generics.ListAPIView):
    history_read = True
    serializer_class = RevisionSummarySerializer

    def get_queryset(self):
        self.skill = skill_in(self)
        return revision_summaries(self.skill)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "skill": getattr(self, "skill", None)}


@extend_schema(summary="One revision of a workspace skill, whole: text, frontmatter, files")
class RevisionDetail(InWorkspace, APIView):
    history_read = True
    serializer_class = RevisionSerializer

    def get(self, request, workspace, slug, number):
        skill = skill_in(self)
        revision = revision_get(skill=skill, number=number)
        return Response(RevisionSerializer(revision, context={"skill": skill}).data)


@extend_schema(
    summary="Two revisions of a workspace skill compared, field by field and file by file",
    parameters=[
        OpenApiParameter(
            "from",
            OpenApiTypes.INT,
            description="The earlier revision (default: the one before `to`)",
        ),
        OpenApiParameter(
            "to", OpenApiTypes.INT, description="The later revision (default: the latest)"
        ),
    ],  # fmt: skip
    responses={200: ComparisonSerializer},
)
class RevisionCompare(InWorkspace, APIView):
    history_read = True
    schema = QueryParametersSchema()

    def get(self, request, workspace, slug):
        skill = skill_in(self)
        comparison = revision_compare(
            skill=skill,
            before=revision_number(request.query_params.get("from"), "from"),
            after=revision_number(request.query_params.get("to"), "to"),
        )
        context = {"skill": skill}
        return Response(
            {
                "before": RevisionSummarySerializer(comparison.before, context=context).data,
                "after": RevisionSummarySerializer(comparison.after, context=context).data,
                "identical": comparison.identical,
                "fields": [field_change_data(change) for change in comparison.fields],
                "files": comparison.files,
            }
        )


class RevisionRestore(InWorkspace, APIView):
    @extend_schema(
        summary="Make an earlier revision the skill's latest again (a new local edit)",
        request=None,
        responses={200: SkillSerializer},
    )
    def post(self, request, workspace, slug, number):
        skill = skill_in(self)
        require_owner(user=request.user, workspace=skill.workspace, role=self.role)
        skill_restore(skill=skill, number=number, actor=request.user)
        restored = generics.get_object_or_404(skills_of(skill.workspace), pk=skill.pk)
        return Response(SkillSerializer(restored).data)
