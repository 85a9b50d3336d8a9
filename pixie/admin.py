from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Prefetch, Value
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from reversion.models import Version

from .admin_pages import WorkspacePages
from .admin_scoping import SharedChoicesInline, WorkspaceScopedAdmin, person
from .dashboard import workspace_dashboard
from .models import AuditEntry, Membership, Workspace
from .permissions import is_auditor, is_operator, sees_every_workspace


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


@admin.register(AuditEntry)
class AuditLogAdmin(admin.ModelAdmin):
    """The audit log: every recorded change across the catalog and all workspaces, newest
    first, for auditors and operators (and superusers). It only reads: an entry is written
    with its revision (pixie.audit) and never edited."""

    list_display = ["when", "who", "workspace_name", "channel", "plan", "comment", "changed"]
    list_filter = ["channel", ("workspace", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["revision__comment", "revision__user__username"]
    date_hierarchy = "revision__date_created"
    list_select_related = ["revision__user", "workspace"]
    list_per_page = 50
    show_full_result_count = False  # a million rows are not counted twice a page
    ordering = ["-revision_id"]

    def get_queryset(self, request):
        versions = Version.objects.select_related("content_type").only(
            "revision_id", "object_id", "object_repr", "content_type"
        )
        # A plan is linked only for whoever may open it: its workspace's members, and
        # whoever reads every workspace (an operator of no workspace reads its number).
        if sees_every_workspace(request.user):
            may_open = Value(True)
        else:
            may_open = Exists(
                Membership.objects.filter(workspace=OuterRef("workspace"), user=request.user)
            )
        return (
            super()
            .get_queryset(request)
            .annotate(reader_may_open=may_open)
            .prefetch_related(Prefetch("revision__version_set", queryset=versions))
        )

    def has_view_permission(self, request, obj=None):
        return is_operator(request.user) or is_auditor(request.user)

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="When", ordering="revision__date_created")
    def when(self, entry):
        return entry.revision.date_created

    @admin.display(description="Who")
    def who(self, entry):
        return person(entry.revision.user)

    @admin.display(description="Workspace")
    def workspace_name(self, entry):
        return entry.workspace.name if entry.workspace else "the catalog"

    @admin.display(description="Plan")
    def plan(self, entry):
        if entry.plan_id is None:
            return "—"
        if not entry.reader_may_open:
            return f"Plan #{entry.plan_id}"
        url = reverse("admin:catalog_plan_review", args=[entry.plan_id])
        return format_html('<a href="{}">Plan #{}</a>', url, entry.plan_id)

    @admin.display(description="Comment")
    def comment(self, entry):
        return entry.revision.comment

    @admin.display(description="What it recorded")
    def changed(self, entry):
        versions = list(entry.revision.version_set.all())
        shown = format_html_join(
            ", ", "{}", ((version.object_repr,) for version in versions[:SHOWN_OBJECTS])
        )
        more = len(versions) - SHOWN_OBJECTS
        return format_html("{} and {} more", shown, more) if more > 0 else shown


SHOWN_OBJECTS = 5
