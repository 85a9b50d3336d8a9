"""catalog_viewer and versions_seen_by (the catalog API's reads): the user's roles and
memberships read as facts in one query, then a plain filter that must see exactly what
visible_versions sees, for every kind of user."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group
from django.http import Http404

from catalog.models import BundleVersion, CatalogReview, Publisher
from catalog.selectors import (
    bundle_version_get,
    catalog_viewer,
    versions_seen_by,
    visible_versions,
)
from catalog.services import bundle_version_publish
from pixie.core.people.permissions import AUDITORS_GROUP, OPERATORS_GROUP
from tests.factories import make_bundle_version, make_skill_version, make_user, make_workspace

pytestmark = pytest.mark.django_db


def seen(queryset) -> set[str]:
    return set(queryset.values_list("bundle__slug", flat=True))


@pytest.fixture
def world(operator):
    """A catalog version, a draft and a pending version of a workspace publisher, and a
    draft of the operator's publisher."""
    team = make_workspace("team")
    publisher = Publisher.objects.create(
        slug="team-pub", name="Team", kind=Publisher.Kind.WORKSPACE, workspace=team
    )

    def bundle(slug, *, by=None):
        skill = make_skill_version(f"{slug}-skill", publisher=by)
        version = make_bundle_version(slug, skills=[skill], hosts=(), credentials=())
        if by is not None:
            version.bundle.publisher = by
            version.bundle.save()
        return version

    bundle_version_publish(bundle_version=bundle("in-catalog"), actor=operator)
    bundle("operator-draft")
    bundle("team-draft", by=publisher)
    pending = bundle("team-pending", by=publisher)
    bundle_version_publish(bundle_version=pending, actor=operator)
    BundleVersion.objects.filter(pk=pending.pk).update(catalog_review=CatalogReview.PENDING)
    return team


def people(team, operator):
    member = make_user("member")
    team.memberships.create(user=member, role="member")
    elsewhere = make_user("elsewhere")
    make_workspace("other", members=[elsewhere])
    role_holders = []
    for group in (OPERATORS_GROUP, AUDITORS_GROUP):
        person = make_user(f"in-{group}")
        person.groups.add(Group.objects.get_or_create(name=group)[0])
        role_holders.append(person)
    inactive = make_user("inactive", is_active=False)
    team.memberships.create(user=inactive, role="member")
    return [operator, member, elsewhere, make_user("nowhere"), inactive, *role_holders,
            AnonymousUser()]  # fmt: skip


def test_a_viewer_sees_exactly_what_visible_versions_shows(world, operator):
    for user in people(world, operator):
        assert seen(versions_seen_by(catalog_viewer(user))) == seen(visible_versions(user)), user
    member = get_user_model().objects.get(username="member")
    assert seen(versions_seen_by(catalog_viewer(member))) == {
        "in-catalog", "team-draft", "team-pending"
    }  # fmt: skip


def test_a_limited_viewer_sees_exactly_what_visible_versions_shows(world, operator):
    """Limited to one workspace (a token's limit): a plain member of it, whatever else the
    user is; bundle_version_get says the same."""
    everyone = people(world, operator)
    auditor = get_user_model().objects.get(username="in-auditors")
    other = make_workspace("third", members=[auditor])
    world.memberships.create(user=operator, role="member")
    versions = list(BundleVersion.objects.values_list("bundle__slug", "version"))
    for user in everyone:
        for workspace in (world, other):
            viewer = catalog_viewer(user, limited_to=workspace.pk)
            expected = seen(visible_versions(user, limited_to=workspace.pk))
            assert seen(versions_seen_by(viewer)) == expected, (user, workspace)
            assert {
                slug for slug, version in versions
                if found(user, workspace.pk, slug, version)
            } == expected, (user, workspace)  # fmt: skip
    member = get_user_model().objects.get(username="member")
    team_sees = {"in-catalog", "team-draft", "team-pending"}
    for user in (member, operator):  # a superuser, limited: a member of the team only
        assert seen(visible_versions(user, limited_to=world.pk)) == team_sees, user
    assert seen(visible_versions(member, limited_to=other.pk)) == set()  # not a member there
    assert seen(visible_versions(auditor, limited_to=other.pk)) == {"in-catalog"}


def found(user, limited_to, slug, version) -> bool:
    try:
        bundle_version_get(
            user=user, limited_to=limited_to, slug=slug, version=version, contents=False
        )
    except Http404:
        return False
    return True


def test_the_facts_are_one_query(world, operator, django_assert_num_queries):
    member = people(world, operator)[1]
    with django_assert_num_queries(1):
        viewer = catalog_viewer(member)
    assert viewer.in_a_workspace and not viewer.sees_everything
    assert viewer.publisher_ids == (Publisher.objects.get(slug="team-pub").pk,)
    with django_assert_num_queries(0):
        assert catalog_viewer(operator).sees_everything  # a superuser: no query
    # Limited to a workspace: one query too, for a superuser as well.
    world.memberships.create(user=operator, role="member")
    for user in (member, operator):
        with django_assert_num_queries(1):
            viewer = catalog_viewer(user, limited_to=world.pk)
        assert viewer.in_a_workspace and not viewer.sees_everything
        assert viewer.publisher_ids == (Publisher.objects.get(slug="team-pub").pk,)


def test_a_membership_ended_shows_on_the_next_read(world, operator):
    member = people(world, operator)[1]
    assert "team-draft" in seen(versions_seen_by(catalog_viewer(member)))
    world.memberships.filter(user=member).delete()
    assert seen(versions_seen_by(catalog_viewer(member))) == set()
