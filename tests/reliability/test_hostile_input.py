"""Hostile payloads: every API write fuzzed, and each JSON pitfall refused with a message.

CI runs a light pass; PIXIE_HEAVY=1 runs 100,000+ examples in all.
"""

import json
import os

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from pixie.core.web.strict_json import StrictJSONError, loads
from tests.reliability.test_permission_matrix import API_ROWS, digest
from tests.reliability.urls import all_patterns, fill
from tests.reliability.world import build_world
from tests.suite import examples

HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
EXAMPLES = 5_000 if HEAVY else examples(60)  # about 70 ms each: a request and two digests
PITFALLS = {
    "duplicate keys": '{"kind": "install", "kind": "uninstall"}',
    "NaN": '{"kind": NaN}',
    "Infinity": '{"kind": Infinity}',
    "lone surrogate": '{"kind": "\\ud800"}',
    "NUL": '{"kind": "in\\u0000stall"}',
    "deep nesting": "[" * 100 + "]" * 100,
    "not JSON": "{kind: install}",
}


@pytest.mark.parametrize("name", PITFALLS)
def test_the_strict_parser_refuses_each_json_pitfall(name):
    with pytest.raises(StrictJSONError):
        loads(PITFALLS[name])


def test_plain_json_still_parses():
    assert loads('{"a": [1, 2.5, "é", null, true]}') == {"a": [1, 2.5, "é", None, True]}


@pytest.fixture
def world(db, demo_catalog, django_capture_on_commit_callbacks):
    return build_world(demo_catalog, django_capture_on_commit_callbacks)


@pytest.fixture
def owner_api(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['owner']}")
    return client


@pytest.fixture
def operator_api(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['operator']}")
    return client


# Endpoints only operators write (the sources the catalog follows): sent as the world's
# operator, every other write as acme's owner.
OPERATORS_WRITES = ("/api/sources/",)


def writer(url, owner_api, operator_api):
    return operator_api if url.startswith(OPERATORS_WRITES) else owner_api


def writes(world, with_payload_only=False):
    """Every write endpoint; optionally only those that read a body (the others,
    like approve, take none and ignore whatever is sent)."""
    routes = {name: route for route, name in all_patterns() if route.startswith("api/")}
    return [
        (method, fill(routes[name], name, world))
        for name, requests in API_ROWS.items()
        for method, _expected, body in requests
        if method != "get" and (body or not with_payload_only)
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("name", PITFALLS)
def test_every_api_write_refuses_each_pitfall_with_a_message(name, world, owner_api, operator_api):
    for method, url in writes(world, with_payload_only=True):
        before = digest()
        client = writer(url, owner_api, operator_api)
        response = getattr(client, method)(url, PITFALLS[name], content_type="application/json")
        assert response.status_code == 400, (url, response.content)
        assert "detail" in response.json(), url
        assert digest() == before


@pytest.mark.django_db
def test_an_oversized_body_is_refused_before_parsing(world, owner_api):
    huge = json.dumps({"reason": "x" * (2 * 1024 * 1024)})
    response = owner_api.post(
        f"/api/workspaces/acme/plans/{world.ids['plan']}/reject/",
        huge,
        content_type="application/json",
    )
    # Refused by Django's own limit or by the parser's, never parsed.
    assert response.status_code == 400
    if "json" in response.get("Content-Type", ""):
        assert "larger than" in response.json()["detail"]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=8,
)
KEYS = ["kind", "bundle", "version", "agents", "fork_choices", "reason", "body", "name",
        "short_description", "enabled", "pinned_revision", "override", "skill", "order",
        "outcome", "slug", "contact", "text", "card", "workspace"]  # fmt: skip
payloads = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), json_values, max_size=6)


@pytest.mark.django_db
def test_fuzzed_payloads_never_break_an_endpoint(world, owner_api, operator_api, record_property):
    targets = writes(world)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=not HEAVY,
    )
    @given(target=st.sampled_from(targets), payload=payloads | json_values)
    def check(target, payload):
        method, url = target
        with transaction.atomic():
            before = digest()
            client = writer(url, owner_api, operator_api)
            response = getattr(client, method)(url, payload, format="json")
            after = digest()
            transaction.set_rollback(True)
        assert response.status_code < 500, (url, payload, response.content[:300])
        if response.status_code >= 400:
            assert response.json(), (url, payload)
            assert after == before, (url, payload)

    check()
    record_property("figure", f"{EXAMPLES:,} payloads x {len(targets)} endpoints, 0 errors")
