"""A workspace's plans, skills, egress rules, credentials and installations.

Every view resolves the workspace through workspace_for_member (404 for anyone
not a member) and calls one service or selector.
"""

from django.db.models import Prefetch
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.models import Agent
from catalog.bundle_files import SKILL_FILE
from catalog.models import Installation, Plan, RevisionFile, WorkspaceSkill
from catalog.selectors import skill_file_get, versions_visible_to_workspace
from catalog.services.plans import plan_approve, plan_create, plan_reject
from catalog.services.repoint import repoint_create
from catalog.services.workspace_skills import skill_edit
from catalog.skill_files_display import revision_skill_md
from egress.models import CredentialRequirement, EgressRule
from egress.services import credential_confirm
from pixie.api import InWorkspace
from pixie.errors import ValidationFailed
from pixie.permissions import require_owner

from .files import FILE_RESPONSES, file_response
from .workspace_serializers import (
    CredentialSerializer,
    EgressRuleSerializer,
    InstallationSerializer,
    PlanRequestSerializer,
    PlanSerializer,
    PlanSummarySerializer,
    RejectSerializer,
    SkillEditSerializer,
    SkillSerializer,
)


def plans_of(workspace):
    return Plan.objects.filter(workspace=workspace).select_related(
        "bundle_version__bundle", "installation__bundle", "created_by", "decided_by"
    )


class PlanList(InWorkspace, generics.ListAPIView):
    serializer_class = PlanSummarySerializer

    def get_queryset(self):
        return plans_of(self.workspace())

    @extend_schema(request=PlanRequestSerializer, responses={201: PlanSerializer})
    def post(self, request, workspace):
        ws = self.workspace()
        serializer = PlanRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        agents = list(Agent.objects.filter(workspace=ws, slug__in=data["agents"]))
        missing = sorted(set(data["agents"]) - {a.slug for a in agents})
        if missing:
            raise ValidationFailed(
                [f"{ws.name} has no agent {slug!r}" for slug in missing], code="bad_agent"
            )
        if data["kind"] == Plan.Kind.REPOINT:
            installation = None
            if data.get("bundle"):
                installation = Installation.objects.filter(
                    workspace=ws, bundle__slug=data["bundle"]
                ).first()
                if installation is None:
                    raise ValidationFailed(f"{data['bundle']} is not installed in {ws.name}")
            plan = repoint_create(
                workspace=ws, actor=request.user, agents=agents, installation=installation
            )
            return Response(PlanSerializer(plans_of(ws).get(pk=plan.pk)).data, status=201)
        bundle_version = _bundle_version(ws, data)
        plan = plan_create(
            workspace=ws,
            kind=data["kind"],
            bundle_version=bundle_version,
            actor=request.user,
            agents=agents,
            fork_choices=data["fork_choices"],
        )
        return Response(PlanSerializer(plans_of(ws).get(pk=plan.pk)).data, status=201)


def _bundle_version(workspace, data):
    if data["kind"] == Plan.Kind.UNINSTALL:
        installation = (
            Installation.objects.select_related("bundle_version__bundle")
            .filter(workspace=workspace, bundle__slug=data["bundle"])
            .first()
        )
        if installation is None:
            raise ValidationFailed(f"{data['bundle']} is not installed in {workspace.name}")
        return installation.bundle_version
    bundle_version = (
        versions_visible_to_workspace(workspace)
        .select_related("bundle")
        .filter(bundle__slug=data["bundle"], version=data["version"])
        .exclude(status="draft")
        .first()
    )
    if bundle_version is None:
        raise ValidationFailed(f"No published version {data['version']} of {data['bundle']}")
    return bundle_version


class PlanDetail(InWorkspace, generics.RetrieveAPIView):
    serializer_class = PlanSerializer

    def get_object(self):
        return generics.get_object_or_404(plans_of(self.workspace()), pk=self.kwargs["pk"])


class PlanApprove(InWorkspace, APIView):
    @extend_schema(request=None, responses={202: PlanSummarySerializer})
    def post(self, request, workspace, pk):
        plan = generics.get_object_or_404(plans_of(self.workspace()), pk=pk)
        plan_approve(plan=plan, actor=request.user)
        plan = plans_of(self.workspace()).get(pk=pk)
        return Response(PlanSummarySerializer(plan).data, status=status.HTTP_202_ACCEPTED)


class PlanReject(InWorkspace, APIView):
    @extend_schema(request=RejectSerializer, responses={200: PlanSummarySerializer})
    def post(self, request, workspace, pk):
        plan = generics.get_object_or_404(plans_of(self.workspace()), pk=pk)
        serializer = RejectSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        plan_reject(plan=plan, actor=request.user, reason=serializer.validated_data["reason"])
        return Response(PlanSummarySerializer(plans_of(self.workspace()).get(pk=pk)).data)


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


class EgressRuleList(InWorkspace, generics.ListAPIView):
    serializer_class = EgressRuleSerializer

    def get_queryset(self):
        return EgressRule.objects.filter(workspace=self.workspace()).select_related("approved_by")


class CredentialList(InWorkspace, generics.ListAPIView):
    serializer_class = CredentialSerializer

    def get_queryset(self):
        return CredentialRequirement.objects.filter(workspace=self.workspace()).select_related(
            "confirmed_by"
        )


class CredentialConfirm(InWorkspace, APIView):
    @extend_schema(request=None, responses={200: CredentialSerializer})
    def post(self, request, workspace, name):
        requirement = credential_confirm(workspace=self.workspace(), name=name, actor=request.user)
        return Response(CredentialSerializer(requirement).data)


class InstallationList(InWorkspace, generics.ListAPIView):
    serializer_class = InstallationSerializer

    def get_queryset(self):
        return Installation.objects.filter(workspace=self.workspace()).select_related(
            "bundle", "bundle_version", "installed_by"
        )
