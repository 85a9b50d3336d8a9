"""Members and API tokens through the API.

/api/workspaces/{ws}/members/          GET (members) · POST (owners): make a login
/api/workspaces/{ws}/invitations/      GET (owners): those waiting · POST (owners): invite
/api/workspaces/{ws}/invitations/{id}/ DELETE (owners): revoke one
/api/workspaces/{ws}/members/{user}/   PATCH (owners): the role · DELETE (owners): remove
/api/workspaces/{ws}/tokens/           GET (owners): the live tokens that reach it
/api/workspaces/{ws}/tokens/{id}/      DELETE (owners): revoke one
/api/tokens/                           GET: your own · POST: make one (the secret, once)
/api/tokens/{id}/                      DELETE: revoke your own
"""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from pixie.core.models import ApiToken, Invitation, Membership, Workspace
from pixie.core.people.invitations import invitation_make, invitation_revoke, invitations_waiting
from pixie.core.people.members import (
    member_add,
    member_remove,
    member_role_change,
    members_of,
    site_url_for,
)
from pixie.core.people.permissions import require_owner
from pixie.core.people.tokens import token_create, token_revoke, tokens_of_workspace
from pixie.core.web.api import InWorkspace, StrictSerializer


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    email = serializers.EmailField(source="user.email", read_only=True)
    joined_at = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Membership
        fields = ["username", "email", "role", "joined_at"]


class MemberAddSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Membership.Role.choices, default=Membership.Role.MEMBER)
    create = serializers.BooleanField(
        default=True,
        help_text="A new login is made (no password: the answer holds a one-time link the "
        "person opens to set one; Pixie sends nothing). False is refused: someone who may "
        "have a login already is invited (invitations/).",
    )
    email = serializers.EmailField(required=False, default="", allow_blank=True)


class MemberAddedSerializer(MemberSerializer):
    password_link = serializers.CharField(read_only=True)

    class Meta(MemberSerializer.Meta):
        fields = [*MemberSerializer.Meta.fields, "password_link"]


class RoleSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=Membership.Role.choices)


class MemberList(InWorkspace, generics.ListAPIView):
    serializer_class = MemberSerializer

    def get_queryset(self):
        return members_of(self.workspace())

    @extend_schema(request=MemberAddSerializer, responses={201: MemberAddedSerializer})
    def post(self, request, workspace):
        given = MemberAddSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        added = member_add(
            workspace=self.workspace(), actor=request.user, site_url=site_url_for(request),
            **given.validated_data,
        )  # fmt: skip
        added.membership.password_link = added.password_link
        return Response(
            MemberAddedSerializer(added.membership).data, status=status.HTTP_201_CREATED
        )


class MemberDetail(InWorkspace, APIView):
    @extend_schema(request=RoleSerializer, responses=MemberSerializer)
    def patch(self, request, workspace, username):
        given = RoleSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        membership = member_role_change(
            workspace=self.workspace(), actor=request.user, username=username,
            role=given.validated_data["role"],
        )  # fmt: skip
        return Response(MemberSerializer(membership).data)

    @extend_schema(responses={204: None})
    def delete(self, request, workspace, username):
        member_remove(workspace=self.workspace(), actor=request.user, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationSerializer(serializers.ModelSerializer):
    invited_by = serializers.CharField(source="invited_by.username", default=None, read_only=True)

    class Meta:
        model = Invitation
        fields = ["id", "email", "role", "invited_by", "created_at", "expires_at"]


class InvitedSerializer(InvitationSerializer):
    link = serializers.CharField(
        read_only=True, help_text="Shown this once: give it to the person (Pixie sends nothing)."
    )

    class Meta(InvitationSerializer.Meta):
        fields = [*InvitationSerializer.Meta.fields, "link"]


class InviteSerializer(StrictSerializer):
    email = serializers.CharField(max_length=254)
    role = serializers.ChoiceField(choices=Membership.Role.choices, default=Membership.Role.MEMBER)


class WorkspaceInvitations(InWorkspace, generics.ListAPIView):
    serializer_class = InvitationSerializer

    def get_queryset(self):
        workspace = self.workspace()
        require_owner(user=self.request.user, workspace=workspace, role=self.role)
        return invitations_waiting(workspace)

    @extend_schema(request=InviteSerializer, responses={201: InvitedSerializer})
    def post(self, request, workspace):
        given = InviteSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        invited = invitation_make(
            workspace=self.workspace(), actor=request.user, site_url=site_url_for(request),
            **given.validated_data,
        )  # fmt: skip
        invited.invitation.link = invited.link
        response = Response(
            InvitedSerializer(invited.invitation).data, status=status.HTTP_201_CREATED
        )
        response["Cache-Control"] = "no-store"
        return response


class WorkspaceInvitation(InWorkspace, APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, workspace, pk):
        invitation_revoke(workspace=self.workspace(), actor=request.user, invitation_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    workspace = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = ApiToken
        fields = [
            "id", "name", "prefix", "username", "workspace", "read_only", "created_at",
            "last_used_at", "revoked_at",
        ]  # fmt: skip


class TokenMadeSerializer(TokenSerializer):
    secret = serializers.CharField(read_only=True, help_text="Shown this once; keep it safe.")

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "secret"]


class TokenRequestSerializer(StrictSerializer):
    name = serializers.CharField(max_length=80)
    workspace = serializers.SlugField(
        max_length=64, required=False, allow_null=True, default=None,
        help_text="Limit the token to this workspace (one you belong to).",
    )  # fmt: skip
    read_only = serializers.BooleanField(default=False)


class MyTokens(generics.ListAPIView):
    serializer_class = TokenSerializer

    def get_queryset(self):
        return ApiToken.objects.filter(user=self.request.user).select_related("user", "workspace")

    @extend_schema(request=TokenRequestSerializer, responses={201: TokenMadeSerializer})
    def post(self, request):
        given = TokenRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        slug = given.validated_data["workspace"]
        workspace = None
        if slug:
            workspace = Workspace.objects.filter(slug=slug).first()
            if workspace is None:
                raise Http404("No such workspace.")
        token, secret = token_create(
            user=request.user, actor=request.user, name=given.validated_data["name"],
            workspace=workspace, read_only=given.validated_data["read_only"],
            via=request.auth if isinstance(request.auth, ApiToken) else None,
        )  # fmt: skip
        token.secret = secret
        response = Response(TokenMadeSerializer(token).data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


class MyToken(APIView):
    def offers(self, method: str) -> bool:
        """The browsable API offers to revoke a person's own token only
        (pixie.core.web.api.PixieBrowsableAPI)."""
        return ApiToken.objects.filter(pk=self.kwargs["pk"], user=self.request.user).exists()

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        token = ApiToken.objects.filter(pk=pk, user=request.user).first()
        if token is None:
            raise Http404("No such token.")
        token_revoke(token=token, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WorkspaceTokens(InWorkspace, generics.ListAPIView):
    serializer_class = TokenSerializer

    def get_queryset(self):
        workspace = self.workspace()
        require_owner(user=self.request.user, workspace=workspace, role=self.role)
        return tokens_of_workspace(workspace)


class WorkspaceToken(InWorkspace, APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, workspace, pk):
        workspace = self.workspace()
        require_owner(user=request.user, workspace=workspace, role=self.role)
        token = tokens_of_workspace(workspace).filter(pk=pk).first()
        if token is None:
            raise Http404("No such token.")
        token_revoke(token=token, actor=request.user, workspace=workspace)
        return Response(status=status.HTTP_204_NO_CONTENT)
