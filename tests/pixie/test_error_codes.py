"""Every refusal's code is one of pixie.core.errors.ErrorCode, and the API's schema lists
them all: a client can switch on ``code`` knowing every value it may meet."""

import ast
import re
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from pixie.core.errors import ErrorCode, PermissionRefused, StateError, ValidationFailed
from tests.factories import make_user

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    path
    for app in ("pixie", "catalog", "agents", "egress", "benchmarks")
    for path in (ROOT / app).rglob("*.py")
    if "migrations" not in path.parts
]
# Django's form validation codes, which never reach the API's ``code``.
FORM_CODES = {"ValidationError"}
# Codes made by DRF itself, or from a state's value (``already_<state>``, ``policy_<rule>``).
DRF_CODES = {
    "not_authenticated", "authentication_failed", "permission_denied", "parse_error",
    "unsupported_media_type", "not_acceptable", "throttled", "method_not_allowed", "error",
}  # fmt: skip
MADE_FROM_A_STATE = re.compile(r"(already|policy)_\w+")


def _literal_codes():
    """Each string written as a refusal's code: ``code="..."`` in a call, or a class's
    ``code = "..."``, outside pixie/core/errors.py."""
    for path in SOURCES:
        if path.name == "errors.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                called = getattr(node.func, "id", getattr(node.func, "attr", ""))
                for keyword in node.keywords:
                    if (
                        keyword.arg == "code"
                        and isinstance(keyword.value, ast.Constant)
                        and called not in FORM_CODES
                    ):
                        yield path.relative_to(ROOT), keyword.value.value
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if (
                        isinstance(statement, ast.Assign)
                        and [getattr(t, "id", None) for t in statement.targets] == ["code"]
                        and isinstance(statement.value, ast.Constant)
                    ):
                        yield path.relative_to(ROOT), statement.value.value


def test_every_refusal_names_its_code_through_the_registry():
    assert list(_literal_codes()) == []


def test_every_registered_code_is_used_somewhere():
    """No code is listed that nothing answers with: the list is what a client meets."""
    text = "\n".join(path.read_text() for path in SOURCES)
    unused = [
        code.value
        for code in ErrorCode
        if f"ErrorCode.{code.name}" not in text
        and code.value not in DRF_CODES
        and not MADE_FROM_A_STATE.fullmatch(code.value)
    ]
    assert unused == []


def test_every_code_made_from_a_state_is_registered():
    """``already_<state>`` and ``policy_<rule>`` are made at run time: each state a plan or
    a review can be in, and each approval rule, has its code, so none of those refusals
    turns into a server error when a state is added without one."""
    from catalog.models import CatalogReview, Plan
    from pixie.installer.policy import LEVEL_FIELDS

    made = [f"already_{state}" for state in Plan.State.values + CatalogReview.values]
    made += [f"policy_{rule}" for rule in LEVEL_FIELDS]
    assert [code for code in made if code not in {c.value for c in ErrorCode}] == []


def test_a_refusal_with_a_code_nobody_registered_fails_where_it_is_made():
    with pytest.raises(ValueError, match="is not a valid ErrorCode"):
        ValidationFailed("name: too long", code="name_too_long")
    with pytest.raises(ValueError):
        StateError("Plan #1 is lost.", code="already_lost")  # not a state a plan has
    refusal = PermissionRefused("Only owners approve.", code="owner_required")
    assert refusal.code is ErrorCode.OWNER_REQUIRED


@pytest.mark.django_db
def test_the_schema_lists_every_code_and_answers_carry_only_those():
    client = APIClient()
    reader = APIClient()
    reader.force_login(make_user())
    schema = reader.get("/api/schema/?format=json").json()
    code = schema["components"]["schemas"]["Error"]["properties"]["code"]
    assert code == {"$ref": "#/components/schemas/ErrorCode"}
    listed = schema["components"]["schemas"]["ErrorCode"]["enum"]
    assert listed == [code.value for code in ErrorCode]
    # Two refusals from two sources, each with a listed code: DRF's (no credentials) and
    # a router's (a path that is not there).
    anonymous = client.get("/api/notification-choices/")
    assert anonymous.status_code in (401, 403)
    assert anonymous.json()["code"] in listed
    assert client.get("/api/no-such-thing/").json()["code"] == "not_found"
