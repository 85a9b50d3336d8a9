"""Every refusal of the API, whichever app and whatever raised it, has one shape: the
schema's Error component (pixie.core.web.api)."""

import jsonschema
import pytest
from rest_framework.test import APIClient

from pixie.core.web.schema import COMPONENTS, ERROR
from tests.clients import api_for
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

W = "/api/workspaces/acme"


@pytest.fixture
def owner():
    user = make_user("olive")
    make_workspace("acme", owner=user)
    return user


# (method, path, body, status, code, a problem the answer must name)
REFUSALS = [
    # A serializer's field errors (installer, catalog, agents, sharing alike).
    ("post", f"{W}/plans/", {}, 400, "invalid", "kind: This field is required."),
    ("post", f"{W}/plans/", {"kind": "install", "bundle": "x", "oops": 1}, 400, "invalid",
     "oops: Unknown field."),
    ("post", f"{W}/shares/", {"skill": "x"}, 400, "invalid", "contact: This field is required."),
    ("post", f"{W}/shares/", {"contact": 1, "skill": "x", "extra": 2}, 400, "invalid",
     "extra: Unknown field."),
    ("post", f"{W}/contacts/", {"card": {}, "workspace": "beta"}, 400, "invalid",
     "send either a card or a workspace, not both"),
    ("patch", f"{W}/skills/nope/", {"name": "x", "colour": "red"}, 404, "not_found", "Not found."),
    ("post", f"{W}/agents/nope/skills/", {"skill": "x"}, 404, "not_found", "Not found."),
    # A service's refusal (a domain error).
    ("post", f"{W}/plans/", {"kind": "install", "bundle": "nope", "version": "1.0.0"}, 400,
     "invalid", "No published version 1.0.0 of nope"),
    ("post", f"{W}/credentials/NOPE/confirm/", None, 400, "unknown",
     "Acme needs no credential named 'NOPE'"),
    # Not a member, no such route, a body that is not JSON.
    ("get", "/api/workspaces/elsewhere/plans/", None, 404, "not_found", "No such workspace."),
    ("get", "/api/nowhere/", None, 404, "not_found", "Not found."),
]  # fmt: skip


def _check(answer, status, code, problem):
    assert answer.status_code == status, answer.content
    body = answer.json()
    jsonschema.validate(body, {**ERROR, "components": {"schemas": COMPONENTS}})
    assert body["code"] == code
    assert body["detail"] == "; ".join(body["problems"])
    if problem is not None:
        assert problem in body["problems"], body


@pytest.mark.parametrize(("method", "path", "body", "status", "code", "problem"), REFUSALS)
def test_a_refusal_has_the_one_shape(owner, method, path, body, status, code, problem):
    client = api_for(owner)
    answer = getattr(client, method)(path, body, format="json")
    _check(answer, status, code, problem)


def test_a_serializer_refusal_keeps_its_fields_for_programs(owner):
    answer = api_for(owner).post(f"{W}/plans/", {"kind": "nonsense"}, format="json")
    _check(answer, 400, "invalid", None)
    assert list(answer.json()["fields"]) == ["kind"]
    assert answer.json()["problems"] == ['kind: "nonsense" is not a valid choice.']


def test_a_body_that_is_not_json_and_a_missing_token_have_the_one_shape(owner):
    answer = api_for(owner).generic(
        "POST", f"{W}/plans/", b"{not json", content_type="application/json"
    )
    _check(answer, 400, "parse_error", None)
    _check(APIClient().get(f"{W}/plans/"), 401, "not_authenticated", None)


def test_a_member_refused_an_owners_action_has_the_one_shape(owner):
    member = make_user("mia")
    from pixie.core.models import Membership, Workspace

    Membership.objects.create(workspace=Workspace.objects.get(slug="acme"), user=member)
    answer = api_for(member).post(f"{W}/plans/", {"kind": "repoint"}, format="json")
    _check(answer, 403, "owner_required", None)
