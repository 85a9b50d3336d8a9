"""The catalog review: the pure imitation rules, the review services, the migration."""

import importlib

import pytest
from django.apps import apps
from hypothesis import given
from hypothesis import strategies as st

from catalog.imitation import CatalogEntry, imitation_verdict, name_key, within_distance
from catalog.models import BundleVersion, CatalogReview, Publisher, Status
from catalog.services import bundle_version_publish
from catalog.services.catalog_review import (
    catalog_review_approve,
    catalog_review_refuse,
    publisher_trust,
)
from pixie.core.errors import ImmutableError, PermissionRefused, StateError, ValidationFailed
from tests.factories import make_bundle_version, make_skill_version, make_user, make_workspace

PIXIE = CatalogEntry(
    publisher_id=1, publisher_name="Pixie", slug="accounts-receivable", name="Accounts Receivable"
)


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


@given(st.text("abc-", max_size=9), st.text("abc-", max_size=9), st.integers(0, 3))
def test_the_banded_distance_agrees_with_the_plain_one(a, b, limit):
    assert within_distance(a, b, limit) == (levenshtein(a, b) <= limit)


def verdict(slug, name, publisher_name="Globex", publisher_id=2):
    return imitation_verdict(
        publisher_id=publisher_id, publisher_name=publisher_name, slug=slug, name=name,
        catalog=[PIXIE],
    )  # fmt: skip


def test_the_same_name_written_differently_is_refused():
    assert name_key("Accounts  receivable!") == name_key("accounts-Receivable")
    refused = verdict("ar-pro", "accounts-receivable")
    assert refused.refusals == [
        "the name 'accounts-receivable' is the name of Pixie's bundle accounts-receivable; "
        "choose a name of your own"
    ]


@pytest.mark.parametrize(
    ("slug", "held"),
    [
        ("accounts-receivabel", True),  # two letters swapped: two edits
        ("acounts-receivable", True),
        ("accounts-receivables", True),
        ("accounts-payable", False),
        ("globex-ar", False),
    ],
)
def test_a_slug_within_two_edits_of_another_publishers_is_held(slug, held):
    result = verdict(slug, "Something else")
    assert result.refusals == []
    assert bool(result.holds) == held


def test_a_publisher_named_like_another_is_held_and_its_own_bundles_are_not_compared():
    assert verdict("kit", "Kit", publisher_name="PIXIE").holds == [
        "the publisher name 'PIXIE' is the name of another publisher, Pixie"
    ]
    own = verdict("accounts-receivables", "Accounts Receivable", publisher_id=1)
    assert (own.refusals, own.holds) == ([], [])


@pytest.fixture
def pending(db):
    """A version of a workspace's publisher, published: awaiting review."""
    workspace = make_workspace("globex")
    publisher = Publisher.objects.create(
        slug="workspace-globex", name="Globex", kind=Publisher.Kind.WORKSPACE, workspace=workspace
    )
    draft = make_bundle_version("globex-kit", skills=[make_skill_version(body="Chase it.")])
    draft.bundle.publisher = publisher
    draft.bundle.save()
    return bundle_version_publish(bundle_version=draft, actor=make_user())


def test_review_state_changes_while_the_content_stays_frozen(pending, operator):
    assert pending.catalog_review == CatalogReview.PENDING and not pending.in_catalog
    approved = catalog_review_approve(bundle_version=pending, actor=operator)
    assert approved.in_catalog
    with pytest.raises(ImmutableError):
        BundleVersion.objects.filter(pk=pending.pk).update(notes="Rewritten")
    with pytest.raises(StateError):
        catalog_review_approve(bundle_version=pending, actor=operator)
    with pytest.raises(StateError, match="yank a version to withdraw it"):
        catalog_review_refuse(bundle_version=pending, actor=operator, reason="Changed my mind")


def test_only_operators_review_and_a_draft_is_not_reviewed(pending, operator):
    with pytest.raises(PermissionRefused):
        catalog_review_approve(bundle_version=pending, actor=make_user(is_staff=True))
    with pytest.raises(ValidationFailed):
        catalog_review_refuse(bundle_version=pending, actor=operator, reason=" ")
    draft = make_bundle_version("unfinished", skills=[make_skill_version()])
    with pytest.raises(StateError, match="is a draft"):
        catalog_review_approve(bundle_version=draft, actor=operator)


def test_a_refused_version_can_be_approved_later(pending, operator):
    catalog_review_refuse(bundle_version=pending, actor=operator, reason="Missing notes")
    approved = catalog_review_approve(bundle_version=pending, actor=operator)
    assert (approved.catalog_review, approved.catalog_review_reason) == ("approved", "")


def test_an_operator_publisher_is_trusted_by_definition(db, operator):
    operator_publisher = Publisher.objects.create(slug="pixie", name="Pixie")
    assert operator_publisher.is_trusted and operator_publisher.label == "Pixie (operator)"
    with pytest.raises(StateError, match="trusted by definition"):
        publisher_trust(publisher=operator_publisher, trusted=True, actor=operator)


def test_the_migration_hides_what_workspaces_published_before_the_review(pending, operator):
    operators = bundle_version_publish(
        bundle_version=make_bundle_version("ops-kit", skills=[make_skill_version()]),
        actor=operator,
    )
    BundleVersion.objects.filter(pk__in=[pending.pk, operators.pk]).update(
        catalog_review=CatalogReview.REFUSED  # anything but the answer
    )
    migration = importlib.import_module("catalog.migrations.0009_catalog_review")
    migration.review_existing(apps, None)
    reviews = dict(BundleVersion.objects.values_list("bundle__slug", "catalog_review"))
    assert reviews == {"globex-kit": "pending", "ops-kit": "approved"}
    assert BundleVersion.objects.get(pk=operators.pk).status == Status.PUBLISHED
