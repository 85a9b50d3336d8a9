"""Owners run their workspace's people and tokens without an operator: make a login
(with a one-time password link) but never add an existing one (that is an invitation,
tests/pixie/test_invitations.py), change roles, remove people, and keep at least one
owner; each person makes, lists and revokes their own API tokens, limited to one
workspace or to reading; a revoked token fails on the very next request."""

import hashlib
import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient
from reversion.models import Version

from pixie.core.models import ApiToken, Membership
from pixie.core.people.tokens import key_hash
from tests.admin_forms import change_form_data
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

User = get_user_model()


def token_client(secret) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


def make_token(user, **body) -> str:
    made = api_for(user).post("/api/tokens/", {"name": "CI", **body}, format="json")
    assert made.status_code == 201, made.json()
    return made.json()["secret"]


# --- members and roles -----------------------------------------------------------------


def test_an_owner_cannot_add_an_existing_login_and_learns_nothing_of_who_has_one(acme, owner):
    """The attack: an owner POSTs other people's usernames (another tenant's owner, the
    superuser) to pull them in, and reads from the answers which usernames exist."""
    otto = make_user("otto")
    make_workspace("globex", owner=otto)
    User.objects.create_superuser("root", "root@example.com", "x")
    client = api_for(owner)
    answers = {
        username: client.post(
            "/api/workspaces/acme/members/",
            {"username": username, "create": False},
            format="json",
        )  # fmt: skip
        for username in ("otto", "root", "no-such-person")
    }
    assert {answer.status_code for answer in answers.values()} == {400}
    details = {answer.json()["detail"] for answer in answers.values()}
    assert details == {
        "username: Pixie does not add an existing login; invite the person by email "
        "address instead, and they join with their own login when they accept"
    }
    assert {answer.json()["code"] for answer in answers.values()} == {"invite_instead"}
    assert not Membership.objects.filter(user__username__in=["otto", "root"], workspace=acme)
    # The members page offers no way to name an existing login either.
    page = admin_for(owner).post(
        f"/admin/pixie/workspace/{acme.pk}/members/",
        {"action": "add", "username": "otto", "role": "owner", "create": "on"},
    )
    assert page.status_code == 200
    assert b"is taken; choose another" in page.content  # what making a login must say
    assert not Membership.objects.filter(user=otto, workspace=acme).exists()


def test_a_member_reads_the_members_but_changes_nothing(acme, member):
    make_user("rita")
    client = api_for(member)
    assert client.get("/api/workspaces/acme/members/").status_code == 200
    refused = client.post("/api/workspaces/acme/members/", {"username": "rita"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only an owner of Acme can do this; you are a member."
    assert (
        client.patch(
            "/api/workspaces/acme/members/owen/", {"role": "member"}, format="json"
        ).status_code
        == 403
    )
    assert client.delete("/api/workspaces/acme/members/owen/").status_code == 403
    assert Membership.objects.filter(workspace=acme).count() == 2
    # The page shows the list and no form.
    page = admin_for(member).get(f"/admin/pixie/workspace/{acme.pk}/members/")
    assert page.status_code == 200
    assert b'id="add-member"' not in page.content and b"Change role" not in page.content
    assert b'id="invite"' not in page.content and b'id="invitations"' not in page.content
    assert b"Only an owner of Acme can do this." in page.content


def test_an_owner_of_another_workspace_manages_nothing_here(acme):
    other = make_user("otto")
    make_workspace("globex", owner=other)
    client = api_for(other)
    assert client.get("/api/workspaces/acme/members/").status_code == 404
    assert (
        client.post(
            "/api/workspaces/acme/members/", {"username": "otto"}, format="json"
        ).status_code
        == 404
    )
    assert client.delete("/api/workspaces/acme/members/mia/").status_code == 404
    assert client.get("/api/workspaces/acme/tokens/").status_code == 404
    assert admin_for(other).get(f"/admin/pixie/workspace/{acme.pk}/members/").status_code == 404
    assert Membership.objects.filter(workspace=acme).count() == 2


def test_a_new_login_sets_its_password_through_a_one_time_link(acme, owner):
    page = admin_for(owner).post(
        f"/admin/pixie/workspace/{acme.pk}/members/",
        {"action": "add", "username": "nora", "role": "member", "email": "nora@acme.example"},
    )  # fmt: skip
    assert page.status_code == 200
    link = re.search(rb"<code>(http[^<]+/accounts/set-password/[^<]+)</code>", page.content)
    assert link, "the page shows the one-time link"
    nora = User.objects.get(username="nora")
    assert not nora.has_usable_password() and nora.email == "nora@acme.example"
    assert Membership.objects.get(workspace=acme, user=nora).role == "member"
    # The person opens it (Django moves the token into the session), sets a password...
    path = link.group(1).decode().split("127.0.0.1:8000", 1)[-1]
    browser = Client()
    form = browser.get(path, follow=True)
    assert form.status_code == 200 and b"new_password1" in form.content
    done = browser.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a long new password 7", "new_password2": "a long new password 7"},
    )
    assert done.status_code == 302
    assert Client().login(username="nora", password="a long new password 7")
    # ...and the link works once only.
    again = Client().get(path, follow=True)
    assert b"new_password1" not in again.content


def test_making_a_login_that_exists_is_refused_with_its_name(acme, owner):
    answer = api_for(owner).post(
        "/api/workspaces/acme/members/", {"username": "mia", "create": True}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("username: 'mia' is taken; choose another")
    assert answer.json()["code"] == "username_taken"
    bad_role = api_for(owner).post(
        "/api/workspaces/acme/members/", {"username": "mia", "role": "king"}, format="json"
    )
    assert bad_role.status_code == 400 and "role" in bad_role.json()["fields"]
    assert Membership.objects.filter(workspace=acme).count() == 2


def test_roles_change_but_a_workspace_always_keeps_an_owner(acme, owner, member):
    client = api_for(owner)
    last = client.patch("/api/workspaces/acme/members/owen/", {"role": "member"}, format="json")
    assert last.status_code == 409
    assert last.json()["detail"] == (
        "owen is the last owner of Acme; make someone else an owner first"
    )
    assert client.delete("/api/workspaces/acme/members/owen/").status_code == 409
    promoted = client.patch("/api/workspaces/acme/members/mia/", {"role": "owner"}, format="json")
    assert promoted.status_code == 200 and promoted.json()["role"] == "owner"
    # Now owen may step down, and mia is the last owner.
    assert (
        client.patch(
            "/api/workspaces/acme/members/owen/", {"role": "member"}, format="json"
        ).status_code
        == 200
    )
    assert api_for(member).delete("/api/workspaces/acme/members/mia/").status_code == 409
    assert list(
        Membership.objects.filter(workspace=acme, role="owner").values_list(
            "user__username", flat=True
        )
    ) == ["mia"]


def _workspace_form(client, workspace):
    """The workspace's change page as a superuser's browser would post it back, and the
    prefix of its members' rows."""
    page = client.get(f"/admin/pixie/workspace/{workspace.pk}/change/")
    assert page.status_code == 200
    data = change_form_data(page)
    formset = page.context["inline_admin_formsets"][0].formset
    rows = {form.instance.user.username: form.prefix for form in formset.forms}
    return data, rows


@pytest.mark.parametrize("change", ["demote", "delete"])
def test_the_workspace_form_keeps_the_last_owner(acme, owner, member, change):
    """The members inline of a workspace's change page (a superuser's) meets the same rule
    as the members page: the last owner is neither demoted nor removed there."""
    superuser = User.objects.create_superuser("sue", password="pw-super-1")
    client = admin_for(superuser)
    data, rows = _workspace_form(client, acme)
    if change == "demote":
        data[f"{rows['owen']}-role"] = "member"
    else:
        data[f"{rows['owen']}-DELETE"] = "on"
    versions = Version.objects.count()
    refused = client.post(f"/admin/pixie/workspace/{acme.pk}/change/", data)
    assert refused.status_code == 200
    assert "owen is the last owner of Acme; make someone else an owner first" in (
        refused.content.decode()
    )
    assert list(
        Membership.objects.filter(workspace=acme)
        .order_by("user__username")
        .values_list("user__username", "role")
    ) == [("mia", "member"), ("owen", "owner")]
    assert Version.objects.count() == versions


def test_the_workspace_form_hands_ownership_over_in_one_save(acme, owner, member):
    superuser = User.objects.create_superuser("sue", password="pw-super-1")
    client = admin_for(superuser)
    data, rows = _workspace_form(client, acme)
    data[f"{rows['mia']}-role"] = "owner"
    data[f"{rows['owen']}-DELETE"] = "on"
    saved = client.post(f"/admin/pixie/workspace/{acme.pk}/change/", data)
    assert saved.status_code == 302
    assert list(
        Membership.objects.filter(workspace=acme).values_list("user__username", "role")
    ) == [("mia", "owner")]


def test_removing_a_member_revokes_their_tokens_for_that_workspace(acme, owner, member):
    limited = make_token(member, workspace="acme")
    assert token_client(limited).get("/api/workspaces/acme/plans/").status_code == 200
    url = f"/admin/pixie/workspace/{acme.pk}/members/"
    asked = admin_for(owner).post(url, {"action": "remove", "username": "mia"})
    # Asked first, saying what removing does; nothing changes until confirmed.
    assert asked.status_code == 200
    assert "Remove mia from Acme?" in asked.content.decode()
    assert Membership.objects.filter(workspace=acme, user=member).exists()
    page = admin_for(owner).post(url, {"action": "remove", "username": "mia", "confirmed": "yes"})
    assert page.status_code == 302
    assert not Membership.objects.filter(workspace=acme, user=member).exists()
    assert token_client(limited).get("/api/workspaces/acme/plans/").status_code == 401
    removal = Version.objects.get_for_object(acme).first()
    assert removal.revision.comment == "Removed mia from Acme"
    assert removal.revision.user == owner


def test_the_members_page_costs_the_same_for_many_people(
    acme, owner, django_assert_max_num_queries
):
    for index in range(30):
        Membership.objects.create(workspace=acme, user=make_user(f"p{index}"))
    for index in range(10):
        make_token(owner, name=f"t{index}")
    client = admin_for(owner)
    for index in range(10):
        client.post(
            f"/admin/pixie/workspace/{acme.pk}/members/",
            {"action": "invite", "invite-email": f"i{index}@example.com", "invite-role": "member"},
        )
    assert acme.invitations.count() == 10
    with django_assert_max_num_queries(12):
        assert client.get(f"/admin/pixie/workspace/{acme.pk}/members/").status_code == 200


# --- tokens ----------------------------------------------------------------------------


def test_a_token_is_shown_once_stored_hashed_and_works_until_revoked(acme, owner):
    made = api_for(owner).post("/api/tokens/", {"name": "Deploys"}, format="json")
    assert made.status_code == 201
    secret = made.json()["secret"]
    assert secret.startswith("pixie_") and made["Cache-Control"] == "no-store"
    row = ApiToken.objects.get(name="Deploys")
    assert row.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    with connection.cursor() as cursor:  # no column anywhere holds the secret
        cursor.execute("SELECT * FROM pixie_apitoken")
        assert secret not in repr(cursor.fetchall())
    listed = token_client(secret).get("/api/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["Deploys"] and "secret" not in listed[0]
    assert listed[0]["last_used_at"] is not None
    assert token_client(secret).delete(f"/api/tokens/{row.pk}/").status_code == 204
    refused = token_client(secret).get("/api/workspaces/acme/plans/")
    assert refused.status_code == 401 and refused.json()["detail"] == "Invalid or revoked token."


def test_a_read_only_token_reads_and_changes_nothing(acme, owner, demo_catalog):
    secret = make_token(owner, read_only=True)
    client = token_client(secret)
    assert client.get("/api/workspaces/acme/plans/").status_code == 200
    refused = client.post(
        "/api/workspaces/acme/plans/",
        {"kind": "install", "bundle": "accounts-receivable"}, format="json",
    )  # fmt: skip
    assert refused.status_code == 403
    assert refused.json()["code"] == "token_read_only"
    assert "read-only: it cannot change anything" in refused.json()["detail"]
    assert not acme.plans.exists()
    assert client.post("/api/tokens/", {"name": "more"}, format="json").status_code == 403


def test_a_token_limited_to_a_workspace_reaches_only_that_one(acme, owner):
    make_workspace("globex", owner=owner)
    secret = make_token(owner, workspace="acme")
    client = token_client(secret)
    assert client.get("/api/workspaces/acme/plans/").status_code == 200
    assert client.get("/api/workspaces/globex/plans/").status_code == 404
    assert client.get("/api/bundles/").status_code == 200  # the catalog it installs from
    limited = client.get("/api/audit/")
    assert limited.status_code == 403 and limited.json()["code"] == "token_workspace_limited"
    # It cannot mint an unlimited token for itself.
    assert client.post("/api/tokens/", {"name": "wider"}, format="json").status_code == 403
    # Nor be made for a workspace its person is not in.
    refused = api_for(owner).post(
        "/api/tokens/", {"name": "x", "workspace": "nowhere"}, format="json"
    )
    assert refused.status_code == 404


def test_an_owner_sees_and_revokes_only_the_tokens_limited_to_the_workspace(acme, owner, member):
    """A member's own tokens limited to no workspace, or to another, are theirs: the owner
    neither lists them (that would tell of the member's work elsewhere) nor revokes them,
    by the API or the members page."""
    elsewhere = make_workspace("globex", members=[member])
    limited = make_token(member, workspace="acme")
    unscoped = make_token(member)
    theirs_elsewhere = make_token(member, workspace="globex")
    make_token(make_user("outsider"))  # reaches no workspace of acme's
    listed = api_for(owner).get("/api/workspaces/acme/tokens/").json()["results"]
    assert [(t["username"], t["workspace"]) for t in listed] == [("mia", "acme")]
    assert api_for(member).get("/api/workspaces/acme/tokens/").status_code == 403
    page = admin_for(owner).get(f"/admin/pixie/workspace/{acme.pk}/members/").content.decode()
    assert page.count('name="action" value="revoke"') == 1
    for secret in (unscoped, theirs_elsewhere):
        pk = ApiToken.objects.get(key_hash=key_hash(secret)).pk
        assert api_for(owner).delete(f"/api/workspaces/acme/tokens/{pk}/").status_code == 404
        refused = admin_for(owner).post(
            f"/admin/pixie/workspace/{acme.pk}/members/", {"action": "revoke", "token": pk}
        )
        assert "That token is not limited to this workspace" in refused.content.decode()
        assert token_client(secret).get("/api/bundles/").status_code == 200
    assert elsewhere.slug == "globex"
    page = admin_for(owner).post(
        f"/admin/pixie/workspace/{acme.pk}/members/",
        {"action": "revoke", "token": listed[0]["id"]},
    )
    assert page.status_code == 302
    assert token_client(limited).get("/api/bundles/").status_code == 401
    token = ApiToken.objects.get(pk=listed[0]["id"])
    assert token.revoked_by == owner


def test_a_person_makes_and_revokes_tokens_on_their_page(acme, member):
    client = admin_for(member)
    page = client.post(
        "/admin/pixie/workspace/tokens/",
        {"action": "make", "name": "laptop", "workspace": acme.pk, "read_only": "on"},
    )
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    secret = re.search(rb"<code id=\"secret\">(pixie_[^<]+)</code>", page.content).group(1).decode()
    token = ApiToken.objects.get(user=member)
    assert token.read_only and token.workspace == acme
    assert client.get("/admin/pixie/workspace/tokens/").content.count(secret.encode()) == 0
    assert token_client(secret).get("/api/workspaces/acme/plans/").status_code == 200
    client.post("/admin/pixie/workspace/tokens/", {"action": "revoke", "token": token.pk})
    assert token_client(secret).get("/api/workspaces/acme/plans/").status_code == 401
    nameless = client.post("/admin/pixie/workspace/tokens/", {"action": "make", "name": ""})
    assert b"This field is required." in nameless.content
    assert ApiToken.objects.filter(user=member).count() == 1


def test_tokens_from_drf_create_token_still_work_beside_them(acme, owner):
    from rest_framework.authtoken.models import Token

    old = Token.objects.create(user=owner).key
    assert token_client(old).get("/api/workspaces/acme/plans/").status_code == 200
    assert token_client("pixie_not-a-real-one").get("/api/bundles/").status_code == 401


def test_the_only_owners_row_offers_no_removal_and_roles_read_as_their_names(acme, owner, member):
    page = admin_for(owner).get(f"/admin/pixie/workspace/{acme.pk}/members/").content.decode()
    row = page.split('id="member-owen"', 1)[1].split("</tr>", 1)[0]
    assert "The only owner: add another owner" in row and "Remove" not in row
    theirs = page.split('id="member-mia"', 1)[1].split("</tr>", 1)[0]
    assert '<option value="owner">Owner</option>' in theirs
    assert '<option value="member" selected>Member</option>' in theirs
    changed = admin_for(owner).post(
        f"/admin/pixie/workspace/{acme.pk}/members/",
        {"action": "role", "username": "mia", "role": "owner"}, follow=True,
    )  # fmt: skip
    assert "Mia is now an owner of Acme." in changed.content.decode()


def test_a_one_time_link_starts_with_the_address_the_page_was_asked_at(acme, owner, settings):
    settings.PIXIE_SITE_URL_GIVEN = False
    settings.ALLOWED_HOSTS = ["pixie.internal"]
    client = admin_for(owner)
    url = f"/admin/pixie/workspace/{acme.pk}/members/"
    made = client.post(
        url, {"action": "add", "username": "newbie", "role": "member"}, HTTP_HOST="pixie.internal"
    )
    assert "http://pixie.internal/accounts/set-password/" in made.content.decode()
    invited = api_for(owner).post(
        "/api/workspaces/acme/invitations/", {"email": "ivy@example.com", "role": "member"},
        format="json", HTTP_HOST="pixie.internal",
    )  # fmt: skip
    assert invited.json()["link"].startswith("http://pixie.internal/accounts/invitation/")
    # Set, the setting wins (behind a proxy, the address people use).
    settings.PIXIE_SITE_URL_GIVEN, settings.PIXIE_SITE_URL = True, "https://pixie.example.com"
    again = client.post(
        url, {"action": "add", "username": "newbie2", "role": "member"}, HTTP_HOST="pixie.internal"
    )
    assert "https://pixie.example.com/accounts/set-password/" in again.content.decode()


@pytest.mark.parametrize("group", ["operators", "auditors"])
def test_staff_in_no_workspace_find_their_tokens_page_from_any_admin_page(group):
    from django.contrib.auth.models import Group

    person = make_user(is_staff=True)
    person.groups.add(Group.objects.get(name=group))
    client = admin_for(person)
    index = client.get("/admin/").content.decode()
    link = re.search(r'<a href="([^"]+)" id="my-tokens-link">Your API tokens</a>', index)
    assert link, "the admin's user links offer the person's own tokens"
    page = client.get(link.group(1))
    assert page.status_code == 200
    assert "Make a token" in page.content.decode()
