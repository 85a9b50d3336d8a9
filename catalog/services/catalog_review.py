"""The catalog every workspace sees: which published versions are in it, and who says so.

A version published by the operator, or by a publisher the operator trusts, joins
the catalog when it is published. Any other version (a workspace's promotion, a
third party's upload) waits for an operator to approve or refuse it; until then
only its own workspace sees it. The review never touches the version's content.
"""

from __future__ import annotations

from django.db.models import Count, Exists, OuterRef
from django.utils import timezone

from catalog.imitation import CatalogEntry, Verdict, imitation_verdict
from catalog.models import Bundle, BundleVersion, CatalogReview, Publisher, Status
from catalog.selectors import IN_CATALOG
from catalog.validators import DESCRIPTION_MAX
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed
from pixie.core.names import name_problem
from pixie.core.people.permissions import require_operator

from .release_notices import notify_version_published


def catalog_entries(*, publisher: Publisher | None) -> list[CatalogEntry]:
    """Other publishers' bundles with a version in the catalog (one query)."""
    in_catalog = BundleVersion.objects.filter(IN_CATALOG, bundle=OuterRef("pk"))
    bundles = Bundle.objects.filter(Exists(in_catalog))
    if publisher is not None and publisher.pk is not None:
        bundles = bundles.exclude(publisher=publisher)
    return [
        CatalogEntry(publisher_id=p, publisher_name=pn, slug=s, name=n)
        for p, pn, s, n in bundles.values_list("publisher_id", "publisher__name", "slug", "name")
    ]


def imitation_check(*, publisher: Publisher | None, publisher_name: str, slug: str, name: str):
    """The imitation rules (catalog.imitation) for a bundle about to be published. An
    operator publisher is the catalog's own voice and is not checked."""
    if publisher is not None and publisher.kind == Publisher.Kind.OPERATOR:
        return Verdict()
    return imitation_verdict(
        publisher_id=publisher.pk if publisher else None,
        publisher_name=publisher_name,
        slug=slug,
        name=name,
        catalog=catalog_entries(publisher=publisher),
    )


def review_at_publish(*, bundle_version: BundleVersion) -> tuple[str, list[str], str]:
    """(catalog_review, flags, what the history says) for a version being published;
    refuses a bundle that imitates another publisher's."""
    bundle = bundle_version.bundle
    publisher = bundle.publisher
    # Every door a name comes in by checks it; this is the last, for any door missed.
    names = [("bundle", bundle.name)] + [
        (f"skill {slug}", name)
        for slug, name in bundle_version.skills.values_list("skill_version__package__slug",
                                                           "skill_version__name")
    ]  # fmt: skip
    if broken := [f"{what}'s name {p}" for what, n in names if (p := name_problem(n))]:
        raise ValidationFailed(
            [f"{bundle_version} cannot be published: {b}" for b in broken], code=ErrorCode.INVALID
        )
    verdict = imitation_check(
        publisher=publisher, publisher_name=publisher.name, slug=bundle.slug, name=bundle.name
    )
    if verdict.refusals:
        raise ValidationFailed(
            [f"{bundle_version} cannot be published: {r}" for r in verdict.refusals],
            code=ErrorCode.IMITATION,
        )
    if verdict.holds:
        return CatalogReview.PENDING, verdict.holds, "held for an operator's review"
    if publisher.kind == Publisher.Kind.OPERATOR:
        return CatalogReview.APPROVED, [], "in the catalog (operator publisher)"
    if publisher.trusted:
        return CatalogReview.APPROVED, [], "in the catalog (trusted publisher)"
    return CatalogReview.PENDING, [], "awaiting an operator's review for the catalog"


def review_queue():
    """Published versions awaiting review, oldest first, with what the queue shows."""
    return (
        BundleVersion.objects.filter(catalog_review=CatalogReview.PENDING)
        .exclude(status=Status.DRAFT)
        .select_related("bundle__publisher__workspace", "published_by")
        .annotate(skill_count=Count("skills"))
        .order_by("published_at", "pk")
    )


def _locked(bundle_version: BundleVersion) -> BundleVersion:
    locked = (
        BundleVersion.objects.select_for_update(of=("self",))
        .select_related("bundle")
        .get(pk=bundle_version.pk)
    )
    if locked.status == Status.DRAFT:
        raise StateError(
            f"{locked} is a draft; only a published version is reviewed for the catalog.",
            code=ErrorCode.NOT_PUBLISHED,
        )
    return locked


def catalog_review_approve(*, bundle_version: BundleVersion, actor) -> BundleVersion:
    """Put a pending (or earlier refused) version in the catalog every workspace sees."""
    require_operator(user=actor)
    with audited(actor=actor, comment=f"Approved {bundle_version} for the catalog"):
        locked = _locked(bundle_version)
        if locked.catalog_review == CatalogReview.APPROVED:
            raise StateError(
                f"{locked} is already in the catalog.", code=ErrorCode.ALREADY_APPROVED
            )
        locked.catalog_review = CatalogReview.APPROVED
        locked.catalog_review_reason = ""
        locked.catalog_reviewed_at = timezone.now()
        locked.catalog_reviewed_by = actor
        locked.save(
            update_fields=[
                "catalog_review",
                "catalog_review_reason",
                "catalog_reviewed_at",
                "catalog_reviewed_by",
            ]
        )
        notify_version_published(locked)  # other workspaces see it now
        return locked


def catalog_review_refuse(*, bundle_version: BundleVersion, actor, reason: str) -> BundleVersion:
    """Keep a pending version out of the catalog; its workspace reads the reason. An
    approved version leaves the catalog by being yanked, not refused."""
    require_operator(user=actor)
    reason = " ".join((reason or "").split())
    if not reason:
        raise ValidationFailed(
            "Say why the version is refused (the publishing workspace reads the reason)",
            code=ErrorCode.REASON_REQUIRED,
        )
    with audited(actor=actor, comment=f"Refused {bundle_version} for the catalog: {reason}"):
        locked = _locked(bundle_version)
        if locked.catalog_review != CatalogReview.PENDING:
            raise StateError(
                f"{locked} is {locked.get_catalog_review_display().lower()}; only a version "
                "awaiting review can be refused (yank a version to withdraw it).",
                code=f"already_{locked.catalog_review}",
            )
        locked.catalog_review = CatalogReview.REFUSED
        locked.catalog_review_reason = reason[:DESCRIPTION_MAX]
        locked.catalog_reviewed_at = timezone.now()
        locked.catalog_reviewed_by = actor
        locked.save(
            update_fields=[
                "catalog_review",
                "catalog_review_reason",
                "catalog_reviewed_at",
                "catalog_reviewed_by",
            ]
        )
        return locked


def publisher_trust(*, publisher: Publisher, trusted: bool, actor) -> Publisher:
    """Mark a publisher trusted (its next versions join the catalog when published, unless
    held for imitation) or withdraw the trust. Versions already awaiting review stay
    in the queue: each is approved on its own."""
    require_operator(user=actor)
    if publisher.kind == Publisher.Kind.OPERATOR:
        raise StateError(
            f"{publisher} is an operator publisher, trusted by definition.", code=ErrorCode.OPERATOR
        )
    what = "trusted" if trusted else "no longer trusted"
    with audited(actor=actor, comment=f"Marked publisher {publisher.slug} {what}"):
        locked = Publisher.objects.select_for_update().get(pk=publisher.pk)
        if locked.trusted == trusted:
            raise StateError(f"{locked} is already {what}.", code=ErrorCode.UNCHANGED)
        locked.trusted = trusted
        locked.save(update_fields=["trusted"])
        return locked
