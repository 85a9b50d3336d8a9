"""Object-level permissions for workspace data in the admin.

Superusers and auditors see every workspace's rows. Any other user sees only the
rows of workspaces they belong to, read-only: changes go through services and their
own pages (plans, imports), which check the owner role themselves.
"""

from django.contrib import admin

from pixie.core.audit.admin_history import ReadOnlyHistoryAdmin
from pixie.core.models import Membership, Workspace
from pixie.core.people.permissions import role_in, sees_every_workspace
from pixie.core.web.admin_missing import MissingIsNotFound


def member_workspace_ids(user) -> list[int]:
    cached = getattr(user, "_pixie_workspace_ids", None)
    if cached is None:
        cached = list(user.memberships.values_list("workspace_id", flat=True))
        user._pixie_workspace_ids = cached
    return cached


def owned_workspace_ids(user) -> list[int]:
    """The workspaces the user owns: where owners' actions (plans, confirmations) are
    offered at all. One query, kept on the user for the request."""
    cached = getattr(user, "_pixie_owned_workspace_ids", None)
    if cached is None:
        cached = list(
            user.memberships.filter(role=Membership.Role.OWNER).values_list(
                "workspace_id", flat=True
            )
        )
        user._pixie_owned_workspace_ids = cached
    return cached


def person(user) -> str:
    """A user by name, not as a link: the admin's user pages are operators' (superusers'),
    and Django links a read-only foreign key whoever reads it."""
    return user.get_username() if user is not None else "—"


class MemberWorkspaceFilter(admin.SimpleListFilter):
    """Filter by workspace, offering only the workspaces the user may see (superusers:
    all). Django's own filter on a workspace field lists every workspace's name."""

    title = "workspace"
    parameter_name = "workspace"

    def __init__(self, request, params, model, model_admin):
        # The lookup from the listed model to its workspace, as the admin scopes it.
        self.workspace_field = getattr(model_admin, "workspace_field", "workspace")
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        workspaces = Workspace.objects.order_by("name")
        if not sees_every_workspace(request.user):
            workspaces = workspaces.filter(id__in=member_workspace_ids(request.user))
        return [(workspace.slug, workspace.name) for workspace in workspaces]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(**{f"{self.workspace_field}__slug": self.value()})
        return queryset


class WorkspaceScopedAdmin(MissingIsNotFound, ReadOnlyHistoryAdmin):
    # The lookup from this model to its workspace id.
    workspace_field = "workspace"

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if sees_every_workspace(request.user):
            return queryset
        return queryset.filter(
            **{f"{self.workspace_field}__in": member_workspace_ids(request.user)}
        )

    def has_view_permission(self, request, obj=None):
        if sees_every_workspace(request.user):
            return True
        return bool(request.user.is_active and member_workspace_ids(request.user))

    def workspace_of(self, obj) -> Workspace:
        if self.workspace_field == "id":
            return obj
        for step in self.workspace_field.split("__"):
            obj = getattr(obj, step)
        return obj

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # The page links only where its reader may go: owners' pages (edit, promote) for
        # owners, members' forms for members; a superuser of no membership reads.
        if obj is not None:
            context["workspace_role"] = role_in(user=request.user, workspace=self.workspace_of(obj))
        return super().render_change_form(request, context, add, change, form_url, obj)

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


class ServiceManagedAdmin(WorkspaceScopedAdmin):
    """Rows only services write (installations, plans): the admin shows them."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class SharedChoicesInline(admin.TabularInline):
    """An inline whose foreign-key selects load their choices once per request.

    Without this each row of the formset runs its own query for the same
    options, so a page's query count grows with the number of rows.
    """

    # field name -> callable returning the queryset of choices (with select_related)
    shared_choices: dict = {}

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        make_queryset = self.shared_choices.get(db_field.name)
        if make_queryset is None or field is None:
            return field
        cache = request.__dict__.setdefault("_pixie_shared_choices", {})
        key = (type(self), db_field.name)
        if key not in cache:
            field.queryset = make_queryset()
            cache[key] = list(field.choices)
        field.choices = cache[key]
        return field
