"""The catalog API's list pages (catalog.bundle_pages, prepared queries) hold exactly what
selectors.bundle_list's queryset holds, for every kind of viewer, limited to a workspace
or not: the same bundles in the same order, the same count, the same visible versions."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db.models import Count, Window

from catalog.bundle_pages import BundlePages
from catalog.selectors import bundle_list
from tests.catalog.test_selectors_viewer import people, world  # noqa: F401 (a fixture)
from tests.factories import make_bundle_version, make_skill_version, make_workspace

pytestmark = pytest.mark.django_db


def page_of(bundles) -> list:
    return [
        (bundle.slug, bundle.publisher.slug, bundle._count_in_page,
         sorted((v.pk, v.version, v.status) for v in bundle.visible_versions))
        for bundle in bundles
    ]  # fmt: skip


def orm_page(user, limited_to, bottom, limit) -> list:
    counted = bundle_list(user=user, limited_to=limited_to).annotate(
        _count_in_page=Window(Count("*"))
    )
    return page_of(counted[bottom : bottom + limit])


def test_every_viewer_gets_the_page_the_orm_gives(world, operator):  # noqa: F811
    everyone = people(world, operator)
    other = make_workspace("third", members=[everyone[5]])  # an auditor's own workspace
    world.memberships.create(user=operator, role="member")
    for user in everyone:
        for limited_to in (None, world.pk, other.pk):
            for bottom, limit in ((0, 50), (1, 2), (3, 50)):
                expected = orm_page(user, limited_to, bottom, limit)
                pages = BundlePages(user=user, limited_to=limited_to)
                assert page_of(pages.page_rows(bottom, limit)) == expected, (user, limited_to)
    assert BundlePages(user=AnonymousUser()).page_rows(0, 50) == []


def test_a_page_its_versions_and_the_count_are_one_query_whatever_the_size(
    operator, django_assert_num_queries
):
    from catalog.services import bundle_version_publish

    for number in range(12):
        skill = make_skill_version(f"skill-{number:03}")
        for version in ("1.0.0", "1.1.0"):
            draft = make_bundle_version(f"bundle-{number:03}", version=version, skills=[skill],
                                        hosts=(), credentials=())  # fmt: skip
            bundle_version_publish(bundle_version=draft, actor=operator)
    pages = BundlePages(user=operator)
    for bottom, limit in ((0, 50), (0, 5), (10, 3)):
        with django_assert_num_queries(1):
            rows = pages.page_rows(bottom, limit)
        assert page_of(rows) == orm_page(operator, None, bottom, limit)
        assert all(len(bundle.visible_versions) == 2 for bundle in rows)
    assert pages.page_rows(50, 50) == [] and pages.count() == 12
