"""A person leaves: their login is deactivated, never deleted. Their tokens stop working
at once, their memberships go, their waiting plans wait for another owner, and every
change they made stays attributed to them."""

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from reversion.models import Version

from catalog.models import Plan
from pixie.core.models import ApiToken, Membership
from pixie.installer.plans import plan_create
from tests.clients import admin_for, api_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_owners(acme, member):
    Membership.objects.filter(workspace=acme, user=member).update(role="owner")
    return acme


def token_of(user, **body) -> str:
    made = api_for(user).post("/api/tokens/", {"name": "CI", **body}, format="json")
    return made.json()["secret"]


def called(secret) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client.get("/api/workspaces/acme/plans/").status_code


def test_deactivating_revokes_tokens_removes_memberships_and_frees_waiting_plans(
    two_owners, owner, member, demo_catalog
):
    plan = plan_create(
        workspace=two_owners, kind=Plan.Kind.INSTALL, bundle_version=demo_catalog["2.1.0"],
        actor=member,
    )  # fmt: skip
    secret = token_of(member)
    old = Token.objects.create(user=member).key
    assert called(secret) == 200 and called(old) == 200

    call_command("login_deactivate", "mia")

    member.refresh_from_db()
    assert not member.is_active
    assert called(secret) == 401 and called(old) == 401
    assert ApiToken.objects.get(user=member).revoked_at is not None
    assert not Token.objects.filter(user=member).exists()
    assert not Membership.objects.filter(user=member).exists()
    plan.refresh_from_db()
    assert plan.asker_left_at is not None and plan.status == Plan.State.PROPOSED
    # Their history stays theirs.
    assert Version.objects.get_for_object(plan).last().revision.user == member

    # Another owner reads why the plan waits, takes it over, and it is theirs to approve.
    client = admin_for(owner)
    page = client.get(f"/admin/catalog/plan/{plan.pk}/review/")
    assert b"mia left on" in page.content and b"Take it over" in page.content
    assert client.post(f"/admin/catalog/plan/{plan.pk}/take-over/").status_code == 302
    plan.refresh_from_db()
    assert plan.taken_over_by == owner and plan.asker_left_at is None
    assert plan.created_by == member  # who asked is never rewritten
    shown = api_for(owner).get(f"/api/workspaces/acme/plans/{plan.pk}/").json()
    assert shown["created_by"] == "mia" and shown["taken_over_by"] == "owen"
    again = api_for(owner).post(f"/api/workspaces/acme/plans/{plan.pk}/take-over/")
    assert again.status_code == 409 and again.json()["code"] == "not_orphaned"


def test_the_last_owner_is_not_deactivated(acme, owner):
    with pytest.raises(CommandError, match="owen is the last owner of Acme; make someone else"):
        call_command("login_deactivate", "owen")
    owner.refresh_from_db()
    assert owner.is_active and Membership.objects.filter(user=owner).exists()


def test_the_admin_user_page_refuses_the_last_owner_and_offboards_anyone_else(
    acme, owner, member, operator
):
    secret = token_of(member)
    client = admin_for(operator)

    def save(user, active):
        page = client.get(f"/admin/auth/user/{user.pk}/change/")
        form = page.context["adminform"].form
        data = {
            name: value
            for name, value in form.initial.items()
            if value is not None and name not in ("groups", "user_permissions", "is_active")
        }
        data |= {"date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
                 "date_joined_1": user.date_joined.strftime("%H:%M:%S")}  # fmt: skip
        data.pop("date_joined", None)
        data.pop("last_login", None)
        if active:
            data["is_active"] = "on"
        return client.post(f"/admin/auth/user/{user.pk}/change/", data)

    refused = save(owner, active=False)
    assert refused.status_code == 200
    assert b"owen is the last owner of Acme" in refused.content
    owner.refresh_from_db()
    assert owner.is_active

    assert save(member, active=False).status_code == 302
    member.refresh_from_db()
    assert not member.is_active
    assert called(secret) == 401
    assert not Membership.objects.filter(user=member).exists()


def test_a_departed_owner_of_one_workspace_leaves_the_others_whole(acme, owner):
    from tests.factories import make_workspace

    leaver = make_user("lee")
    make_workspace("globex", owner=leaver, members=[owner])
    Membership.objects.create(workspace=acme, user=leaver, role="member")
    with pytest.raises(CommandError, match="last owner of Globex"):
        call_command("login_deactivate", "lee")
    Membership.objects.filter(workspace__slug="globex", user=owner).update(role="owner")
    call_command("login_deactivate", "lee")
    left = Membership.objects.values_list("workspace__slug", "user__username")
    assert set(left) == {("acme", "owen"), ("acme", "mia"), ("globex", "owen")}


def test_who_takes_a_plan_over_is_its_asker_for_the_second_owner_rule(
    two_owners, owner, member, demo_catalog
):
    two_owners.policy_second_owner = "required"
    two_owners.save()
    plan = plan_create(
        workspace=two_owners, kind=Plan.Kind.INSTALL, bundle_version=demo_catalog["2.1.0"],
        actor=member,
    )  # fmt: skip
    assert plan.expands_reach
    Membership.objects.create(workspace=two_owners, user=make_user("olga"), role="owner")
    call_command("login_deactivate", "mia")
    taken = api_for(owner).post(f"/api/workspaces/acme/plans/{plan.pk}/take-over/")
    assert taken.status_code == 200
    (rule,) = [r for r in taken.json()["policy"] if r["id"] == "second_owner"]
    assert not rule["satisfied"]
    refused = api_for(owner).post(f"/api/workspaces/acme/plans/{plan.pk}/approve/")
    assert refused.status_code == 403 and refused.json()["code"] == "policy_second_owner"
    plan.refresh_from_db()
    assert plan.status == Plan.State.PROPOSED
