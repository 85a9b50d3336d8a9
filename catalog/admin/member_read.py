"""The catalog, read by the workspaces that may install from it.

Operators curate the catalog and auditors read all of it (model permissions, through
their groups). A workspace's members read what their workspace may see
(catalog.selectors.visible_versions): the bundle versions, the bundles that have one,
and the skill versions inside one, so that what the workspace home, a plan or an
installation names opens for them, read only. Nothing there links them to a page they
may not open: a publisher or a skill package is named, not linked, and a list's filters
name only what they may see.
"""

from django.db.models import Exists, OuterRef, Q

from catalog.models import BundleSkill
from catalog.selectors import visible_versions
from pixie.core.people.permissions import is_auditor, is_operator
from pixie.core.web.admin_missing import MissingIsNotFound
from pixie.core.web.admin_scoping import member_workspace_ids


def reads_whole_catalog(user) -> bool:
    return is_operator(user) or is_auditor(user)


def member_reader(request) -> bool:
    """A workspace member who is neither operator nor auditor: reads what it may install."""
    user = request.user
    return (
        user.is_active
        and not reads_whole_catalog(user)
        and bool(member_workspace_ids(user))
    )


def versions_visible(user) -> Q:
    return Q(pk__in=visible_versions(user).values("pk"))


def bundles_with_visible_version(user):
    return Exists(visible_versions(user).filter(bundle=OuterRef("pk")))


def skill_versions_in_visible_bundle(user):
    return Exists(
        BundleSkill.objects.filter(
            skill_version=OuterRef("pk"), bundle_version__in=visible_versions(user).values("pk")
        )
    )


class MemberReadable(MissingIsNotFound):
    """For a catalog ModelAdmin: `member_rows(user)` is the condition on its rows a member
    may read, `member_named` the foreign keys a member sees as words (field -> display
    method), `member_hidden_filters` the list filters that would name what they may not
    see."""

    member_named: dict[str, str] = {}
    member_hidden_filters: tuple[str, ...] = ()

    def member_rows(self, user):
        raise NotImplementedError

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) or member_reader(request)

    def has_module_permission(self, request):
        return super().has_module_permission(request) or member_reader(request)

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if reads_whole_catalog(request.user):
            return queryset
        return queryset.filter(self.member_rows(request.user))

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        if member_reader(request):
            return [f for f in filters if f not in self.member_hidden_filters]
        return filters

    def get_fields(self, request, obj=None):
        fields = list(super().get_fields(request, obj))
        if member_reader(request):
            fields = [self.member_named.get(f, f) for f in fields]
        return fields

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if member_reader(request):
            readonly = [self.member_named.get(f, f) for f in readonly]
            readonly += [f for f in self.member_named.values() if f not in readonly]
        return readonly

    def get_autocomplete_fields(self, request):
        # A member changes nothing here; an autocomplete would need the related admin.
        return [] if member_reader(request) else super().get_autocomplete_fields(request)


class MemberReadableInline:
    """For a catalog page's inlines: shown to whoever reads the page, with the rows a
    member may read (`member_rows`, optional); a foreign key to a page a member may not
    open is named, not linked (`unlinked`: field -> the display method that names it)."""

    unlinked: dict[str, str] = {}
    member_rows = None

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) or member_reader(request)

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if self.member_rows is None or reads_whole_catalog(request.user):
            return queryset
        return queryset.filter(self.member_rows(request.user))

    def get_fields(self, request, obj=None):
        fields = list(super().get_fields(request, obj))
        if member_reader(request):
            fields = [self.unlinked.get(f, f) for f in fields]
        return fields

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if member_reader(request):
            readonly = [self.unlinked.get(f, f) for f in readonly]
            readonly += [f for f in self.unlinked.values() if f not in readonly]
        return readonly

