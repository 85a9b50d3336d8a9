"""What a workspace's members read first: one selector, a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Exists, OuterRef, Q

from agents.selectors import pins_behind
from catalog.bundle_history import upgrade_summaries
from catalog.models import Bundle, Installation, Plan, SkillRevision, Status
from catalog.selectors import versions_visible_to_workspace
from catalog.validators import version_key
from egress.models import CredentialRequirement
from pixie.core.notifications.service import notifications_shown
from pixie.installer.plan_kinds import KINDS, Effect


def workspace_dashboard(*, workspace) -> dict:
    """Installations and what is newer, the catalog it may install from, open plans,
    unconfirmed credentials, agents behind.

    At most eleven queries whatever the number of rows: each list shows its first
    SECTION_SHOWN rows, and is counted only when there are more. Three more when an
    installation has a newer version, for what every upgrade shown changes (the skills'
    digests, the hosts, the credentials of all those versions at once).
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
        .values_list("bundle_id", "version", "pk")
    )
    newest: dict[int, tuple[str, int]] = {}
    for bundle_id, version, pk in published:
        if bundle_id not in newest or version_key(version) > version_key(newest[bundle_id][0]):
            newest[bundle_id] = (version, pk)
    waiting = _waiting_plans(workspace, [i.bundle_id for i in installations])
    rows, upgrades = [], []
    for installation in installations:
        latest, latest_id = newest.get(installation.bundle_id, (None, None))
        is_newer = latest and version_key(latest) > version_key(installation.bundle_version.version)
        rows.append({
            "installation": installation,
            "newer": latest if is_newer else None,
            "waiting": waiting.get(installation.bundle_id),
        })  # fmt: skip
        if is_newer:
            upgrades.append((installation.bundle_version_id, latest_id, latest))
    # What each upgrade changes, in one line: the bundle comparison's rules, all at once.
    summaries = upgrade_summaries(upgrades)
    for row, installation in zip(rows, installations, strict=True):
        if row["newer"]:
            pair = (installation.bundle_version_id, newest[installation.bundle_id][1])
            row["changes"] = summaries[pair].line

    # Every pin not at its skill's head; a repoint moves only those on catalog revisions.
    agents_behind = (
        pins_behind(workspace)
        .values("agent_id", "agent__name", "agent__slug")
        .annotate(
            behind=Count("id"),
            movable=Count("id", filter=Q(pinned_revision__origin=SkillRevision.Origin.CATALOG)),
        )
        .order_by("agent__name")
    )
    open_plans = (
        Plan.objects.filter(workspace=workspace, status=Plan.State.PROPOSED)
        .select_related("bundle_version__bundle", "created_by")
        .order_by("-created_at")
    )
    unconfirmed = CredentialRequirement.objects.filter(
        workspace=workspace, confirmed=False
    ).order_by("name")
    return {
        "installations": rows,
        **_catalog(workspace, installed={i.bundle_id: i for i in installations}),
        **_first("open_plans", open_plans),
        **_first("unconfirmed", unconfirmed),
        # Counting groups: the grouped query again, as a subquery (Django's count()).
        **_first("agents_behind", agents_behind),
    }


def _waiting_plans(workspace, bundle_ids: list[int]) -> dict[int, int]:
    """bundle id -> the newest proposed plan for it (an upgrade Pixie prepared after a
    yank, one an owner asked for): the home links it instead of offering another. One
    query, none without installations."""
    if not bundle_ids:
        return {}
    waiting: dict[int, int] = {}
    # Plans that change the installation: a waiting repoint moves pins, not the version.
    changing = [value for value, kind in KINDS.items() if kind.effect != Effect.NONE]
    for pk, brought, installed in (
        Plan.objects.filter(workspace=workspace, status=Plan.State.PROPOSED, kind__in=changing)
        .filter(
            Q(bundle_version__bundle_id__in=bundle_ids) | Q(installation__bundle_id__in=bundle_ids)
        )
        .order_by("created_at")
        .values_list("pk", "bundle_version__bundle_id", "installation__bundle_id")
    ):
        waiting[brought or installed] = pk
    return waiting


SECTION_SHOWN = 20


def _first(name: str, rows) -> dict:
    """`name`: the first SECTION_SHOWN rows; `name_total`: how many there are, counted
    only when there are more than those."""
    shown = list(rows[: SECTION_SHOWN + 1])
    total = len(shown) if len(shown) <= SECTION_SHOWN else rows.count()
    return {name: shown[:SECTION_SHOWN], f"{name}_total": total}


CATALOG_SHOWN = 20


def _catalog(workspace, *, installed: dict) -> dict:
    """The bundles the workspace may install, by name (the first 20, and how many in all):
    each with its publisher, description, newest published version and how many there
    are, and what this workspace has installed of it."""
    published = versions_visible_to_workspace(workspace).filter(status=Status.PUBLISHED)
    bundles = Bundle.objects.filter(Exists(published.filter(bundle=OuterRef("pk"))))
    shown = list(bundles.select_related("publisher").order_by("name", "slug")[:CATALOG_SHOWN])
    versions: dict[int, list[tuple[str, int]]] = {}
    for bundle_id, version, pk in published.filter(bundle__in=shown).values_list(
        "bundle_id", "version", "pk"
    ):
        versions.setdefault(bundle_id, []).append((version, pk))
    rows = []
    for bundle in shown:
        ordered = sorted(versions.get(bundle.pk, []), key=lambda v: version_key(v[0]))
        installation = installed.get(bundle.pk)
        rows.append({
            "bundle": bundle,
            "newest": ordered[-1][0] if ordered else None,
            "newest_id": ordered[-1][1] if ordered else None,
            "versions": len(ordered),
            "installed": installation.bundle_version.version if installation else None,
        })  # fmt: skip
    total = len(shown) if len(shown) < CATALOG_SHOWN else bundles.count()
    return {"catalog": rows, "catalog_total": total}


def viewer_notifications(*, user, workspace) -> dict:
    """The viewer's notifications in the workspace, unread first (the first SECTION_SHOWN),
    and how many there are and are unread: one query, two when there are more."""
    rows = notifications_shown(user=user, workspace=workspace)
    shown = list(rows[: SECTION_SHOWN + 1])
    if len(shown) <= SECTION_SHOWN:
        total, unread = len(shown), sum(1 for n in shown if n.read_at is None)
    else:
        counts = rows.aggregate(
            total=Count("pk"), unread=Count("pk", filter=Q(read_at__isnull=True))
        )
        total, unread = counts["total"], counts["unread"]
    return {
        "notifications": shown[:SECTION_SHOWN],
        "notifications_total": total,
        "notifications_unread": unread,
    }
