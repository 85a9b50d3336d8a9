from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models.functions import Length
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime

from catalog.models import Plan
from pixie import admin_users  # noqa: F401  (the user pages, with offboarding's rule)
from pixie.admin_install import InstallPages
from pixie.admin_policy import PolicyPages
from pixie.core.audit.checks import chain_check_request, chain_check_state
from pixie.core.audit.log import (
    CATALOG,
    FILTERS,
    SHOWN_OBJECTS,
    AuditQuery,
    Page,
    audit_entries,
    audit_export,
    audit_page,
    audit_query,
    object_types,
)
from pixie.core.audit.rows import rows_html
from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.models import (
    AuditChain,
    AuditEntry,
    LoginLockout,
    Membership,
    Workspace,
)
from pixie.core.notifications.admin import NotificationPages
from pixie.core.people.admin import MembershipFormSet, MembersPages
from pixie.core.people.permissions import reads_audit_log
from pixie.core.web.admin_scoping import SharedChoicesInline, WorkspaceScopedAdmin
from pixie.core.web.pages import AdminPages, WorkspacePages
from pixie.core.web.whole_numbers import whole_number
from pixie.dashboard import viewer_notifications, workspace_dashboard
from pixie.delivery.pages import DeliveryPages
from pixie.installer.plan_kinds import KINDS, PlanRequest
from pixie.login_throttle import ThrottledLoginForm


class MembershipInline(SharedChoicesInline):
    model = Membership
    formset = MembershipFormSet
    extra = 0
    shared_choices = {"user": lambda: get_user_model().objects.order_by("username")}

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "workspace")


@admin.register(Workspace)
class WorkspaceAdmin(
    MembersPages,
    PolicyPages,
    InstallPages,
    DeliveryPages,
    NotificationPages,
    WorkspacePages,
    WorkspaceScopedAdmin,
):
    workspace_field = "id"
    list_display = ["name", "slug", "created_at", "dashboard_link"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]

    def get_urls(self):
        dashboard = self.page_path(
            "<int:workspace_id>/dashboard/", self.dashboard_view, "pixie_workspace_dashboard"
        )
        plan = self.page_path(
            "<int:workspace_id>/plan/", self.plan_view, "pixie_workspace_plan", post_only=True
        )
        return [
            dashboard,
            plan,
            *self.members_urls(),
            *self.policy_urls(),
            *self.install_urls(),
            *self.delivery_urls(),
            *self.notification_urls(),
            *super().get_urls(),
        ]

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
            **viewer_notifications(user=request.user, workspace=workspace),
            workspace=workspace,
            is_owner=self.is_owner(request, workspace),
            workspace_role=self.workspace_role(request, workspace),
            original=workspace,
        )

    def plan_view(self, request, workspace_id):
        """Install or upgrade from the home: ask for the plan and show it, to be read
        whole and approved there."""
        workspace = self.page_object(request, workspace_id)
        kind = request.POST.get("kind", "")
        try:
            if kind not in (Plan.Kind.INSTALL, Plan.Kind.UPGRADE):
                raise ValidationFailed(f"kind must be install or upgrade; got {kind[:20]!r}")
            plan = KINDS[kind].create(
                PlanRequest(
                    workspace=workspace,
                    actor=request.user,
                    bundle=request.POST.get("bundle", ""),
                    version=request.POST.get("version", ""),
                )
            )
        except PixieError as exc:
            self.report(request, exc)
            return redirect("admin:pixie_workspace_dashboard", workspace.pk)
        return redirect("admin:catalog_plan_review", plan.pk)


# The login page counts wrong passwords and pauses past the limits (pixie.login_throttle).
admin.site.login_form = ThrottledLoginForm


@admin.register(LoginLockout)
class LoginLockoutAdmin(admin.ModelAdmin):
    """Accounts and addresses locked out of the login, for those who read the audit log
    (each lock is also an entry there). Written by the login, never by hand."""

    list_display = ["locked_at", "kind", "username", "address", "failures", "seconds"]
    list_filter = ["kind"]
    search_fields = ["username", "address"]

    def has_view_permission(self, request, obj=None):
        return reads_audit_log(request.user)

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditEntry)
class AuditLogAdmin(AdminPages, admin.ModelAdmin):
    """The audit log: every recorded change across the catalog and all workspaces, newest
    first, for auditors and operators (and superusers). Its list is a page of its own
    (pixie.core.audit.log reads it): filters, pages by position rather than by offset, and
    exports of the filtered rows. It only reads: an entry is written with its revision
    (pixie.core.audit.records) and never edited."""

    def get_urls(self):
        return [
            self.page_path("export.csv", self.export_view, "pixie_auditentry_csv"),
            self.page_path("export.jsonl", self.export_view, "pixie_auditentry_jsonl"),
            self.page_path("verify/", self.verify_view, "pixie_auditentry_verify", post_only=True),
            *super().get_urls(),
        ]

    def has_view_permission(self, request, obj=None):
        return reads_audit_log(request.user)

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """An entry's own address: the log from that entry on (its link in other pages)."""
        number = whole_number(object_id)
        entry = AuditEntry.objects.filter(pk=number).values_list("revision_id", flat=True)
        revision = entry.first() if number is not None else None
        if revision is None and self.has_view_permission(request):
            raise Http404("The audit log has no such entry.")
        return self.changelist_view(request, start=revision)

    def changelist_view(self, request, extra_context=None, start=None):
        if not self.has_view_permission(request):
            raise PermissionDenied
        problems, query = [], AuditQuery()
        before = str(start + 1) if start is not None else request.GET.get("before", "")
        try:
            query = audit_query(request.GET)
            page = audit_page(
                audit_entries(query),
                before=before,
                after=request.GET.get("after", ""),
                first=SHOWN_OBJECTS,
            )
        except ValidationFailed as refused:
            problems, page = refused.problems, Page(entries=[], older=None, newer=None)
        member_of = set(
            Membership.objects.filter(user=request.user).values_list("workspace_id", flat=True)
        )
        filters = {name: request.GET.get(name, "") for name in FILTERS}
        kept = urlencode({name: value for name, value in filters.items() if value})
        return self.render_page(
            request,
            "admin/pixie/auditentry/log.html",
            "Audit log",
            rows=rows_html(page.entries, user=request.user, member_of=member_of),
            page=page,
            problems=problems,
            filters=filters,
            filtered=not query.is_empty(),
            kept=kept,
            channels=AuditEntry.Channel.choices,
            types=object_types(),
            catalog=CATALOG,
            chain=_chain_state(),
        )

    def export_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            query = audit_query(request.GET)
        except ValidationFailed as refused:
            for problem in refused.problems:
                messages.error(request, problem)
            return redirect(reverse("admin:pixie_auditentry_changelist"))
        return audit_export(audit_entries(query), csv=request.path.endswith(".csv"))

    def verify_view(self, request):
        """*Verify now*: a walk of every chain, run as a task; the log shows its result."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            asked = chain_check_request(actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
        else:
            _tell_check_asked(request, asked)
        return redirect(reverse("admin:pixie_auditentry_changelist") + "#audit-chain")


def _tell_check_asked(request, asked) -> None:
    check = asked.check
    if not asked.started:
        messages.info(
            request,
            f"A check of the chains is already running, asked for by {check.asked_by} at "
            f"{date_format(localtime(check.at), 'Y-m-d H:i')}: its result shows here when "
            "it ends.",
        )
        return
    check.refresh_from_db(fields=["finished_at"])  # tasks that run in-process are done
    if check.finished_at is not None:
        messages.success(request, "The chains were checked just now: the result is below.")
    else:
        messages.success(
            request,
            "Checking every chain now, in the background: the result shows here when the "
            "walk ends (reload this page in a while).",
        )


HEADS_SHOWN = 20


def _chain_state() -> dict:
    """The last check of the chains, the one running, and their heads (the catalog's
    first), for the page."""
    count = AuditChain.objects.count()
    checks = chain_check_state()
    return {
        "check": checks.last,
        "running": checks.running,
        "chains": count,
        "heads": AuditChain.objects.order_by(Length("key"), "key")[:HEADS_SHOWN],
        "more_heads": max(count - HEADS_SHOWN, 0),
    }
