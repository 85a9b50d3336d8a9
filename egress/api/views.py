"""A workspace's egress rules and credentials; an owner confirms a credential is set."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from egress.api.serializers import CredentialSerializer, EgressRuleSerializer
from egress.models import CredentialRequirement, EgressRule
from egress.services import credential_confirm
from pixie.core.web.api import InWorkspace


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
