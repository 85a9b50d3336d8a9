"""What publishing or yanking a bundle version would touch, for the operator's
confirmation: the installations on it (or on the bundle's other versions), by workspace,
and the agents pinned to their skills. Catalog's admin asks through its ``release_impact``
hook; three queries whatever the number of versions or installations."""

from django.db.models import Count

from agents.models import AgentSkill
from catalog.admin.registered import BundleVersionAdmin
from catalog.models import Installation

WORKSPACES_NAMED = 10


def release_impact(bundle_versions) -> dict[int, dict]:
    """For each version (by pk): the workspaces that run it (the first 10 by name, and how
    many), the agents pinned to those installations' skills, and the workspaces that run
    another version of its bundle (who would see a new one as an upgrade)."""
    versions = list(bundle_versions)
    on_it = (
        Installation.objects.filter(bundle_version__in=versions)
        .order_by("workspace__name")
        .values_list("bundle_version_id", "workspace__name")
    )
    named: dict[int, list[str]] = {}
    counts: dict[int, int] = {}
    for version_id, workspace in on_it:
        counts[version_id] = counts.get(version_id, 0) + 1
        if len(named.setdefault(version_id, [])) < WORKSPACES_NAMED:
            named[version_id].append(workspace)
    pinned = dict(
        AgentSkill.objects.filter(
            skill__installation__bundle_version__in=versions, pinned_revision__isnull=False
        )
        .values_list("skill__installation__bundle_version_id")
        .annotate(agents=Count("agent", distinct=True))
    )
    elsewhere = dict(
        Installation.objects.filter(bundle__in={v.bundle_id for v in versions})
        .values_list("bundle_id")
        .annotate(n=Count("id"))
    )
    return {
        version.pk: {
            "installations": counts.get(version.pk, 0),
            "workspaces": named.get(version.pk, []),
            "more": counts.get(version.pk, 0) - len(named.get(version.pk, [])),
            "pinned_agents": pinned.get(version.pk, 0),
            "other_versions": elsewhere.get(version.bundle_id, 0) - counts.get(version.pk, 0),
        }
        for version in versions
    }


BundleVersionAdmin.release_impact = staticmethod(release_impact)
