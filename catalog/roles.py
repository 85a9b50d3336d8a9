"""The named groups ``operators`` and ``auditors``: what each may do in the catalog.

Operators publish and review the catalog, so their group holds the catalog's model
permissions (and may look at the tool registry). Auditors read and change nothing, so
theirs holds only the permissions to view the same models; every workspace's data they
read through the workspace admin's scoping (pixie.core.people.permissions.sees_every_workspace).
Both are kept in step after every migrate, so a fresh install has them and a new catalog
model joins them.
"""

from django.contrib.auth.models import Group, Permission

from pixie.core.people.permissions import AUDITORS_GROUP, OPERATORS_GROUP

CATALOG_MODELS = [
    "publisher", "skillpackage", "skillversion", "bundle", "bundleversion",
    "bundleskill", "bundlehost", "bundlecredential",
]  # fmt: skip


def operators_group_ensure() -> Group:
    group, _ = Group.objects.get_or_create(name=OPERATORS_GROUP)
    group.permissions.set(
        Permission.objects.filter(
            content_type__app_label="catalog", content_type__model__in=CATALOG_MODELS
        )
        | Permission.objects.filter(content_type__app_label="catalog", codename="view_tool")
        # The repositories the catalog follows (pixie.sources, named here by label only).
        | Permission.objects.filter(content_type__app_label="sources")
    )
    return group


def auditors_group_ensure() -> Group:
    group, _ = Group.objects.get_or_create(name=AUDITORS_GROUP)
    group.permissions.set(
        Permission.objects.filter(
            content_type__app_label="catalog",
            content_type__model__in=[*CATALOG_MODELS, "tool"],
            codename__startswith="view_",
        )
        | Permission.objects.filter(content_type__app_label="sources", codename="view_source")
    )
    return group


def operators_group_after_migrate(sender, apps=None, **kwargs):
    # Permissions are created by auth's own post_migrate handler, which runs first.
    try:
        if apps is not None:
            apps.get_model("auth", "Permission")
            apps.get_model("catalog", "Tool")
    except LookupError:
        return  # a migrate of other apps only: these tables are not there yet
    operators_group_ensure()
    auditors_group_ensure()
