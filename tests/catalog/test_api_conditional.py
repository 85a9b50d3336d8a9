"""Conditional GETs on the catalog API: an unchanged version or list answers 304 before
anything is serialised, from the catalog's stamp and the reader's facts; a yank, a
review, a new version or a membership ended is never hidden behind one."""

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from catalog.api.serializers import BundleSerializer, BundleVersionHeadSerializer
from catalog.models import Bundle, BundleVersion, Publisher
from catalog.services import bundle_version_publish, bundle_version_yank
from catalog.services.catalog_review import publisher_trust
from catalog.services.signing import publisher_key_rotate
from pixie.core.models import ApiToken, Membership
from tests.clients import token_client
from tests.factories import (
    make_bundle_version,
    make_skill_version,
    make_user,
    make_workspace,
)

pytestmark = pytest.mark.django_db

VERSION = "/api/bundles/accounts-receivable/versions/2.1.0/"


# How a reader comes: a login (here forced, as a session would be), DRF's token, a Pixie
# token, and one limited to the reader's workspace. A token is read in a query of its own.
READERS = ["login", "drf-token", "pixie-token", "limited-token"]


@pytest.fixture(params=READERS)
def api(request, demo_catalog):
    reader = make_user("reader")
    make_workspace("readers", members=[reader])
    if request.param == "login":
        client = APIClient()
        client.force_authenticate(reader)
    elif request.param == "drf-token":
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=reader).key}")
    else:
        limits = {"workspace": "readers"} if request.param == "limited-token" else {}
        client = token_client(reader, **limits)
    client.get("/api/bundles/")  # a Pixie token writes last_used_at on its first use
    client.reader, client.kind = reader, request.param
    return client


def again(api, url, etag):
    return api.get(url, HTTP_IF_NONE_MATCH=etag)


def test_an_unchanged_version_answers_304_from_its_rows_alone(
    api, django_assert_num_queries, monkeypatch
):
    first = api.get(VERSION)
    assert first.status_code == 200
    etag = first["ETag"]
    assert etag.startswith('"') and first["Cache-Control"] == "private, no-cache"
    # Nothing is read or serialised for a 304 but the catalog's stamp: the reader's
    # facts were kept under it. One query: an API token's own read carries the stamp.
    monkeypatch.setattr(BundleVersionHeadSerializer, "to_representation", refuse)
    with django_assert_num_queries(1) as queries:
        answer = again(api, VERSION, etag)
    assert "catalog_catalogstamp" in queries.captured_queries[0]["sql"]
    assert answer.status_code == 304 and answer.content == b""
    assert answer["ETag"] == etag and answer["Cache-Control"] == "private, no-cache"
    monkeypatch.undo()
    assert again(api, VERSION, '"something-else"').status_code == 200


def refuse(*args, **kwargs):
    raise AssertionError("serialised for a 304")


def test_a_published_versions_answer_is_rendered_once_and_served_as_rendered(
    api, operator, django_assert_num_queries, monkeypatch
):
    other = make_user("other-reader")
    Membership.objects.create(workspace=Membership.objects.get(user__username="reader").workspace,
                              user=other, role=Membership.Role.MEMBER)  # fmt: skip
    first = api.get(VERSION)
    # A second reader who may see what the first sees, another client: the same bytes,
    # read from what was rendered, with nothing serialised; the catalog's stamp and this
    # reader's facts are the two queries.
    client = APIClient()
    client.force_authenticate(other)
    monkeypatch.setattr(BundleVersionHeadSerializer, "to_representation", refuse)
    with django_assert_num_queries(2):
        second = client.get(VERSION)
    monkeypatch.undo()
    assert second.status_code == 200 and second.content == first.content
    for header in ("Content-Type", "ETag", "Cache-Control", "Vary", "Allow"):
        assert second[header] == first[header], header
    assert second.json() == first.json()
    # The browsable API still renders as usual.
    assert client.get(VERSION, HTTP_ACCEPT="text/html")["Content-Type"].startswith("text/html")
    # A yank changes the ETag, so the rendered answer kept for the old one is not served.
    bundle_version_yank(bundle_version=BundleVersion.objects.get(version="2.1.0"),
                        actor=operator, reason="Posts payments twice.")  # fmt: skip
    yanked = client.get(VERSION)
    assert yanked["ETag"] != first["ETag"] and yanked.json()["status"] == "yanked"


def test_a_list_page_is_rendered_once_for_what_it_shows(api, operator, monkeypatch):
    first = api.get("/api/bundles/")
    monkeypatch.setattr(BundleSerializer, "to_representation", refuse)
    again_fresh = api.get("/api/bundles/")
    assert again_fresh.content == first.content and again_fresh["ETag"] == first["ETag"]
    # Another address (a page number given) makes other links: rendered for itself.
    monkeypatch.undo()
    numbered = api.get("/api/bundles/?page=1")
    assert numbered["ETag"] != first["ETag"] and numbered.json() == first.json()
    # What the page shows changes: so do the ETag and the bytes.
    bundle_version_yank(bundle_version=BundleVersion.objects.get(version="2.2.0"),
                        actor=operator, reason="Withdrawn.")  # fmt: skip
    changed = api.get("/api/bundles/")
    assert changed["ETag"] != first["ETag"]
    latest = {b["slug"]: b["latest_version"] for b in changed.json()["results"]}
    assert latest["accounts-receivable"] == "2.1.0"


def test_a_new_signing_key_changes_the_etag_of_what_the_old_one_signed(api, operator):
    etag = api.get(VERSION)["ETag"]
    publisher = BundleVersion.objects.get(version="2.1.0").bundle.publisher
    publisher_key_rotate(publisher=publisher, actor=operator)
    changed = again(api, VERSION, etag)
    assert changed.status_code == 200 and changed.json()["signature"]["key_retired"] is True
    assert again(api, VERSION, changed["ETag"]).status_code == 304


def test_a_membership_ended_is_seen_on_the_next_conditional_request(api):
    etag = api.get(VERSION)["ETag"]
    Membership.objects.filter(user__username="reader").delete()
    assert again(api, VERSION, etag).status_code == 404


def test_a_yank_is_never_hidden_behind_a_304(api, operator):
    etag = api.get(VERSION)["ETag"]
    bundle_version_yank(
        bundle_version=BundleVersion.objects.get(version="2.1.0"), actor=operator,
        reason="Posts payments twice; use 2.2.0.",
    )  # fmt: skip
    answer = again(api, VERSION, etag)
    assert answer.status_code == 200
    assert (answer.json()["status"], answer.json()["yank_reason"]) == (
        "yanked",
        "Posts payments twice; use 2.2.0.",
    )
    assert answer["ETag"] != etag
    assert again(api, VERSION, answer["ETag"]).status_code == 304


def test_the_publishers_trust_changes_the_etag(api, operator):
    publisher = Publisher.objects.create(slug="northwind", name="Northwind", kind="third_party")
    skill = make_skill_version("nw-lookup", body="Look it up.", publisher=publisher)
    draft = make_bundle_version("nw-tools", skills=[skill], hosts=(), credentials=())
    draft.bundle.publisher = publisher
    draft.bundle.save()
    bundle_version_publish(bundle_version=draft, actor=operator)
    publisher_trust(publisher=publisher, trusted=True, actor=operator)
    url = "/api/bundles/nw-tools/versions/1.0.0/"
    operator_api = APIClient()
    operator_api.force_authenticate(operator)
    etag = operator_api.get(url)["ETag"]
    publisher_trust(publisher=publisher, trusted=False, actor=operator)
    changed = again(operator_api, url, etag)
    assert changed.status_code == 200 and changed.json()["signature"]["signer_trusted"] is False


def test_a_drafts_etag_follows_its_contents(operator):
    operator_api = APIClient()
    operator_api.force_authenticate(operator)
    draft = make_bundle_version("draft-kit", skills=[make_skill_version("draft-one")])
    url = "/api/bundles/draft-kit/versions/1.0.0/"
    etag = operator_api.get(url)["ETag"]
    assert again(operator_api, url, etag).status_code == 304
    draft.skills.create(skill_version=make_skill_version("draft-two"), position=2)
    changed = again(operator_api, url, etag)
    assert changed.status_code == 200
    assert [s["slug"] for s in changed.json()["skills"]] == ["draft-one", "draft-two"]


def test_the_list_carries_an_etag_of_what_it_shows(api, operator):
    first = api.get("/api/bundles/")
    etag = first["ETag"]
    assert again(api, "/api/bundles/", etag).status_code == 304
    skill = make_skill_version("late-step", body="Look it up.")
    bundle_version_publish(
        bundle_version=make_bundle_version("late-kit", skills=[skill], hosts=(), credentials=()),
        actor=operator,
    )
    changed = again(api, "/api/bundles/", etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert "late-kit" in [b["slug"] for b in changed.json()["results"]]


def test_an_unchanged_list_answers_304_without_serialising(
    api, django_assert_num_queries, monkeypatch
):
    etag = api.get("/api/bundles/")["ETag"]
    monkeypatch.setattr(BundleSerializer, "to_representation", refuse)
    # The catalog's stamp (with the token, for an API token): the reader's facts were
    # kept under it.
    with django_assert_num_queries(1) as queries:
        answer = again(api, "/api/bundles/", etag)
    assert "catalog_catalogstamp" in queries.captured_queries[0]["sql"]
    assert answer.status_code == 304 and answer["ETag"] == etag
    monkeypatch.undo()
    # Another page, or the same page at another address, is another resource.
    assert again(api, "/api/bundles/?page=1", etag).status_code == 200


def test_a_renamed_bundle_or_publisher_changes_the_lists_etag(api):
    etag = api.get("/api/bundles/")["ETag"]
    Bundle.objects.filter(slug="accounts-receivable").update(name="Receivables")
    renamed = again(api, "/api/bundles/", etag)
    assert renamed.status_code == 200 and renamed.json()["results"][0]["name"] == "Receivables"
    Publisher.objects.update(name="Someone else")
    assert again(api, "/api/bundles/", renamed["ETag"]).status_code == 200


@pytest.mark.parametrize("url", [VERSION, "/api/bundles/"])
@pytest.mark.parametrize("ended", ["revoked", "login deactivated"])
def test_a_token_ended_is_refused_on_its_next_conditional_request(api, url, ended):
    """A token revoked (or its login deactivated) a moment ago gets 401 with a current
    ETag, never a 304: the token is read before the ETag is compared."""
    if api.kind == "login":
        pytest.skip("a login, not a token")
    etag = api.get(url)["ETag"]
    assert again(api, url, etag).status_code == 304
    if ended == "login deactivated":
        type(api.reader).objects.filter(pk=api.reader.pk).update(is_active=False)
    elif api.kind == "drf-token":
        Token.objects.filter(user=api.reader).delete()  # DRF's tokens are revoked by deleting
    else:
        ApiToken.objects.filter(user=api.reader).update(revoked_at=timezone.now())
    refused = again(api, url, etag)
    assert refused.status_code == 401 and "ETag" not in refused


def test_a_superusers_answers_are_their_own(api, operator):
    """A superuser sees drafts too: their list is another answer than a reader's, with
    another ETag, and a draft made shows in theirs, never in the reader's."""
    Membership.objects.create(workspace=api.reader.memberships.get().workspace, user=operator)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    etag = client.get("/api/bundles/")["ETag"]
    readers = api.get("/api/bundles/")
    assert readers["ETag"] != etag
    make_bundle_version("hidden-draft", skills=[make_skill_version("hidden-step")])
    changed = again(client, "/api/bundles/", etag)
    assert changed.status_code == 200
    assert "hidden-draft" in [b["slug"] for b in changed.json()["results"]]
    for_the_reader = again(api, "/api/bundles/", readers["ETag"])
    assert for_the_reader.status_code == 200  # the catalog changed: asked again, in full
    assert "hidden-draft" not in [b["slug"] for b in for_the_reader.json()["results"]]
    assert for_the_reader.content == readers.content


def test_readers_who_may_see_the_same_share_an_etag(api):
    """Two members of one workspace see the same catalog: the same ETag, so either's 304
    holds for both; a reader of no workspace sees nothing, under another."""
    other = make_user("other-reader")
    Membership.objects.create(workspace=api.reader.memberships.get().workspace, user=other)
    outsider = make_user("outsider")
    etag = api.get(VERSION)["ETag"]
    client = APIClient()
    client.force_authenticate(other)
    assert again(client, VERSION, etag).status_code == 304
    client.force_authenticate(outsider)
    assert again(client, VERSION, etag).status_code == 404
