"""Bundle versions, read by the workspaces that may install them.

Operators curate the catalog and auditors read all of it (model permissions, through
their groups). A workspace's members read the versions their workspace may see
(catalog.selectors.visible_versions), so that what the workspace home, a plan or an
installation names opens for them: the version's page, its history and its files, read
only. Nothing there links them to a page they may not open: the bundle and each skill
version are named, not linked, and the list's filters name only what they may see.
"""

from django.contrib import admin
from django.http import Http404

from pixie.admin_scoping import member_workspace_ids
from pixie.permissions import is_auditor, is_operator

from .selectors import visible_versions


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


class MemberReadable:
    """For BundleVersionAdmin."""

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) or member_reader(request)

    def has_module_permission(self, request):
        return super().has_module_permission(request) or member_reader(request)

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if reads_whole_catalog(request.user):
            return queryset
        return queryset.filter(pk__in=visible_versions(request.user).values("pk"))

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        if member_reader(request):  # the bundle filter would list every bundle's name
            return [f for f in filters if f not in ("bundle",)]
        return filters

    def get_fields(self, request, obj=None):
        fields = list(super().get_fields(request, obj))
        if member_reader(request):
            fields = ["bundle_name" if f == "bundle" else f for f in fields]
        return fields

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if member_reader(request):
            readonly = ["bundle_name" if f == "bundle" else f for f in readonly]
        return readonly

    @admin.display(description="Bundle")
    def bundle_name(self, obj):
        return f"{obj.bundle.name} ({obj.bundle.slug}), by {obj.bundle.publisher.label}"

    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):
        # A version the reader may not see is simply not there.
        raise Http404(f"No bundle version {object_id}.")


class MemberReadableInline:
    """For a bundle version's inlines: shown to whoever reads the version; a foreign key
    to a page a member may not open is named, not linked."""

    unlinked = {}  # field -> the display method that names it for a member

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) or member_reader(request)

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
