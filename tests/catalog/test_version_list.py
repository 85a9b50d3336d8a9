"""Where a version stands on the bundle versions list: its status, and its catalog review
only when that keeps it from the workspaces."""

import pytest

from catalog.admin.version_list import version_stages
from catalog.models import CatalogReview, Status


@pytest.mark.parametrize(
    ("status", "review", "stages"),
    [
        (Status.DRAFT, CatalogReview.PENDING, ["draft"]),
        (Status.PUBLISHED, CatalogReview.APPROVED, ["published"]),
        (Status.PUBLISHED, CatalogReview.PENDING, ["published", "awaiting"]),
        (Status.PUBLISHED, CatalogReview.REFUSED, ["published", "refused"]),
        (Status.YANKED, CatalogReview.APPROVED, ["yanked"]),
        (Status.YANKED, CatalogReview.REFUSED, ["yanked", "refused"]),
    ],
)
def test_a_version_shows_its_status_and_a_review_that_holds_it_back(status, review, stages):
    assert [stage for stage, _ in version_stages(status=status, catalog_review=review)] == stages


def test_the_pills_say_it_in_words():
    pills = version_stages(status=Status.PUBLISHED, catalog_review=CatalogReview.REFUSED)
    assert [words for _, words in pills] == ["Published", "Refused for the catalog"]
