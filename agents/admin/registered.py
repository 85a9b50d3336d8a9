from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from agents.admin.pages import AgentPages
from agents.models import Agent, AgentSkill, Turn, TurnSkill
from agents.selectors import skill_stats
from catalog.admin.registered import WorkspaceSkillAdmin
from pixie.core.web.admin_scoping import (
    MemberWorkspaceFilter,
    ReadOnlyInline,
    ServiceManagedAdmin,
    WorkspaceScopedAdmin,
    owned_workspace_ids,
)


class AgentSkillInline(ReadOnlyInline):
    model = AgentSkill
    fields = ["position", "skill", "pinned_revision", "enabled", "override"]
    readonly_fields = fields
    show_change_link = False

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("agent", "skill", "pinned_revision__skill", "override__agent_skill")
        )


@admin.register(Agent)
class AgentAdmin(AgentPages, WorkspaceScopedAdmin):
    list_display = ["name", "slug", "workspace", "created_at"]
    list_filter = [MemberWorkspaceFilter]
    search_fields = ["name", "slug"]
    list_select_related = ["workspace"]
    inlines = [AgentSkillInline]
    change_form_template = "admin/agents/agent/change_form.html"
    change_list_template = "admin/agents/agent/change_list.html"

    def get_urls(self):
        return self.agent_urls() + super().get_urls()

    def changelist_view(self, request, extra_context=None):
        extra = {"owns_a_workspace": bool(owned_workspace_ids(request.user))}
        return super().changelist_view(request, {**extra, **(extra_context or {})})


class TurnSkillInline(ReadOnlyInline):
    model = TurnSkill
    fields = ["position", "skill_revision", "override"]
    readonly_fields = fields
    show_change_link = False

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("revision__skill", "override__agent_skill")
            .order_by("position")
        )

    @admin.display(description="Revision it ran")
    def skill_revision(self, obj):
        url = reverse(
            "admin:catalog_workspaceskill_text",
            args=[obj.revision.skill_id, obj.revision.number],
        )
        return format_html('<a href="{}">{}</a>', url, obj.revision)


@admin.register(Turn)
class TurnAdmin(ServiceManagedAdmin):
    """Turns are history: written by turn_start, never edited or deleted here."""

    workspace_field = "agent__workspace"
    list_display = ["__str__", "agent", "outcome", "started_at", "finished_at"]
    list_filter = [MemberWorkspaceFilter, "outcome"]
    list_select_related = ["agent__workspace"]
    inlines = [TurnSkillInline]
    readonly_fields = ["agent", "outcome", "started_at", "finished_at"]


def _skill_stats(skill) -> dict:
    return {"stats": skill_stats(skill)}


# A skill's page shows how often agents used each revision; catalog cannot import agents.
WorkspaceSkillAdmin.page_context.append(_skill_stats)
