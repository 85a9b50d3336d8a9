"""The catalog API's list pages (catalog.bundle_pages, prepared queries) hold exactly what
selectors.bundle_list's queryset holds, for every kind of viewer, limited to a workspace
or not: the same bundles in the same order, the same count, the same visible versions."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import Count, Window

from catalog.bundle_pages import BundlePages
from catalog.models import Bundle, Publisher
from catalog.selectors import bundle_list
from tests.catalog.test_selectors_viewer import people, world  # noqa: F401 (a fixture)
from tests.factories import (
    make_bundle_version,
    make_skill_version,
    make_user,
    make_workspace,
)

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
    # A bundle with no version at all: nobody's list shows it, a superuser's included.
    Bundle.objects.create(slug="empty", name="Empty", publisher=Publisher.objects.first())
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


def test_every_page_sends_the_same_sql(operator):
    """The bounds are parameters (LIMIT %s OFFSET %s), not part of the SQL: one statement
    for every page, which a connection may prepare once."""
    from catalog.services import bundle_version_publish

    for number in range(4):
        draft = make_bundle_version(f"bundle-{number}", skills=[make_skill_version(f"s-{number}")],
                                    hosts=(), credentials=())  # fmt: skip
        bundle_version_publish(bundle_version=draft, actor=operator)
    member = make_workspace("team").memberships.create(user=make_user("m"), role="owner").user
    sent = []

    def record(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    for user, limited_to in (
        (operator, None),
        (member, None),
        (member, member.memberships.get().workspace_id),
    ):
        sent.clear()
        with connection.execute_wrapper(record):
            pages = [BundlePages(user=user, limited_to=limited_to).page_rows(b, n)
                     for b, n in ((0, 2), (2, 2), (1, 50))]  # fmt: skip
        assert [[b.slug for b in page] for page in pages] == [
            ["bundle-0", "bundle-1"], ["bundle-2", "bundle-3"], ["bundle-1", "bundle-2", "bundle-3"]
        ]  # fmt: skip
        assert all(b._count_in_page == 4 for page in pages for b in page)
        assert len(sent) == 3 and len(set(sent)) == 1, sent
