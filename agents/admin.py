from django.contrib import admin

from pixie.admin_scoping import WorkspaceScopedAdmin

from .models import Agent, AgentSkill, Turn


class AgentSkillInline(admin.TabularInline):
    model = AgentSkill
    extra = 0
    fields = ["position", "skill", "pinned_revision", "enabled"]
    # Attaching and pinning go through the agents' services (their own issue);
    # here the order and the switch are shown, the references read-only.
    readonly_fields = ["skill", "pinned_revision"]

    def has_add_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return (
            super().get_queryset(request).select_related("agent", "skill", "pinned_revision__skill")
        )


@admin.register(Agent)
class AgentAdmin(WorkspaceScopedAdmin):
    list_display = ["name", "slug", "workspace", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["name", "slug"]
    list_select_related = ["workspace"]
    inlines = [AgentSkillInline]


@admin.register(Turn)
class TurnAdmin(WorkspaceScopedAdmin):
    workspace_field = "agent__workspace"
    list_display = ["__str__", "agent", "outcome", "started_at", "finished_at"]
    list_filter = ["outcome"]
    list_select_related = ["agent__workspace"]
