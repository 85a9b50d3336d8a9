"""The named group ``operators``: what an operator who is not a superuser may do.

Operators publish and review the catalog, so the group holds the catalog's model
permissions (and may look at the tool registry). It is kept in step after every
migrate, so a fresh install has it and a new catalog model joins it.
"""

from django.contrib.auth.models import Group, Permission

from pixie.permissions import OPERATORS_GROUP

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
    )
    return group


def operators_group_after_migrate(sender, **kwargs):
    # Permissions are created by auth's own post_migrate handler, which runs first.
    operators_group_ensure()
