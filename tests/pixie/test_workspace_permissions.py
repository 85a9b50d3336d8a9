"""One answer to "may this person act in the workspace" (permissions.may_act), read by
the API's permission class before a view reads the body, by the browsable API's forms
and by the admin's pages; the services' require_owner stays behind all three."""

import pytest

from agents.models import Agent
from pixie.core.models import Membership
from pixie.core.people.permissions import may_act
from tests.clients import api_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db

OWNER, MEMBER = Membership.Role.OWNER, Membership.Role.MEMBER


def test_reading_is_every_members_and_writing_the_owners_unless_the_view_lets_members():
    assert may_act(role=OWNER, method="DELETE")
    assert may_act(role=MEMBER, method="get") and may_act(role=MEMBER, method="HEAD")
    assert not may_act(role=MEMBER, method="POST")
    assert may_act(role=MEMBER, method="POST", member_writes=frozenset({"POST"}))
    assert not may_act(role=None, method="GET")


def test_a_members_write_that_is_the_owners_is_refused_before_its_body_is_read(acme, member):
    # An empty body: the owner is told what is missing, the member only that they may not.
    plans = "/api/workspaces/acme/plans/"
    refused = api_for(member).post(plans, {}, format="json")
    assert refused.status_code == 403
    assert refused.json()["code"] == "owner_required"
    assert refused.json()["detail"] == "Only an owner of Acme can do this; you are a member."


def test_the_owner_reaches_the_body_and_a_stranger_not_even_the_workspace(acme, owner):
    plans = "/api/workspaces/acme/plans/"
    assert api_for(owner).post(plans, {}, format="json").json()["code"] == "invalid"
    stranger = api_for(make_user("stranger")).post(plans, {}, format="json")
    assert (stranger.status_code, stranger.json()["code"]) == (404, "not_found")


def test_a_write_the_view_gives_members_reaches_the_service(acme, member):
    Agent.objects.create(workspace=acme, slug="collections", name="Collections")
    turns = "/api/workspaces/acme/agents/collections/turns/"
    answer = api_for(member).post(turns, {}, format="json")
    assert answer.status_code == 201
    assert answer.json()["outcome"] == "running"
