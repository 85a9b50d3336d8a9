"""A token limited to one workspace reads the catalog as a plain member of that workspace
would: the catalog, and what that workspace published. What its person sees only through
another workspace, or through a role held outside it (operator, auditor, superuser), is
not there for it: left out of the list, 404 everywhere else, and never a 304."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import BundleVersion, CatalogReview, Publisher
from catalog.services import bundle_version_publish
from pixie.core.models import Membership, Workspace
from pixie.core.people.permissions import AUDITORS_GROUP
from tests.clients import token_client
from tests.factories import make_bundle_version, make_skill_version, make_user, make_workspace

pytestmark = pytest.mark.django_db


def bundle(slug, *, by=None, publish_as=None, pending=False):
    """A version 1.0.0 of a bundle with one skill (a draft unless published)."""
    skill = make_skill_version(f"{slug}-skill", publisher=by)
    version = make_bundle_version(slug, skills=[skill], hosts=(), credentials=())
    if by is not None:
        version.bundle.publisher = by
        version.bundle.save()
    if publish_as is not None:
        bundle_version_publish(bundle_version=version, actor=publish_as)
    if pending:
        BundleVersion.objects.filter(pk=version.pk).update(catalog_review=CatalogReview.PENDING)
    return version


def workspace_publisher(workspace):
    return Publisher.objects.create(
        slug=f"{workspace.slug}-pub",
        name=workspace.name,
        kind=Publisher.Kind.WORKSPACE,
        workspace=workspace,
    )


@pytest.fixture
def pat(operator):
    """Pat belongs to alpha and beta. The catalog holds a public version, a draft of
    alpha's, a draft and a published version pending review of beta's (both seen only
    through beta), and a draft of the operator's publisher (seen only by roles)."""
    pat = make_user("pat")
    alpha = make_workspace("alpha", members=[pat])
    beta = make_workspace("beta", members=[pat])
    bundle("public", publish_as=operator)
    bundle("ops-draft")
    bundle("alpha-draft", by=workspace_publisher(alpha))
    beta_pub = workspace_publisher(beta)
    bundle("beta-draft", by=beta_pub)
    bundle("beta-pending", by=beta_pub, publish_as=operator, pending=True)
    return pat


def listed(client) -> set[str]:
    answer = client.get("/api/bundles/")
    assert answer.status_code == 200
    return {b["slug"] for b in answer.json()["results"]}


def reads(slug) -> list[str]:
    """Every catalog read of a bundle (its version 1.0.0)."""
    version = f"/api/bundles/{slug}/versions/1.0.0/"
    return [
        f"/api/bundles/{slug}/",
        version,
        f"{version}skills/{slug}-skill/files/SKILL.md",
        f"{version}download",
        f"/api/bundles/{slug}/compare/",
    ]


def test_the_list_shows_a_limited_token_what_a_member_of_its_workspace_sees(pat):
    assert listed(token_client(pat)) == {"public", "alpha-draft", "beta-draft", "beta-pending"}
    assert listed(token_client(pat, workspace="alpha")) == {"public", "alpha-draft"}
    assert listed(token_client(pat, workspace="beta")) == {
        "public", "beta-draft", "beta-pending"
    }  # fmt: skip


@pytest.mark.parametrize("slug", ["beta-draft", "beta-pending"])
def test_what_only_another_workspace_shows_is_not_found_for_a_limited_token(pat, slug):
    unlimited, alpha, beta = (
        token_client(pat), token_client(pat, workspace="alpha"), token_client(pat, workspace="beta")
    )  # fmt: skip
    for url in reads(slug):
        assert unlimited.get(url).status_code == 200, url
        assert beta.get(url).status_code == 200, url
        refused = alpha.get(url)
        assert refused.status_code == 404, url
        # As for a bundle that is not there: nothing says it exists.
        missing = alpha.get(url.replace(slug, "no-such-bundle"))
        assert missing.content.replace(b"no-such-bundle", slug.encode()) == refused.content
    assert alpha.get("/api/bundles/public/compare/").status_code == 200
    # Two versions named, one of them beyond the limit: refused as for one that is not there.
    compared = alpha.get(f"/api/bundles/{slug}/compare/", {"from": "1.0.0", "to": "1.0.0"})
    assert compared.status_code == 404


@pytest.mark.parametrize("slug", ["beta-draft", "beta-pending"])
def test_an_etag_from_an_unlimited_token_never_answers_304_to_a_limited_one(pat, slug):
    url = f"/api/bundles/{slug}/versions/1.0.0/"
    unlimited = token_client(pat).get(url)
    etag = unlimited["ETag"]
    assert token_client(pat, workspace="alpha").get(url, HTTP_IF_NONE_MATCH=etag).status_code == 404
    # A token that may see the version, but sees less of the catalog than the unlimited
    # one: the same answer, under its own ETag, which then answers 304.
    beta = token_client(pat, workspace="beta")
    answer = beta.get(url, HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 200 and answer.content == unlimited.content
    assert beta.get(url, HTTP_IF_NONE_MATCH=answer["ETag"]).status_code == 304


def test_the_lists_etag_is_over_what_the_limited_token_sees(pat):
    etag = token_client(pat).get("/api/bundles/")["ETag"]
    answer = token_client(pat, workspace="alpha").get("/api/bundles/", HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 200
    assert {b["slug"] for b in answer.json()["results"]} == {"public", "alpha-draft"}


def test_a_limited_token_keeps_no_role_from_outside_its_workspace(pat, operator):
    pat.groups.add(Group.objects.get_or_create(name=AUDITORS_GROUP)[0])
    Membership.objects.create(workspace=Workspace.objects.get(slug="alpha"), user=operator)
    for person in (pat, operator):  # an auditor; a superuser
        assert "ops-draft" in listed(token_client(person))
        limited = token_client(person, workspace="alpha")
        assert listed(limited) == {"public", "alpha-draft"}
        for url in reads("ops-draft"):
            assert limited.get(url).status_code == 404, (person, url)


def test_a_limited_token_whose_membership_ended_reads_nothing(pat, operator):
    """Removing a member revokes their limited tokens; whatever ends a membership
    otherwise, the token still counts as a member of its workspace only, not as its
    person's roles."""
    Membership.objects.create(workspace=Workspace.objects.get(slug="alpha"), user=operator)
    limited = token_client(operator, workspace="alpha")
    assert limited.get("/api/workspaces/alpha/history/").status_code == 200
    Membership.objects.filter(user=operator).delete()
    assert listed(limited) == set()
    assert limited.get("/api/bundles/public/versions/1.0.0/").status_code == 404
    # An operator reads every workspace's history, but not through this token.
    assert token_client(operator).get("/api/workspaces/alpha/history/").status_code == 200
    assert limited.get("/api/workspaces/alpha/history/").status_code == 404
    assert limited.get("/api/workspaces/alpha/skills/any/revisions/").status_code == 404


def queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_a_limited_token_reads_the_catalog_in_as_many_queries_as_an_unlimited_one(pat):
    unlimited, limited = token_client(pat), token_client(pat, workspace="beta")
    for url in ("/api/bundles/", "/api/bundles/beta-pending/versions/1.0.0/"):
        queries(unlimited, url), queries(limited, url)  # last_used_at written
        assert queries(limited, url) == queries(unlimited, url), url
