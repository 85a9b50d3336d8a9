from django.contrib import admin, messages

from pixie.core.errors import PixieError
from pixie.core.web.admin_scoping import (
    MemberWorkspaceFilter,
    WorkspaceScopedAdmin,
    owned_workspace_ids,
    person,
)

from .models import CredentialRequirement, EgressRule
from .services import credential_confirm


@admin.register(EgressRule)
class EgressRuleAdmin(WorkspaceScopedAdmin):
    list_display = ["host", "port", "workspace", "credential_name", "approved_by", "approved_at"]
    list_filter = [MemberWorkspaceFilter]
    search_fields = ["host", "credential_name"]
    list_select_related = ["workspace", "approved_by"]
    # Who approved, by name (the user pages are superusers'); rules come through plans.
    fields = ["workspace", "host", "port", "purpose", "credential_name", "approved",
              "approved_at", "plan"]  # fmt: skip
    readonly_fields = ["approved", "approved_at"]

    @admin.display(description="Approved by")
    def approved(self, rule):
        return person(rule.approved_by)


@admin.register(CredentialRequirement)
class CredentialRequirementAdmin(WorkspaceScopedAdmin):
    list_display = ["name", "workspace", "host", "confirmed", "confirmed_by"]
    list_filter = ["confirmed", MemberWorkspaceFilter]
    search_fields = ["name"]
    list_select_related = ["workspace", "confirmed_by"]
    fields = ["workspace", "name", "host", "purpose", "confirmed", "confirmed_who",
              "confirmed_at"]  # fmt: skip
    readonly_fields = ["confirmed_who", "confirmed_at"]
    actions = ["confirm_supplied"]

    @admin.display(description="Confirmed by")
    def confirmed_who(self, requirement):
        return person(requirement.confirmed_by)

    def get_actions(self, request):
        # Confirming is an owner's: who owns no workspace is not offered it.
        actions = super().get_actions(request)
        if not owned_workspace_ids(request.user):
            actions.pop("confirm_supplied", None)
        return actions

    @admin.action(description="Confirm the selected credentials are supplied (outside Pixie)")
    def confirm_supplied(self, request, queryset):
        for requirement in queryset.select_related("workspace"):
            try:
                credential_confirm(
                    workspace=requirement.workspace, name=requirement.name, actor=request.user
                )
            except PixieError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"{requirement.name} confirmed as supplied.")
