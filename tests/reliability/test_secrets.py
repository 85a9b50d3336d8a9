"""A credential value sent to any endpoint is never stored, logged or echoed back."""

import logging

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from tests.reliability.test_permission_matrix import API_ROWS, _body
from tests.reliability.urls import all_patterns, fill
from tests.reliability.world import build_world

pytestmark = pytest.mark.django_db

CANARY = "sk-live-CANARY-4f1d2c9a8b7e"
CREDENTIAL_KEYS = ["value", "secret", "credential_value", "api_key", "token", "password"]


def database_contains(needle: str) -> list[str]:
    """Every table of the database, every text column, searched for the needle."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            description = connection.introspection.get_table_description(cursor, table)
            for column in description:
                quoted_table = connection.ops.quote_name(table)
                quoted_column = connection.ops.quote_name(column.name)
                cursor.execute(
                    f"SELECT COUNT(*) FROM {quoted_table} "  # noqa: S608 - names from introspection
                    f"WHERE CAST({quoted_column} AS TEXT) LIKE %s",
                    [f"%{needle}%"],
                )
                if cursor.fetchone()[0]:
                    found.append(f"{table}.{column.name}")
    return found


@pytest.fixture
def world(demo_catalog, django_capture_on_commit_callbacks):
    return build_world(demo_catalog, django_capture_on_commit_callbacks)


def test_a_canary_in_every_credential_field_of_every_endpoint_goes_nowhere(world, caplog):
    caplog.set_level(logging.DEBUG)
    routes = {name: route for route, name in all_patterns() if route.startswith("api/")}
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['owner']}", HTTP_X_API_KEY=CANARY)
    echoed = []
    for name, requests in API_ROWS.items():
        url = fill(routes[name], name, world) + f"?value={CANARY}"
        for method, _expected, body in requests:
            payload = _body(body, world)
            if method != "get":
                payload = {**(payload or {}), **dict.fromkeys(CREDENTIAL_KEYS, CANARY)}
            with transaction.atomic():
                response = getattr(client, method)(url, payload, format="json")
                stored = database_contains(CANARY)
                transaction.set_rollback(True)
            # A download (the bundle .zip) streams its body.
            content = (
                b"".join(response.streaming_content) if response.streaming else response.content
            )
            if CANARY in content.decode(errors="replace"):
                echoed.append(f"{method.upper()} {url} echoed it")
            if stored:
                echoed.append(f"{method.upper()} {url} stored it in {stored}")
    assert echoed == []
    assert CANARY not in caplog.text


def test_a_message_text_is_stored_only_sealed(world):
    """The text of a message (which could carry anything) is never in the database."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['owner']}")
    response = client.post(
        "/api/workspaces/acme/messages/",
        {"contact": world.ids["contact"], "text": f"The token is {CANARY}"},
        format="json",
    )
    assert response.status_code == 201
    assert database_contains(CANARY) == []
