"""A bundle version's page is read like a pull request, and offers each reader only the
decision that is theirs: an operator approves or refuses a version awaiting review, an
owner of its workspace reads it, an auditor reads it; nobody edits it on the page."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from catalog.models import BundleVersion, Publisher
from tests.clients import admin_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db

DECISIONS = ("approve-version", "refuse-version", "publish-draft", "release-yank", "edit-notes")


def offered(html: str) -> set[str]:
    return {d for d in DECISIONS if f'id="{d}"' in html}


@pytest.fixture
def awaiting(demo_catalog):
    """2.2.0 of the demo bundle, as if a third party had published it after 2.1.0."""
    version = demo_catalog["2.2.0"]
    Publisher.objects.filter(pk=version.bundle.publisher_id).update(
        kind="third_party", trusted=False
    )
    BundleVersion.objects.filter(pk=version.pk).update(catalog_review="pending")
    return BundleVersion.objects.get(pk=version.pk)


def test_each_reader_is_offered_only_their_own_decision(awaiting, operator, acme, member):
    url = reverse("admin:catalog_bundleversion_change", args=[awaiting.pk])
    page = admin_for(operator).get(url).content.decode()
    assert offered(page) == {"approve-version", "refuse-version"}
    assert "What changed against 2.1.0" in page and 'class="status-pill stage-awaiting"' in page
    auditor = make_user("audrey", is_staff=True)
    auditor.groups.add(Group.objects.get(name="auditors"))
    audit = admin_for(auditor).get(url)
    assert audit.status_code == 200 and offered(audit.content.decode()) == set()
    assert "Awaiting an operator's review" in audit.content.decode()
    # A member of another workspace never sees a version awaiting review at all.
    assert admin_for(member).get(url).status_code == 404


def test_a_published_version_is_offered_its_yank_and_nothing_else(demo_catalog, operator):
    version = demo_catalog["2.2.0"]
    url = reverse("admin:catalog_bundleversion_change", args=[version.pk])
    page = admin_for(operator).get(url).content.decode()
    assert offered(page) == {"release-yank"}
    assert "<textarea" not in page and "<select" not in page
    changes = page[page.index('id="change-summary"') :]
    assert "Against Accounts Receivable 2.1.0 (published)" in changes


def test_the_page_reads_the_same_number_of_queries_for_a_first_and_a_later_version(
    demo_catalog, operator_client, django_assert_max_num_queries
):
    for version in demo_catalog.values():
        url = reverse("admin:catalog_bundleversion_change", args=[version.pk])
        with django_assert_max_num_queries(40):
            assert operator_client.get(url).status_code == 200
