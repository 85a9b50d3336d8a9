from django.contrib import admin, messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from pixie.core.errors import PixieError
from pixie.core.web.admin_scoping import (
    MemberWorkspaceFilter,
    WorkspaceScopedAdmin,
    owned_workspace_ids,
    person,
)
from pixie.core.web.pages import WorkspacePages

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
class CredentialRequirementAdmin(WorkspacePages, WorkspaceScopedAdmin):
    list_display = ["name", "workspace", "host", "confirmed", "confirmed_by", "confirm"]
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

    def get_urls(self):
        confirm = self.page_path(
            "<int:requirement_id>/confirm/",
            self.confirm_view,
            "egress_credentialrequirement_confirm",
            post_only=True,
        )
        return [confirm, *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        self._owned = set(owned_workspace_ids(request.user))  # for the Confirm column
        return super().changelist_view(request, extra_context)

    @admin.display(description="Confirm")
    def confirm(self, requirement):
        """A button beside each credential not confirmed yet, for its workspace's owners.
        The list is a form already: the button posts it to the confirm page instead."""
        if requirement.confirmed or requirement.workspace_id not in getattr(self, "_owned", ()):
            return ""
        url = reverse("admin:egress_credentialrequirement_confirm", args=[requirement.pk])
        return format_html(
            '<button type="submit" formaction="{}" formmethod="post" name="back" value="list" '
            'aria-label="Confirm {} is supplied">Confirm</button>',
            url,
            requirement.name,
        )

    def confirm_view(self, request, requirement_id):
        """Confirm one credential is supplied (outside Pixie), from the list, its page or
        the workspace home; back where the owner was."""
        requirement = self.page_object(request, requirement_id)
        try:
            credential_confirm(
                workspace=requirement.workspace, name=requirement.name, actor=request.user
            )
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(request, f"{requirement.name} confirmed as supplied.")
        back = request.POST.get("back")
        if back == "home":
            return redirect("admin:pixie_workspace_dashboard", requirement.workspace_id)
        if back == "list":
            return redirect("admin:egress_credentialrequirement_changelist")
        return redirect("admin:egress_credentialrequirement_change", requirement.pk)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context["may_confirm"] = bool(
            obj is not None
            and not obj.confirmed
            and obj.workspace_id in owned_workspace_ids(request.user)
        )
        return super().render_change_form(request, context, add, change, form_url, obj)

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
