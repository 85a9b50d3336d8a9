"""What a workspace's members read first: one selector, a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Q

from catalog.models import Installation, Plan, SkillRevision, Status
from catalog.selectors import versions_visible_to_workspace
from catalog.validators import version_key
from egress.models import CredentialRequirement
from pixie.installer.repoint import pins_behind


def workspace_dashboard(*, workspace) -> dict:
    """Installations and what is newer, open plans, unconfirmed credentials, agents behind.

    Five queries whatever the number of rows.
    """
    installations = list(
        Installation.objects.filter(workspace=workspace)
        .select_related("bundle", "bundle_version")
        .order_by("bundle__name")
    )
    # Only versions the workspace may plan: another workspace's unreviewed one is not "newer".
    published = (
        versions_visible_to_workspace(workspace)
        .filter(bundle_id__in=[i.bundle_id for i in installations], status=Status.PUBLISHED)
        .values_list("bundle_id", "version")
    )
    newest: dict[int, str] = {}
    for bundle_id, version in published:
        if bundle_id not in newest or version_key(version) > version_key(newest[bundle_id]):
            newest[bundle_id] = version
    rows = []
    for installation in installations:
        latest = newest.get(installation.bundle_id)
        is_newer = latest and version_key(latest) > version_key(installation.bundle_version.version)
        rows.append({"installation": installation, "newer": latest if is_newer else None})

    # Every pin not at its skill's head; a repoint moves only those on catalog revisions.
    agents_behind = list(
        pins_behind(workspace)
        .values("agent_id", "agent__name", "agent__slug")
        .annotate(
            behind=Count("id"),
            movable=Count("id", filter=Q(pinned_revision__origin=SkillRevision.Origin.CATALOG)),
        )
        .order_by("agent__name")
    )
    return {
        "installations": rows,
        "open_plans": list(
            Plan.objects.filter(workspace=workspace, status=Plan.State.PROPOSED)
            .select_related("bundle_version__bundle", "created_by")
            .order_by("-created_at")
        ),
        "unconfirmed": list(
            CredentialRequirement.objects.filter(workspace=workspace, confirmed=False).order_by(
                "name"
            )
        ),
        "agents_behind": agents_behind,
    }
