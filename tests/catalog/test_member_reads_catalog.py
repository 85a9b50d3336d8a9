"""A workspace's members read the bundle versions their workspace may install: the page,
its history and its files, read only, with nothing on it that leads to a page they may
not open; another workspace's unreviewed version stays invisible to them."""

import re

import pytest
from django.urls import reverse

from catalog.models import BundleVersion
from tests.clients import admin_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def links_of(html: str) -> set[str]:
    return set(re.findall(r'href="(/admin/[^"?#]*)', html))


def test_a_member_reads_a_catalog_version_and_every_link_on_it_opens(
    acme, member, demo_catalog, django_assert_max_num_queries
):
    version = demo_catalog["2.2.0"]
    client = admin_for(member)
    page_url = reverse("admin:catalog_bundleversion_change", args=[version.pk])
    with django_assert_max_num_queries(40):
        page = client.get(page_url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Accounts Receivable (accounts-receivable), by Pixie" in html
    assert "@payment-plan" in html and "Picture of this version" in html
    assert "release-yank" not in html and 'name="_save"' not in html
    for link in sorted(links_of(html)):
        status = client.get(link).status_code
        assert status in (200, 302), f"{link}: {status}"
    listing = client.get(reverse("admin:catalog_bundleversion_changelist")).content.decode()
    assert "2.2.0" in listing and "By bundle" not in listing


def test_a_login_of_no_workspace_and_an_unreviewed_version_stay_closed(
    acme, member, demo_catalog
):
    version = demo_catalog["2.1.0"]
    BundleVersion.objects.filter(pk=version.pk).update(catalog_review="pending")
    url = reverse("admin:catalog_bundleversion_change", args=[version.pk])
    assert admin_for(member).get(url).status_code == 404
    nobody = make_user("nobody")
    assert admin_for(nobody).get(url).status_code == 403
