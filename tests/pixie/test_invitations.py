"""Someone who may have a login joins a workspace by invitation: an owner invites an
email address and gets a one-time link; the person opens it and joins with the login
they are signed in with, or makes their own. Nobody is added without accepting, and
nothing an owner is answered says whether a login exists."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.utils import timezone
from reversion.models import Version

from pixie.core.models import Invitation, Membership, Notification
from pixie.core.people.invitations import NOT_VALID
from pixie.core.people.tokens import key_hash
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

User = get_user_model()


def invite(owner, email="rita@example.com", role="member", workspace="acme") -> str:
    """The link the API hands the owner, as a path on this server."""
    made = api_for(owner).post(
        f"/api/workspaces/{workspace}/invitations/", {"email": email, "role": role},
        format="json",
    )  # fmt: skip
    assert made.status_code == 201, made.json()
    assert made["Cache-Control"] == "no-store"
    return "/accounts/" + made.json()["link"].split("/accounts/", 1)[1]


def test_an_invited_login_joins_only_when_it_accepts(acme, owner):
    otto = make_user("otto")
    make_workspace("globex", owner=otto)
    link = invite(owner, email="otto@globex.example", role="owner")
    # Invited, not added: otto is in no list of Acme's and reaches nothing of it.
    assert not Membership.objects.filter(workspace=acme, user=otto).exists()
    assert api_for(otto).get("/api/workspaces/acme/members/").status_code == 404
    stored = Invitation.objects.get()
    assert stored.key_hash == key_hash(link.rstrip("/").rsplit("/", 1)[1])
    assert link.rstrip("/").rsplit("/", 1)[1] not in Version.objects.get_for_object(
        stored
    ).first().serialized_data  # the secret is nowhere; its hash is kept out of history
    assert "key_hash" not in Version.objects.get_for_object(stored).first().serialized_data

    browser = admin_for(otto)
    page = browser.get(link)
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert b"owen invites otto@globex.example to join <strong>Acme</strong> as an owner" in (
        page.content
    )
    assert b"You are signed in as <strong>otto</strong>" in page.content
    joined = browser.post(link, {"action": "join"})
    assert joined.status_code == 302
    assert joined["Location"] == f"/admin/pixie/workspace/{acme.pk}/dashboard/"
    membership = Membership.objects.get(workspace=acme, user=otto)
    assert membership.role == "owner" and membership.owner_since is not None
    # Acme's other owners are told; the history says who accepted.
    assert Notification.objects.filter(
        user=owner, title__startswith="otto is now an owner of Acme"
    ).exists()
    stored.refresh_from_db()
    assert stored.accepted_by == otto and stored.state == "accepted"
    assert Version.objects.get_for_object(stored).first().revision.user == otto
    # The link works once.
    again = admin_for(make_user("eve")).get(link)
    assert again.status_code == 404 and NOT_VALID.encode() in again.content


def test_a_person_with_no_login_makes_their_own_and_joins(acme, owner):
    link = invite(owner, email="nora@example.com")
    browser = Client()
    page = browser.get(link)
    assert page.status_code == 200 and b'id="new-login"' in page.content
    assert b'id="sign-in"' in page.content
    # A taken username is said to the invitee (making a login cannot avoid it), and a
    # weak password is refused; neither makes anything.
    taken = browser.post(link, {"action": "new", "username": "owen",
                                "password1": "a long new password 7",
                                "password2": "a long new password 7"})  # fmt: skip
    assert taken.status_code == 200
    assert b"&#x27;owen&#x27; is taken; choose another" in taken.content
    weak = browser.post(link, {"action": "new", "username": "nora", "password1": "nora",
                               "password2": "nora"})  # fmt: skip
    assert weak.status_code == 200 and b"This password is too short" in weak.content
    assert not User.objects.filter(username="nora").exists()
    made = browser.post(link, {"action": "new", "username": "nora",
                               "password1": "a long new password 7",
                               "password2": "a long new password 7"})  # fmt: skip
    assert made.status_code == 302
    nora = User.objects.get(username="nora")
    assert nora.email == "nora@example.com" and nora.is_staff
    assert Membership.objects.get(workspace=acme, user=nora).role == "member"
    assert browser.get(made["Location"]).status_code == 200  # signed in, on Acme's home
    assert Client().login(username="nora", password="a long new password 7")


def test_the_members_page_invites_lists_and_revokes(acme, owner):
    client = admin_for(owner)
    url = f"/admin/pixie/workspace/{acme.pk}/members/"
    page = client.post(url, {"action": "invite", "invite-email": "rita@example.com",
                             "invite-role": "member"})  # fmt: skip
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    link = re.search(rb"<code>(http[^<]+/accounts/invitation/[^<]+)</code>", page.content)
    assert link, "the page shows the one-time link"
    path = "/accounts/" + link.group(1).decode().split("/accounts/", 1)[1]
    listed = client.get(url)
    assert b"rita@example.com" in listed.content and link.group(1) not in listed.content
    # The same address twice is refused while the first waits.
    twice = client.post(url, {"action": "invite", "invite-email": "rita@example.com",
                              "invite-role": "owner"})  # fmt: skip
    assert b"has an invitation to Acme waiting already" in twice.content
    bad = client.post(url, {"action": "invite", "invite-email": "not an address",
                            "invite-role": "member"})  # fmt: skip
    assert b"Enter a valid email address." in bad.content
    assert acme.invitations.count() == 1
    invitation = acme.invitations.get()
    revoked = client.post(url, {"action": "uninvite", "invitation": invitation.pk})
    assert revoked.status_code == 302
    after = client.get(url)
    assert b"Revoked the invitation of rita@example.com." in after.content
    assert b"No invitation is waiting." in after.content
    assert Client().get(path).status_code == 404  # revoked: the link opens nothing


def test_a_link_that_expired_or_was_revoked_opens_nothing(acme, owner):
    link = invite(owner)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    for browser in (Client(), admin_for(make_user("rita"))):
        page = browser.get(link)
        assert page.status_code == 404 and NOT_VALID.encode() in page.content
        assert browser.post(link, {"action": "join"}).status_code == 404
    assert Membership.objects.filter(workspace=acme).count() == 2


def test_a_member_already_leaves_the_link_for_whom_it_was_meant(acme, owner, member):
    link = invite(owner, email="mia@example.com")
    refused = admin_for(member).post(link, {"action": "join"}, follow=True)
    assert b"You are already a member of Acme" in refused.content
    assert Invitation.objects.get().state == "waiting"


def test_a_workspace_has_at_most_a_hundred_invitations_waiting(acme, owner):
    later = timezone.now() + timedelta(days=1)
    Invitation.objects.bulk_create(
        Invitation(workspace=acme, email=f"p{index}@example.com", key_hash=f"{index:064x}",
                   expires_at=later)
        for index in range(100)
    )  # fmt: skip
    refused = api_for(owner).post(
        "/api/workspaces/acme/invitations/", {"email": "one-more@example.com"}, format="json"
    )
    assert refused.status_code == 409 and refused.json()["code"] == "too_many_invitations"
    Invitation.objects.filter(email="p0@example.com").update(revoked_at=timezone.now())
    invite(owner, email="one-more@example.com")


def test_invitations_are_owners_business(acme, owner, member):
    invite(owner)
    stranger = make_user("otto")
    make_workspace("globex", owner=stranger)
    assert api_for(member).get("/api/workspaces/acme/invitations/").status_code == 403
    refused = api_for(member).post(
        "/api/workspaces/acme/invitations/", {"email": "x@example.com"}, format="json"
    )
    assert refused.status_code == 403
    assert api_for(stranger).get("/api/workspaces/acme/invitations/").status_code == 404
    pk = Invitation.objects.get().pk
    assert api_for(stranger).delete(f"/api/workspaces/acme/invitations/{pk}/").status_code == 404
    assert api_for(member).delete(f"/api/workspaces/acme/invitations/{pk}/").status_code == 403
    listed = api_for(owner).get("/api/workspaces/acme/invitations/").json()["results"]
    assert [(row["email"], row["invited_by"]) for row in listed] == [("rita@example.com", "owen")]
    assert "link" not in listed[0] and "key_hash" not in listed[0]
    assert api_for(owner).delete(f"/api/workspaces/acme/invitations/{pk}/").status_code == 204
    assert api_for(owner).get("/api/workspaces/acme/invitations/").json()["results"] == []


@override_settings(PIXIE_INVITATION_MISSES_PER_ADDRESS="3/15m")
def test_guessing_links_is_paused_by_address(acme, owner):
    from django.core.cache import caches

    caches["ratelimit"].clear()
    link = invite(owner)
    guesser = Client(REMOTE_ADDR="203.0.113.9")
    for attempt in range(3):
        assert guesser.get(f"/accounts/invitation/pixie_inv_guess{attempt}/").status_code == 404
    paused = guesser.get(link)  # even the right link waits now
    assert paused.status_code == 429 and b"Too many invitation links" in paused.content
    assert Client(REMOTE_ADDR="203.0.113.10").get(link).status_code == 200


def test_the_request_log_keeps_no_invitation_secret(acme, owner, caplog):
    link = invite(owner)
    secret = link.rstrip("/").rsplit("/", 1)[1]
    caplog.clear()
    with caplog.at_level("INFO", logger="pixie.request"):
        assert Client().get(link).status_code == 200
    lines = [record.getMessage() for record in caplog.records if record.name == "pixie.request"]
    assert lines == ["GET /accounts/invitation/…/ 200"]
    assert not [record for record in caplog.records
                if secret in record.getMessage() or secret in getattr(record, "path", "")]


def test_the_invitations_list_costs_the_same_for_many(
    acme, owner, django_assert_max_num_queries
):
    later = timezone.now() + timedelta(days=1)
    Invitation.objects.bulk_create(
        Invitation(workspace=acme, email=f"p{index}@example.com", key_hash=f"{index:064x}",
                   expires_at=later, invited_by=owner)
        for index in range(60)
    )  # fmt: skip
    with django_assert_max_num_queries(6):
        listed = api_for(owner).get("/api/workspaces/acme/invitations/")
    assert listed.json()["count"] == 60
