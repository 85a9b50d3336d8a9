"""Publishing and yanking catalog versions."""

import reversion
from django.db.models import Prefetch
from django.utils import timezone

from catalog.mentions import describe_unresolved, unresolved_by_skill
from catalog.models import (
    BundleSkill,
    BundleVersion,
    CatalogReview,
    Publisher,
    SkillPackage,
    SkillVersion,
    Status,
    Tool,
)
from pixie.core.audit.records import add_all_to_revision, audited
from pixie.core.errors import ErrorCode, PermissionRefused, StateError, ValidationFailed
from pixie.core.people.permissions import is_operator

from .catalog_review import review_at_publish
from .findings import ScanAside, bundle_version_scan, finding_line, refusing
from .release_notices import bundle_version_yanked, notify_version_published
from .signing import SIGNATURE_FIELDS, bundle_version_sign


def tool_slugs() -> set[str]:
    return set(Tool.objects.values_list("slug", flat=True))


def skill_package_check(*, slug: str, publisher: Publisher | None) -> None:
    """A package slug must be free at its publisher and must not shadow a tool
    (skills and tools share one namespace)."""
    if Tool.objects.filter(slug=slug).exists():
        raise ValidationFailed(f"@{slug} is a built-in tool; choose another slug for the skill")
    if (
        publisher is not None
        and SkillPackage.objects.filter(slug=slug, publisher=publisher).exists()
    ):
        raise ValidationFailed(f"{publisher} already has a skill @{slug}")


def skill_package_create(*, slug: str, publisher: Publisher, actor) -> SkillPackage:
    skill_package_check(slug=slug, publisher=publisher)
    with audited(actor=actor, comment=f"Created skill package @{slug}"):
        return SkillPackage.objects.create(slug=slug, publisher=publisher)


def skill_version_publish(*, skill_version: SkillVersion, actor) -> SkillVersion:
    with audited(actor=actor, comment=f"Published skill {skill_version}"):
        locked = SkillVersion.objects.select_for_update().get(pk=skill_version.pk)
        if locked.status == Status.PUBLISHED:
            raise StateError(
                f"Skill {locked} is already published.", code=ErrorCode.ALREADY_PUBLISHED
            )
        SkillVersion.objects.filter(pk=locked.pk).update(
            status=Status.PUBLISHED, published_at=timezone.now()
        )
        locked.refresh_from_db()
        reversion.add_to_revision(locked)  # an update() saves no version of its own
        return locked


def bundle_version_problems(bundle_version: BundleVersion) -> list[str]:
    """Everything that stops a bundle version from being published, each named."""
    entries = list(
        bundle_version.skills.select_related("skill_version__package").order_by("position", "id")
    )
    problems: list[str] = []
    if not entries:
        problems.append("A bundle version needs at least one skill")
    seen: set[str] = set()
    for entry in entries:
        slug = entry.skill_version.package.slug
        if slug in seen:
            problems.append(f"@{slug} appears more than once; a bundle names one version of it")
        seen.add(slug)
    missing = unresolved_by_skill(
        ((e.skill_version.package.slug, e.skill_version.body) for e in entries),
        seen | tool_slugs(),
    )
    problems.extend(describe_unresolved(missing))
    hosts = {h.host for h in bundle_version.hosts.all()}
    for credential in bundle_version.credentials.all():
        if credential.host not in hosts:
            problems.append(
                f"Credential {credential.name} is for host {credential.host}, "
                "which the bundle does not list"
            )
    return problems


def bundle_version_publish(
    *,
    bundle_version: BundleVersion,
    actor,
    findings_override: str = "",
    blobs=None,
    findings_aside: ScanAside | None = None,
) -> BundleVersion:
    """Publish a draft, and the draft skill versions it names, as one act.

    Its skills' text is scanned (catalog.findings) and the findings kept with it; hidden
    text that refuses publishing (tag characters, bidirectional overrides) stops it,
    unless an operator overrides with a reason (``findings_override``), recorded.

    Whether other workspaces see it is the catalog review's (catalog_review):
    at once for an operator's or a trusted publisher's version, after an operator's
    approval for any other; a bundle imitating another publisher's is refused or held.

    ``blobs``: the files' bytes by sha256, when the caller holds them (bundle_load): the
    findings scan does not read them back. ``findings_aside``: the scan bundle_load ran
    while it stored the files, taken if it scanned what was stored (ScanAside).
    """
    with audited(actor=actor, comment=f"Published {bundle_version}"):
        locked = (
            BundleVersion.objects.select_for_update(of=("self",))
            .select_related("bundle__publisher", "signing_key")
            # Its history entry follows its skills and names each: one query, not two each.
            .prefetch_related(
                Prefetch("skills", BundleSkill.objects.select_related("skill_version__package"))
            )
            .get(pk=bundle_version.pk)
        )
        if locked.status != Status.DRAFT:
            raise StateError(
                f"{locked} is already {locked.get_status_display().lower()}; "
                "published versions never change. Create a new version instead.",
                code=ErrorCode.ALREADY_PUBLISHED,
            )
        problems = bundle_version_problems(locked)
        if problems:
            raise ValidationFailed(
                [f"{locked} cannot be published: {p}" for p in problems],
                code=ErrorCode.PUBLISH_REFUSED,
            )
        findings = bundle_version_scan(locked, blobs=blobs, aside=findings_aside)
        override = _findings_override(findings, findings_override, actor, locked)
        # Signed before anything is written: a refusal (a publisher that signs outside
        # Pixie, with no signature carried) leaves the draft as it was.
        bundle_version_sign(locked)
        review, flags, review_note = review_at_publish(bundle_version=locked)
        reversion.set_comment(f"{reversion.get_comment()}; {review_note}")
        now = timezone.now()
        drafts = list(
            SkillVersion.objects.filter(
                bundle_entries__bundle_version=locked, status=Status.DRAFT
            ).select_related("package")  # each one's name in the history
        )
        # One UPDATE for them all; each still gets its own history entry.
        SkillVersion.objects.filter(pk__in=[d.pk for d in drafts]).update(
            status=Status.PUBLISHED, published_at=now
        )
        for skill_version in drafts:
            skill_version.status = Status.PUBLISHED
            skill_version.published_at = now
        add_all_to_revision(drafts)
        locked.status = Status.PUBLISHED
        locked.published_at = now
        locked.published_by = actor
        locked.catalog_review = review
        locked.catalog_review_flags = flags
        locked.catalog_reviewed_at = now if review == CatalogReview.APPROVED else None
        locked.findings = findings
        locked.findings_override_reason = override
        locked.save(
            update_fields=[
                "status",
                "published_at",
                "published_by",
                "catalog_review",
                "catalog_review_flags",
                "catalog_reviewed_at",
                "findings",
                "findings_override_reason",
                *SIGNATURE_FIELDS,
            ]
        )
        notify_version_published(locked)
        return locked


OVERRIDE_REASON_MAX = BundleVersion._meta.get_field("findings_override_reason").max_length


def _findings_override(findings: list[dict], reason: str, actor, bundle_version) -> str:
    """The override reason kept with the version, or the refusal: findings that refuse
    publishing need an operator's reason (a command's system user is the operator's)."""
    refused = refusing(findings)
    reason = (reason or "").strip()
    if not refused:
        return ""
    if not reason:
        raise ValidationFailed(
            [f"{bundle_version} cannot be published: {finding_line(f)}" for f in refused]
            + ["An operator may publish it anyway, giving the reason (it is recorded)"],
            code=ErrorCode.FINDINGS_REFUSED,
        )
    if actor is not None and actor.is_active and not is_operator(actor):
        raise PermissionRefused("Only an operator may publish a version despite its findings.")
    if len(reason) > OVERRIDE_REASON_MAX:
        raise ValidationFailed(
            f"The reason is {len(reason)} characters; at most {OVERRIDE_REASON_MAX}."
        )
    reversion.set_comment(
        f"{reversion.get_comment()}; published despite {len(refused)} refusing finding(s): {reason}"
    )
    return reason


YANK_REASON_MAX = BundleVersion._meta.get_field("yank_reason").max_length


def bundle_version_yank(*, bundle_version: BundleVersion, actor, reason: str) -> BundleVersion:
    """Withdraw a published version from new plans; installs of it keep working."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("Say why the version is yanked (the reason is shown to workspaces)")
    if len(reason) > YANK_REASON_MAX:
        raise ValidationFailed(
            f"The reason is {len(reason)} characters; at most {YANK_REASON_MAX}."
        )
    with audited(actor=actor, comment=f"Yanked {bundle_version}: {reason}"):
        locked = BundleVersion.objects.select_for_update().get(pk=bundle_version.pk)
        if locked.status != Status.PUBLISHED:
            raise StateError(
                f"Only a published version can be yanked; {locked} is "
                f"{locked.get_status_display().lower()}.",
                code=ErrorCode.NOT_PUBLISHED,
            )
        locked.status = Status.YANKED
        locked.yanked_at = timezone.now()
        locked.yanked_by = actor
        locked.yank_reason = reason[:400]
        locked.save(update_fields=["status", "yanked_at", "yanked_by", "yank_reason"])
        # The installer prepares each affected workspace's plan once this commits.
        bundle_version_yanked.send(sender=BundleVersion, bundle_version=locked)
        return locked
