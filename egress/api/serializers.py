"""A workspace's egress rules and credentials as the API shows them."""

from rest_framework import serializers

from egress.models import CredentialRequirement, EgressRule


class EgressRuleSerializer(serializers.ModelSerializer):
    approved_by = serializers.CharField(
        source="approved_by.username", default=None, allow_null=True
    )

    class Meta:
        model = EgressRule
        fields = [
            "host",
            "port",
            "purpose",
            "credential_name",
            "approved_by",
            "approved_at",
            "plan",
        ]


class CredentialSerializer(serializers.ModelSerializer):
    confirmed_by = serializers.CharField(
        source="confirmed_by.username", default=None, allow_null=True
    )

    class Meta:
        model = CredentialRequirement
        fields = ["name", "host", "purpose", "confirmed", "confirmed_by", "confirmed_at"]
