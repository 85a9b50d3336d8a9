"""Agents' API: attachments, composed prompt, menu, turns. Thin callers of services."""

from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import selectors, services
from agents.api.serializers import (
    AgentChangeSerializer,
    AgentCreateSerializer,
    AgentSerializer,
    AttachmentChangeSerializer,
    AttachSerializer,
    OrderSerializer,
    PromoteSerializer,
    TurnFinishSerializer,
    TurnSerializer,
)
from agents.models import Agent, AgentSkill, Turn, TurnSkill
from agents.promote import assembly_promote
from agents.prompt_history import moment, prompt_compare
from catalog.content_diff import line_diff
from catalog.models import WorkspaceSkill
from pixie.core.web.api import InWorkspace
from pixie.core.web.schema import QueryParametersSchema


def agents_of(workspace):
    return Agent.objects.filter(workspace=workspace).prefetch_related(_attachments_prefetch())


def _attachments_prefetch():
    from django.db.models import Prefetch

    return Prefetch(
        "agent_skills",
        queryset=AgentSkill.objects.select_related("skill__head", "pinned_revision").order_by(
            "position", "id"
        ),
    )


class AgentList(InWorkspace, generics.ListAPIView):
    serializer_class = AgentSerializer

    def get_queryset(self):
        return agents_of(self.workspace()).order_by("name")

    @extend_schema(request=AgentCreateSerializer, responses={201: AgentSerializer})
    def post(self, request, workspace):
        """A new agent, with no skills yet (owners)."""
        asked = AgentCreateSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        agent = services.agent_create(
            workspace=self.workspace(), actor=request.user, **asked.validated_data
        )
        return Response(AgentSerializer(agents_of(self.workspace()).get(pk=agent.pk)).data, 201)


class AgentView(InWorkspace):
    def agent(self) -> Agent:
        return generics.get_object_or_404(agents_of(self.workspace()), slug=self.kwargs["agent"])

    def attachment(self) -> AgentSkill:
        return generics.get_object_or_404(
            AgentSkill.objects.select_related("agent__workspace", "skill__head"),
            agent=self.agent(),
            skill__slug=self.kwargs["skill"],
        )

    def fresh(self):
        return AgentSerializer(self.agent()).data


class AgentDetail(AgentView, APIView):
    @extend_schema(responses=AgentSerializer)
    def get(self, request, workspace, agent):
        return Response(self.fresh())

    @extend_schema(request=AgentChangeSerializer, responses=AgentSerializer)
    def patch(self, request, workspace, agent):
        """Rename the agent or change its system prompt (owners; its slug stays)."""
        asked = AgentChangeSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        services.agent_update(agent=self.agent(), actor=request.user, **asked.validated_data)
        return Response(self.fresh())


class AgentSkills(AgentView, APIView):
    @extend_schema(request=AttachSerializer, responses={201: AgentSerializer})
    def post(self, request, workspace, agent):
        data = _valid(AttachSerializer, request)
        skill = generics.get_object_or_404(
            WorkspaceSkill, workspace=self.workspace(), slug=data["skill"]
        )
        services.agent_skill_attach(
            agent=self.agent(), skill=skill, actor=request.user, pinned=data["pinned"]
        )
        return Response(self.fresh(), status=201)

    @extend_schema(request=OrderSerializer, responses=AgentSerializer)
    def put(self, request, workspace, agent):
        data = _valid(OrderSerializer, request)
        services.agent_skills_reorder(agent=self.agent(), slugs=data["order"], actor=request.user)
        return Response(self.fresh())


class AgentSkillDetail(AgentView, APIView):
    @extend_schema(request=AttachmentChangeSerializer, responses=AgentSerializer)
    def patch(self, request, workspace, agent, skill):
        data = _valid(AttachmentChangeSerializer, request)
        attachment = self.attachment()
        if "enabled" in data or "pinned_revision" in data:
            pin = data.get("pinned_revision", None)
            services.agent_skill_update(
                attachment=attachment,
                actor=request.user,
                enabled=data.get("enabled"),
                pin=None if "pinned_revision" not in data else (pin if pin else False),
            )
        if "override" in data:
            services.agent_skill_override(
                attachment=attachment, body=data["override"], actor=request.user
            )
        return Response(self.fresh())

    @extend_schema(request=None, responses={200: AgentSerializer})
    def delete(self, request, workspace, agent, skill):
        services.agent_skill_detach(attachment=self.attachment(), actor=request.user)
        return Response(self.fresh())


class PromotedSerializer(serializers.Serializer):
    bundle = serializers.CharField()
    version = serializers.CharField()
    status = serializers.CharField()
    catalog_review = serializers.CharField(
        help_text="pending: only this workspace sees it until an operator approves it."
    )
    catalog_review_flags = serializers.ListField(
        child=serializers.CharField(), help_text="Why it was held for review, if it was."
    )


class AgentPromote(AgentView, APIView):
    @extend_schema(request=PromoteSerializer, responses={201: PromotedSerializer})
    def post(self, request, workspace, agent):
        published = assembly_promote(
            agent=self.agent(), actor=request.user, **_valid(PromoteSerializer, request)
        )
        return Response(
            {
                "bundle": published.bundle.slug,
                "version": published.version,
                "status": published.status,
                "catalog_review": published.catalog_review,
                "catalog_review_flags": published.catalog_review_flags,
            },
            status=201,
        )


class PromptFileSerializer(serializers.Serializer):
    path = serializers.CharField()
    size = serializers.IntegerField()
    executable = serializers.BooleanField()


class PromptPartSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    revision = serializers.IntegerField()
    pinned = serializers.BooleanField()
    latest = serializers.IntegerField(help_text="The skill's latest revision.")
    behind = serializers.BooleanField(
        help_text="Pinned to a revision older than the latest: a repoint would move it."
    )
    overridden = serializers.BooleanField()
    body = serializers.CharField()
    unresolved = serializers.ListField(child=serializers.CharField())
    files = PromptFileSerializer(many=True, help_text="Supporting files, listed and not inlined.")
    files_line = serializers.CharField(help_text="The line the prompt text adds after the body.")


class PromptSerializer(serializers.Serializer):
    system_prompt = serializers.CharField()
    parts = PromptPartSerializer(many=True)
    unresolved = serializers.ListField(child=serializers.CharField())
    text = serializers.CharField()


class RanSkillSerializer(serializers.Serializer):
    slug = serializers.CharField()
    revision = serializers.IntegerField()
    overridden = serializers.BooleanField(help_text="It ran the agent's own body.")


class RanPromptSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    turn = serializers.IntegerField(source="turn.pk", default=None, allow_null=True)
    system_prompt = serializers.CharField()
    skills = RanSkillSerializer(many=True)
    text = serializers.CharField()


class PromptSkillChangeSerializer(serializers.Serializer):
    slug = serializers.CharField()
    change = serializers.ChoiceField(
        choices=["added", "removed", "changed", "same", "its own body now",
                 "no longer its own body"]
    )  # fmt: skip
    before = serializers.IntegerField(allow_null=True, help_text="The revision it ran then.")
    after = serializers.IntegerField(allow_null=True)


class PromptComparisonSerializer(serializers.Serializer):
    before = RanPromptSerializer(help_text="What its latest turn by `from` ran.")
    after = RanPromptSerializer(help_text="What its latest turn by `to` ran.")
    identical = serializers.BooleanField()
    skills = PromptSkillChangeSerializer(many=True)
    diff = serializers.SerializerMethodField()

    def get_diff(self, comparison) -> list[str]:
        """The two prompts' texts as a unified diff, line by line."""
        return line_diff(comparison.before.text, comparison.after.text)


class AgentPromptCompare(AgentView, APIView):
    schema = QueryParametersSchema()

    @extend_schema(
        parameters=[
            OpenApiParameter("from", str, description="A day (its end) or a moment, "
                             "2026-12-01T14:30; by default the agent's first turn."),
            OpenApiParameter("to", str, description="A day or a moment; by default now."),
        ],
        responses=PromptComparisonSerializer,
    )  # fmt: skip
    def get(self, request, workspace, agent):
        """The prompt the agent ran at two moments (its latest turn by each), compared."""
        asked = request.query_params
        comparison = prompt_compare(
            self.agent(),
            since=moment(asked["from"], "from") if "from" in asked else None,
            until=moment(asked["to"], "to") if "to" in asked else None,
        )
        return Response(PromptComparisonSerializer(comparison).data)


class MenuItemSerializer(serializers.Serializer):
    slug = serializers.CharField()
    line = serializers.CharField()


class AgentPrompt(AgentView, APIView):
    @extend_schema(responses=PromptSerializer)
    def get(self, request, workspace, agent):
        return Response(PromptSerializer(selectors.composed_prompt(self.agent())).data)


class AgentMenu(AgentView, APIView):
    @extend_schema(responses=MenuItemSerializer(many=True))
    def get(self, request, workspace, agent):
        return Response(MenuItemSerializer(selectors.planner_menu(self.agent()), many=True).data)


def turns_of(workspace):
    return (
        Turn.objects.filter(agent__workspace=workspace)
        .select_related("agent")
        .prefetch_related(
            Prefetch(
                "turn_skills",
                queryset=TurnSkill.objects.select_related("revision__skill", "override").order_by(
                    "position"
                ),
            )
        )
    )


class AgentTurns(AgentView, APIView):
    member_writes = frozenset({"POST"})  # a member starts and finishes runs

    @extend_schema(request=None, responses={201: TurnSerializer})
    def post(self, request, workspace, agent):
        turn = services.turn_start(agent=self.agent())
        return Response(TurnSerializer(turns_of(self.workspace()).get(pk=turn.pk)).data, status=201)


class TurnDetail(InWorkspace, APIView):
    @extend_schema(responses=TurnSerializer)
    def get(self, request, workspace, pk):
        turn = generics.get_object_or_404(turns_of(self.workspace()), pk=pk)
        return Response(TurnSerializer(turn).data)


class TurnFinish(InWorkspace, APIView):
    member_writes = frozenset({"POST"})  # a member starts and finishes runs

    @extend_schema(request=TurnFinishSerializer, responses=TurnSerializer)
    def post(self, request, workspace, pk):
        turn = generics.get_object_or_404(turns_of(self.workspace()), pk=pk)
        data = _valid(TurnFinishSerializer, request)
        services.turn_finish(turn=turn, outcome=data["outcome"])
        return Response(TurnSerializer(turns_of(self.workspace()).get(pk=pk)).data)


class StatsRowSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    last_7_days = serializers.IntegerField()
    last_30_days = serializers.IntegerField()


class SkillStats(InWorkspace, APIView):
    @extend_schema(responses=StatsRowSerializer(many=True))
    def get(self, request, workspace, slug):
        skill = generics.get_object_or_404(WorkspaceSkill, workspace=self.workspace(), slug=slug)
        return Response(selectors.skill_stats(skill))


def _valid(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
