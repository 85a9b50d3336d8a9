"""A workspace's members read the catalog their workspace may install from: bundle
versions (page, history, files), their bundles and their skill versions, read only, with
nothing on them that leads to a page they may not open; another workspace's unreviewed
version stays invisible to them."""

import re

import pytest
from django.urls import reverse

from catalog.models import BundleVersion, SkillVersion
from tests.clients import admin_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def links_of(html: str) -> set[str]:
    return set(re.findall(r'href="(/admin/[^"?#]*)', html))


def test_a_member_reads_a_catalog_version_its_bundle_and_skills_and_every_link_opens(
    acme, member, demo_catalog, django_assert_max_num_queries
):
    version = demo_catalog["2.2.0"]
    client = admin_for(member)
    page_url = reverse("admin:catalog_bundleversion_change", args=[version.pk])
    with django_assert_max_num_queries(40):
        page = client.get(page_url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "@payment-plan" in html and "Picture of this version" in html
    assert "release-yank" not in html and 'name="_save"' not in html
    bundle_url = reverse("admin:catalog_bundle_change", args=[version.bundle_id])
    assert bundle_url in html  # the bundle and each skill version now open for a member
    assert "/admin/catalog/skillversion/" in html
    # Follow every admin link two pages deep from the version: each opens.
    seen, frontier = {page_url}, links_of(html)
    for _depth in range(2):
        found = set()
        for link in sorted(frontier - seen):
            seen.add(link)
            response = client.get(link)
            assert response.status_code in (200, 302), f"{link}: {response.status_code}"
            if response.status_code == 200 and link.startswith("/admin/catalog/"):
                found |= links_of(response.content.decode())
        frontier = found
    assert bundle_url in seen
    bundle_page = client.get(bundle_url).content.decode()
    assert "Compare versions" in bundle_page and "2.1.0" in bundle_page
    assert "/admin/catalog/publisher/" not in bundle_page  # the publisher is named
    assert 'name="_save"' not in bundle_page
    listing = client.get(reverse("admin:catalog_bundleversion_changelist")).content.decode()
    assert "2.2.0" in listing and "By bundle" not in listing
    with django_assert_max_num_queries(30):
        skills = client.get(reverse("admin:catalog_skillversion_changelist"))
    assert "invoice-chase" in skills.content.decode()
    assert "By publisher" not in skills.content.decode()


def test_what_is_not_in_the_catalog_stays_out_of_a_members_bundle_page(acme, member, demo_catalog):
    """A version pending review is not listed on the bundle page, not offered to compare,
    and a skill version only it holds is not there."""
    hidden = demo_catalog["2.2.0"]
    BundleVersion.objects.filter(pk=hidden.pk).update(catalog_review="pending")
    client = admin_for(member)
    bundle_page = client.get(reverse("admin:catalog_bundle_change", args=[hidden.bundle_id]))
    html = bundle_page.content.decode()
    assert bundle_page.status_code == 200 and "2.1.0" in html and "2.2.0" not in html
    compare = client.get(reverse("admin:catalog_bundle_compare", args=[hidden.bundle_id]))
    assert "2.2.0" not in compare.content.decode()
    only_there = SkillVersion.objects.get(package__slug="payment-plan")
    url = reverse("admin:catalog_skillversion_change", args=[only_there.pk])
    assert client.get(url).status_code == 404
    shared = SkillVersion.objects.filter(bundle_entries__bundle_version=demo_catalog["2.1.0"])
    assert (
        client.get(
            reverse("admin:catalog_skillversion_change", args=[shared.first().pk])
        ).status_code
        == 200
    )


def test_a_login_of_no_workspace_and_an_unreviewed_version_stay_closed(acme, member, demo_catalog):
    version = demo_catalog["2.1.0"]
    BundleVersion.objects.filter(pk=version.pk).update(catalog_review="pending")
    url = reverse("admin:catalog_bundleversion_change", args=[version.pk])
    assert admin_for(member).get(url).status_code == 404
    nobody = make_user("nobody")
    assert admin_for(nobody).get(url).status_code == 403
