from django.contrib import admin

from pixie.admin_scoping import WorkspaceScopedAdmin

from .models import CredentialRequirement, EgressRule


@admin.register(EgressRule)
class EgressRuleAdmin(WorkspaceScopedAdmin):
    list_display = ["host", "port", "workspace", "credential_name", "approved_by", "approved_at"]
    list_filter = ["workspace"]
    search_fields = ["host", "credential_name"]
    list_select_related = ["workspace", "approved_by"]


@admin.register(CredentialRequirement)
class CredentialRequirementAdmin(WorkspaceScopedAdmin):
    list_display = ["name", "workspace", "host", "confirmed", "confirmed_by"]
    list_filter = ["confirmed", "workspace"]
    search_fields = ["name"]
    list_select_related = ["workspace", "confirmed_by"]
