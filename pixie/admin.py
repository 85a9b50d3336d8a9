from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.html import format_html

from .admin_pages import WorkspacePages
from .admin_scoping import SharedChoicesInline, WorkspaceScopedAdmin
from .dashboard import workspace_dashboard
from .models import Membership, Workspace


class MembershipInline(SharedChoicesInline):
    model = Membership
    extra = 0
    shared_choices = {"user": lambda: get_user_model().objects.order_by("username")}

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "workspace")


@admin.register(Workspace)
class WorkspaceAdmin(WorkspacePages, WorkspaceScopedAdmin):
    workspace_field = "id"
    list_display = ["name", "slug", "created_at", "dashboard_link"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]

    def get_urls(self):
        dashboard = self.page_path(
            "<int:workspace_id>/dashboard/", self.dashboard_view, "pixie_workspace_dashboard"
        )
        return [dashboard, *super().get_urls()]

    @admin.display(description="Dashboard")
    def dashboard_link(self, obj):
        url = reverse("admin:pixie_workspace_dashboard", args=[obj.pk])
        return format_html('<a href="{}">Dashboard of {}</a>', url, obj.name)

    def dashboard_view(self, request, workspace_id):
        """Whoever may read the workspace (its members; superusers) reads its dashboard."""
        workspace = self.page_object(request, workspace_id)
        return self.render_page(
            request,
            "admin/pixie/workspace/dashboard.html",
            f"{workspace.name} at a glance",
            **workspace_dashboard(workspace=workspace),
            workspace=workspace,
            is_owner=self.is_owner(request, workspace),
            original=workspace,
        )
