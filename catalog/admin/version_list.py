"""The bundle versions list: where each version stands, as pills read at a glance."""

from django.utils.html import format_html, format_html_join

from catalog.models import BundleVersion, CatalogReview, Status

# Only a review that keeps a published version from every workspace is news on the list:
# approval is the ordinary case, and a draft has not been reviewed yet. The stages and
# words are the version page's (templates/admin/catalog/includes/status_pill.html).
HELD_BACK = {
    CatalogReview.PENDING: ("awaiting", "Awaiting review"),
    CatalogReview.REFUSED: ("refused", "Refused for the catalog"),
}


def version_stages(*, status: str, catalog_review: str) -> list[tuple[str, str]]:
    """A version's pills as (stage, words): its status, then its catalog review when
    that holds it back."""
    stages = [(status, Status(status).label)]
    if status != Status.DRAFT and catalog_review in HELD_BACK:
        stages.append(HELD_BACK[catalog_review])
    return stages


def status_pills(bundle_version: BundleVersion) -> str:
    stages = version_stages(
        status=bundle_version.status, catalog_review=bundle_version.catalog_review
    )
    pills = format_html_join(" ", '<span class="status-pill stage-{}">{}</span>', stages)
    return format_html('<span class="version-pills">{}</span>', pills)
