"""A workspace's skills: list, read, edit, and their files.

Every view resolves the workspace through workspace_for_member (404 for anyone
not a member) and calls one service or selector.
"""

from django.db.models import Prefetch
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.bundle_files import SKILL_FILE
from catalog.models import RevisionFile, WorkspaceSkill
from catalog.selectors import skill_file_get
from catalog.services.workspace_skills import skill_edit
from catalog.skill_files_display import revision_skill_md
from pixie.core.errors import ValidationFailed
from pixie.core.people.permissions import require_owner
from pixie.core.web.api import InWorkspace

from .files import FILE_RESPONSES, file_response
from .workspace_serializers import SkillEditSerializer, SkillSerializer


def skills_of(workspace):
    return (
        WorkspaceSkill.objects.filter(workspace=workspace)
        .select_related(
            "workspace", "head__upstream__package", "installation__bundle_version__bundle"
        )
        .prefetch_related(Prefetch("head__files", queryset=RevisionFile.objects.order_by("path")))
    )


class SkillList(InWorkspace, generics.ListAPIView):
    serializer_class = SkillSerializer

    def get_queryset(self):
        return skills_of(self.workspace()).order_by("slug")


class SkillDetail(InWorkspace, generics.RetrieveAPIView):
    serializer_class = SkillSerializer

    def get_object(self):
        return generics.get_object_or_404(skills_of(self.workspace()), slug=self.kwargs["slug"])

    @extend_schema(request=SkillEditSerializer, responses={200: SkillSerializer})
    def patch(self, request, workspace, slug):
        skill = self.get_object()
        require_owner(user=request.user, workspace=skill.workspace, role=self.role)
        serializer = SkillEditSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if not serializer.validated_data:
            raise ValidationFailed("Send at least one of name, short_description, body")
        skill_edit(skill=skill, actor=request.user, **serializer.validated_data)
        return Response(SkillSerializer(self.get_object()).data)


@extend_schema(
    summary="One file of a workspace skill's head revision (SKILL.md too)",
    responses=FILE_RESPONSES,
)
class SkillFile(InWorkspace, APIView):
    def get(self, request, workspace, slug, path):
        skill = generics.get_object_or_404(
            WorkspaceSkill.objects.filter(workspace=self.workspace()).select_related(
                "head__upstream__package"
            ),
            slug=slug,
        )
        if skill.head is None:
            raise Http404(f"@{slug} has no revision.")
        if path == SKILL_FILE:
            return file_response(path, revision_skill_md(skill).encode("utf-8"), "text/markdown")
        found = skill_file_get(
            files=skill.head.files.all(), path=path, owner=f"@{slug} r{skill.head.number}"
        )
        return file_response(path, bytes(found.blob.content), found.media_type, etag=found.blob_id)
