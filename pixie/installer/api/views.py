"""A workspace's plans (ask, read, approve, reject) and installations.

Every view resolves the workspace through workspace_for_member (404 for anyone
not a member) and calls one service or selector.
"""

from django.db.models import Count, Prefetch
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.models import Agent
from catalog.models import Generation, Installation, Plan
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.people.permissions import require_owner
from pixie.core.web.api import InWorkspace
from pixie.installer.api.serializers import (
    GenerationSerializer,
    InstallationSerializer,
    PlanRequestSerializer,
    PlanSerializer,
    PlanSummarySerializer,
    PolicyChangeSerializer,
    PolicySerializer,
    RejectSerializer,
)
from pixie.installer.plan_kinds import KINDS, PlanRequest
from pixie.installer.plans import plan_approve, plan_reject
from pixie.installer.policy import policy_settings, policy_update
from pixie.installer.takeover import plan_take_over


def plans_of(workspace):
    return Plan.objects.filter(workspace=workspace).select_related(
        "bundle_version__bundle__publisher",
        "bundle_version__signing_key",
        "installation__bundle",
        "created_by",
        "decided_by",
        "taken_over_by",
    )


class PlanList(InWorkspace, generics.ListAPIView):
    serializer_class = PlanSummarySerializer

    def get_queryset(self):
        return plans_of(self.workspace())

    def _shown(self, plan) -> dict:
        # With the request: the plan's approval rules are evaluated for its asker.
        return PlanSerializer(plan, context=self.get_serializer_context()).data

    @extend_schema(request=PlanRequestSerializer, responses={201: PlanSerializer})
    def post(self, request, workspace):
        ws = self.workspace()
        serializer = PlanRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        named = set(data["agents"]) | set(data["leave_out"]) | set(data["follow"])
        found = {a.slug: a for a in Agent.objects.filter(workspace=ws, slug__in=named)}
        missing = sorted(named - set(found))
        if missing:
            raise ValidationFailed(
                [f"{ws.name} has no agent {slug!r}" for slug in missing], code=ErrorCode.BAD_AGENT
            )
        agents = [found[slug] for slug in data["agents"]]
        leave_out = [found[slug] for slug in data["leave_out"]]
        asked = PlanRequest(
            workspace=ws,
            actor=request.user,
            bundle=data.get("bundle"),
            version=data.get("version"),
            generation=data.get("generation"),
            agents=agents,
            leave_out=leave_out,
            following=[found[slug] for slug in data["follow"]],
            fork_choices=data["fork_choices"],
        )
        plan = KINDS[data["kind"]].create(asked)
        return Response(self._shown(plans_of(ws).get(pk=plan.pk)), status=201)


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


class PlanTakeOver(InWorkspace, APIView):
    @extend_schema(request=None, responses=PlanSummarySerializer)
    def post(self, request, workspace, pk):
        plan = generics.get_object_or_404(plans_of(self.workspace()), pk=pk)
        plan_take_over(plan=plan, actor=request.user)
        plan = plans_of(self.workspace()).get(pk=pk)
        # The policy of a proposed plan is evaluated for who reads it: the request.
        context = {"request": request, "view": self}
        return Response(PlanSummarySerializer(plan, context=context).data)


class PlanReject(InWorkspace, APIView):
    @extend_schema(request=RejectSerializer, responses={200: PlanSummarySerializer})
    def post(self, request, workspace, pk):
        plan = generics.get_object_or_404(plans_of(self.workspace()), pk=pk)
        serializer = RejectSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        plan_reject(plan=plan, actor=request.user, reason=serializer.validated_data["reason"])
        return Response(PlanSummarySerializer(plans_of(self.workspace()).get(pk=pk)).data)


class WorkspacePolicy(InWorkspace, APIView):
    """The workspace's approval policy: its members read it, its owners change it; each
    change is recorded in the workspace's history."""

    @extend_schema(responses=PolicySerializer)
    def get(self, request, workspace):
        return Response(PolicySerializer(policy_settings(self.workspace())).data)

    @extend_schema(request=PolicyChangeSerializer, responses=PolicySerializer)
    def patch(self, request, workspace):
        ws = self.workspace()
        require_owner(user=request.user, workspace=ws, role=self.role)  # before the body
        serializer = PolicyChangeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ws = policy_update(workspace=ws, actor=request.user, changes=serializer.validated_data)
        return Response(PolicySerializer(policy_settings(ws)).data)


# An installation lists its latest generations; however many plans it has had, a page of
# installations stays the same size. The rest page at InstallationGenerations.
LATEST_GENERATIONS = 20


def _generations():
    return Generation.objects.select_related("bundle_version", "plan__decided_by").order_by(
        "-number"
    )


class InstallationList(InWorkspace, generics.ListAPIView):
    serializer_class = InstallationSerializer

    def get_queryset(self):
        latest = Prefetch(
            "generations",
            queryset=_generations()[:LATEST_GENERATIONS],
            to_attr="latest_generations",
        )
        return (
            Installation.objects.filter(workspace=self.workspace())
            .select_related("bundle", "bundle_version", "installed_by")
            .annotate(generation_count=Count("generations"))
            .order_by("bundle__slug")
            .prefetch_related(latest)
        )


class InstallationGenerations(InWorkspace, generics.ListAPIView):
    """Every generation of the workspace's installation of a bundle, newest first."""

    serializer_class = GenerationSerializer

    def get_queryset(self):
        installation = Installation.objects.filter(
            workspace=self.workspace(), bundle__slug=self.kwargs["bundle"]
        ).first()
        if installation is None:
            raise Http404(f"{self.kwargs['bundle']} is not installed in this workspace.")
        return _generations().filter(installation=installation)
