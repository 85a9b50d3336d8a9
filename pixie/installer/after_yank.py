"""After a yank: each workspace that runs the yanked version gets a plan ready to review,
prepared by Pixie, and its owners are told with it.

The plan is an upgrade to the newest published version newer than the installed one
that the workspace may see; else a rollback to the installation's most recent
generation whose version is not yanked; else none, and the notification says why.
Pixie only proposes: an owner reads, approves or rejects it as any other plan. Each
workspace is its own transaction, and one that fails does not stop the others. Running
it again changes nothing: a plan Pixie prepared for this yank is not prepared twice.

The module holds the whole of it: the receiver of catalog's signal, the task it queues
(registered when the installer's app connects the receiver) and the service the task
runs. So it imports pixie.installer.tasks nowhere, and tasks.py nothing of it.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction
from django.urls import reverse

from catalog.models import BundleVersion, Installation, Plan, Status
from catalog.selectors import versions_visible_to_workspace
from catalog.services.release_notices import bundle_version_yanked
from catalog.validators import version_key
from pixie.core.errors import PixieError
from pixie.core.notifications.service import Kind, Notice, notify

from .plans import plan_create, plan_rollback

log = logging.getLogger(__name__)


def queue_after_yank(sender, bundle_version, **kwargs) -> None:
    """catalog's ``bundle_version_yanked``: prepare the plans once the yank commits (a yank
    rolled back prepares nothing and tells nobody)."""
    pk = bundle_version.pk
    transaction.on_commit(lambda: plans_after_yank.delay(pk))


@shared_task(name="pixie.installer.tasks.plans_after_yank", acks_late=True)
def plans_after_yank(bundle_version_id: int) -> dict[int, int | None]:
    """Queued when a yank commits: a ready plan for each workspace that runs the version;
    running it again prepares nothing twice. (Its name is from when it lived in tasks.py:
    a message queued then still reaches it.)"""
    return after_yank(bundle_version_id=bundle_version_id)


def connect() -> None:
    bundle_version_yanked.connect(queue_after_yank, dispatch_uid="pixie-after-yank")


def prepared_because(yanked: BundleVersion) -> str:
    return f"Prepared by Pixie after {yanked} was yanked: {yanked.yank_reason}"[:400]


def after_yank(*, bundle_version_id: int) -> dict[int, int | None]:
    """For each installation on the yanked version: the plan prepared (its id), or None."""
    yanked = BundleVersion.objects.select_related("bundle").filter(pk=bundle_version_id).first()
    if yanked is None or yanked.status != Status.YANKED:
        return {}
    installations = list(
        Installation.objects.filter(bundle_version=yanked)
        .select_related("workspace", "bundle", "bundle_version")
        .order_by("pk")
    )
    prepared: dict[int, int | None] = {}
    for installation in installations:
        try:
            prepared[installation.pk] = _prepare(installation, yanked)
        except Exception:  # this workspace only; the others still get theirs
            log.exception("No plan prepared for installation #%s after a yank", installation.pk)
            prepared[installation.pk] = None
            with transaction.atomic():
                _tell(installation, yanked, None, "an unexpected error stopped it")
    return prepared


def _prepare(installation: Installation, yanked: BundleVersion) -> int | None:
    because = prepared_because(yanked)
    with transaction.atomic():
        if not Installation.objects.filter(pk=installation.pk, bundle_version=yanked).exists():
            return None  # it moved off the yanked version meanwhile
        done = Plan.objects.filter(
            installation=installation, created_by=None, prepared_because=because
        ).first()
        if done is not None:  # a run before this one prepared it
            return done.pk
        plan, why_none = _ready_plan(installation, yanked, because)
        _tell(installation, yanked, plan, why_none)
        return plan.pk if plan else None


def _ready_plan(installation: Installation, yanked: BundleVersion, because: str):
    """(the plan, "") or (None, why none could be prepared)."""
    workspace = installation.workspace
    installed = version_key(installation.bundle_version.version)
    newer = [
        v
        for v in versions_visible_to_workspace(workspace).filter(
            bundle_id=installation.bundle_id, status=Status.PUBLISHED
        )
        if version_key(v.version) > installed
    ]
    refusals = []
    if newer:
        target = max(newer, key=lambda v: version_key(v.version))
        try:
            plan = plan_create(
                workspace=workspace,
                kind=Plan.Kind.UPGRADE,
                actor=None,
                bundle_version=target,
                prepared_because=because,
                # A skill edited here is not left on the yanked text by default.
                recommend="merge",
            )
            return plan, ""
        except PixieError as exc:
            refusals.append(f"the upgrade to {target.version} was refused ({exc.message})")
    earlier = (
        installation.generations.filter(bundle_version__status=Status.PUBLISHED)
        .exclude(bundle_version=yanked)
        .select_related("bundle_version")
        .order_by("-number")
        .first()
    )
    if earlier is not None:
        try:
            plan = plan_rollback(
                workspace=workspace,
                bundle=installation.bundle.slug,
                generation=earlier.number,
                actor=None,
                prepared_because=because,
            )
            return plan, ""
        except PixieError as exc:
            refusals.append(
                f"the rollback to generation {earlier.number} was refused ({exc.message})"
            )
    if refusals:
        return None, "; ".join(refusals)
    return None, (
        f"no newer version of {installation.bundle.name} is published, and no earlier "
        "generation of it is on a version that is not yanked"
    )


def _tell(installation: Installation, yanked: BundleVersion, plan: Plan | None, why_none: str):
    workspace = installation.workspace
    if plan is None:
        what = f"Pixie could not prepare a plan: {why_none}"
        url = reverse("admin:catalog_installation_change", args=[installation.pk])
    else:
        if plan.kind == Plan.Kind.UPGRADE:
            what = f"Pixie prepared an upgrade to {plan.bundle_version.version}"
        else:
            generation = plan.options.get("generation")
            what = (
                f"Pixie prepared a rollback to generation {generation} "
                f"({plan.bundle_version.version})"
            )
        what += f" for you to review (plan #{plan.pk}); nothing changes until an owner approves it"
        url = reverse("admin:catalog_plan_review", args=[plan.pk])
    notify(
        kind=Kind.VERSION_YANKED,
        notices=[
            Notice(
                workspace_id=workspace.pk,
                event=f"version:{yanked.pk}:yanked:{workspace.pk}",
                title=f"{yanked}, which {workspace.name} runs, was yanked. {what}. "
                f"Why it was yanked: {yanked.yank_reason}",
                url=url,
            )
        ],
    )
