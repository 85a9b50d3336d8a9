from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from .admin_scoping import SharedChoicesInline, WorkspaceScopedAdmin
from .dashboard import workspace_dashboard
from .models import Membership, Workspace
from .permissions import role_in


class MembershipInline(SharedChoicesInline):
    model = Membership
    extra = 0
    shared_choices = {"user": lambda: get_user_model().objects.order_by("username")}

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "workspace")


@admin.register(Workspace)
class WorkspaceAdmin(WorkspaceScopedAdmin):
    workspace_field = "id"
    list_display = ["name", "slug", "created_at", "dashboard_link"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]

    def get_urls(self):
        view = self.admin_site.admin_view(self.dashboard_view)
        return [
            path("<int:workspace_id>/dashboard/", view, name="pixie_workspace_dashboard"),
            *super().get_urls(),
        ]

    def get_queryset(self, request):
        # The dashboard is its members' (a superuser of another workspace gets 404 there):
        # the list links it for them only.
        members = Membership.objects.filter(workspace=OuterRef("pk"), user=request.user)
        return super().get_queryset(request).annotate(reader_is_member=Exists(members))

    @admin.display(description="Dashboard")
    def dashboard_link(self, obj):
        if not obj.reader_is_member:
            return "—"
        url = reverse("admin:pixie_workspace_dashboard", args=[obj.pk])
        return format_html('<a href="{}">Dashboard of {}</a>', url, obj.name)

    def dashboard_view(self, request, workspace_id):
        """Members only; anyone else gets 404, as for all of a workspace's data."""
        workspace = get_object_or_404(Workspace, pk=workspace_id)
        role = role_in(user=request.user, workspace=workspace)
        if role is None:
            raise Http404("No such workspace.")
        context = {
            **self.admin_site.each_context(request),
            **workspace_dashboard(workspace=workspace),
            "title": f"{workspace.name} at a glance",
            "workspace": workspace,
            "is_owner": role == Membership.Role.OWNER,
            "opts": self.model._meta,
            "original": workspace,
        }
        return TemplateResponse(request, "admin/pixie/workspace/dashboard.html", context)
