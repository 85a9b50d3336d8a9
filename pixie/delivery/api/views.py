"""Delivery's API: a workspace's delivery tokens (its owners make, rotate and revoke them;
members and auditors read them) and which clients run what. Thin callers of the services
and selectors the page uses."""

from __future__ import annotations

from django.http import Http404
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_variables
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.models import Agent
from pixie.core.people.members import site_url_for
from pixie.core.people.permissions import require_owner
from pixie.core.web.api import InWorkspace, StrictSerializer

from ..models import DeliveryToken
from ..pages import delivery_url
from ..selectors import ONE_CLIENT, delivery_overview
from ..tokens import delivery_token_create, delivery_token_revoke, delivery_token_rotate


class DeliveryTokenSerializer(serializers.ModelSerializer):
    agent = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)
    clients = serializers.IntegerField(source="client_count", read_only=True, default=0)

    class Meta:
        model = DeliveryToken
        fields = [
            "id", "name", "prefix", "agent", "created_by", "created_at", "last_used_at",
            "revoked_at", "clients",
        ]  # fmt: skip


class DeliveryTokenMadeSerializer(DeliveryTokenSerializer):
    url = serializers.CharField(
        read_only=True,
        help_text="The delivery URL, token included: shown this once. Give it whole to "
        "`npx skills add`.",
    )

    class Meta(DeliveryTokenSerializer.Meta):
        fields = [*DeliveryTokenSerializer.Meta.fields, "url"]


class DeliveryTokenRequestSerializer(StrictSerializer):
    name = serializers.CharField(max_length=80)
    agent = serializers.SlugField(
        required=False,
        allow_blank=True,
        default="",
        help_text="The agent whose skills it delivers; empty: every advertised skill.",
    )


class HoldingSerializer(serializers.Serializer):
    skill = serializers.CharField(source="slug")
    revision = serializers.IntegerField()
    digest = serializers.CharField()
    current = serializers.BooleanField(help_text="What its token serves now.")
    served = serializers.BooleanField(help_text="False: its token no longer serves it.")
    yanked = serializers.CharField(help_text="The yanked bundle versions it came from, if any.")
    from_update = serializers.BooleanField(help_text="Last fetched by `skills update`.")
    last_seen = serializers.DateTimeField()


class ClientSerializer(serializers.Serializer):
    user_agent = serializers.CharField(source="client.user_agent")
    kind = serializers.CharField(help_text="Claude Code, the skills CLI (node), or the agent.")
    network = serializers.CharField(source="client.network")
    token = serializers.IntegerField(source="token.pk")
    token_name = serializers.CharField(source="token.name")
    first_seen = serializers.DateTimeField(source="client.first_seen")
    last_seen = serializers.DateTimeField(source="client.last_seen")
    behind = serializers.SerializerMethodField()
    holds = HoldingSerializer(source="holdings", many=True)

    def get_behind(self, row) -> bool:
        return bool(row.behind)


class ClientsSerializer(serializers.Serializer):
    about = serializers.CharField()
    behind = serializers.ListField(child=serializers.CharField())
    clients = ClientSerializer(many=True)
    more_clients = serializers.IntegerField()


def _agent(workspace, slug: str):
    if not slug:
        return None
    agent = Agent.objects.filter(workspace=workspace, slug=slug).first()
    if agent is None:
        raise Http404("No such agent.")
    return agent


def _token(workspace, pk) -> DeliveryToken:
    token = DeliveryToken.objects.filter(workspace=workspace, pk=pk, revoked_at=None).first()
    if token is None:
        raise Http404("No such delivery token.")
    return token


@sensitive_variables("secret")
def _made(request, token, secret) -> Response:
    token.url = delivery_url(site_url_for(request), secret)
    response = Response(DeliveryTokenMadeSerializer(token).data, status=status.HTTP_201_CREATED)
    response["Cache-Control"] = "no-store"
    return response


class DeliveryTokens(InWorkspace, APIView):
    audit_read = True

    @extend_schema(
        responses=DeliveryTokenSerializer(many=True),
        parameters=[OpenApiParameter("agent", str, description="Only this agent's tokens.")],
    )
    def get(self, request, workspace):
        """The live delivery tokens (never their secrets), with their clients' counts."""
        workspace = self.workspace()
        overview = delivery_overview(workspace, agent=_agent(workspace, request.GET.get("agent")))
        return Response(DeliveryTokenSerializer(overview.tokens, many=True).data)

    @extend_schema(
        request=DeliveryTokenRequestSerializer, responses={201: DeliveryTokenMadeSerializer}
    )
    @method_decorator(sensitive_variables("secret"))
    def post(self, request, workspace):
        """A new delivery token (owners): its URL, token included, is in this answer only."""
        workspace = self.workspace()
        require_owner(user=request.user, workspace=workspace, role=self.role)
        given = DeliveryTokenRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        token, secret = delivery_token_create(
            workspace=workspace,
            actor=request.user,
            name=given.validated_data["name"],
            agent=_agent(workspace, given.validated_data["agent"]),
        )
        return _made(request, token, secret)


class DeliveryTokenDetail(InWorkspace, APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, workspace, pk):
        """Revoke the token (owners): its URL answers 404 from the next request."""
        workspace = self.workspace()
        require_owner(user=request.user, workspace=workspace, role=self.role)
        delivery_token_revoke(token=_token(workspace, pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliveryTokenRotate(InWorkspace, APIView):
    @extend_schema(request=None, responses={201: DeliveryTokenMadeSerializer})
    @method_decorator(sensitive_variables("secret"))
    def post(self, request, workspace, pk):
        """Revoke the token and make its replacement, same name and scope (owners)."""
        workspace = self.workspace()
        require_owner(user=request.user, workspace=workspace, role=self.role)
        token, secret = delivery_token_rotate(token=_token(workspace, pk), actor=request.user)
        return _made(request, token, secret)


class DeliveryClients(InWorkspace, APIView):
    audit_read = True

    @extend_schema(
        responses=ClientsSerializer,
        parameters=[OpenApiParameter("agent", str, description="Only this agent's clients.")],
    )
    def get(self, request, workspace):
        """Which clients run what: each client's holdings, and the skills some are behind
        on ("2 clients behind since plan #41 upgraded to 2.2.0")."""
        workspace = self.workspace()
        overview = delivery_overview(workspace, agent=_agent(workspace, request.GET.get("agent")))
        data = {
            "about": ONE_CLIENT,
            "behind": [behind.words for behind in overview.behind],
            "clients": overview.clients,
            "more_clients": overview.more_clients,
        }
        return Response(ClientsSerializer(data).data)
