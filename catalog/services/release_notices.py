"""What workspaces are told when a bundle version is published or yanked
(pixie.core.notifications.service), from inside the write's transaction.

A newer version: the owners of each workspace that runs an older version of its bundle
and may see the new one (the catalog's rule, catalog.selectors). A yank: catalog sends
``bundle_version_yanked``; the installer, a layer above, prepares each affected
workspace's plan after the yank commits and tells its owners then, with the plan.
"""

from __future__ import annotations

from django.dispatch import Signal
from django.urls import reverse

from catalog.models import BundleVersion, Installation, Status
from catalog.validators import version_key
from pixie.core.notifications.service import Kind, Notice, notify

# Sent inside a yank's transaction, with ``bundle_version`` (the yanked one).
bundle_version_yanked = Signal()


def notify_version_published(bundle_version: BundleVersion) -> int:
    """Tell the owners of every workspace on an older version of the bundle that may see
    this one (everyone once it is in the catalog; its own publisher's workspace before).
    One query for the installations, two for all their owners."""
    if bundle_version.status != Status.PUBLISHED:
        return 0
    installed = Installation.objects.filter(bundle_id=bundle_version.bundle_id)
    if not bundle_version.in_catalog:
        publisher_workspace = bundle_version.bundle.publisher.workspace_id
        if publisher_workspace is None:
            return 0
        installed = installed.filter(workspace_id=publisher_workspace)
    newer = version_key(bundle_version.version)
    notices = [
        Notice(
            workspace_id=workspace_id,
            event=f"version:{bundle_version.pk}:published:{workspace_id}",
            title=f"{bundle_version} is published: newer than the {version} {workspace} runs",
            url=reverse("admin:pixie_workspace_dashboard", args=[workspace_id]),
        )
        for workspace_id, workspace, version in installed.values_list(
            "workspace_id", "workspace__name", "bundle_version__version"
        )
        if version_key(version) < newer
    ]
    return notify(kind=Kind.VERSION_PUBLISHED, notices=notices)
