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


def columns_of_every_table() -> list[tuple[str, list[str]]]:
    """(table, its columns) for every table of the database, from its introspection."""
    with connection.cursor() as cursor:
        return [
            (table, [column.name for column in connection.introspection.get_table_description(
                cursor, table)])
            for table in connection.introspection.table_names(cursor)
        ]  # fmt: skip


def database_contains(needle: str, tables=None) -> list[str]:
    """Every column of every table (as text), searched for the needle: one statement a
    table, a flag a column."""
    found = []
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table, columns in tables or columns_of_every_table():
            flags = ", ".join(
                f"MAX(CASE WHEN CAST({quote(column)} AS TEXT) LIKE %s THEN 1 ELSE 0 END)"
                for column in columns
            )
            cursor.execute(
                f"SELECT {flags} FROM {quote(table)}",  # noqa: S608 - names from introspection
                [f"%{needle}%"] * len(columns),
            )
            found += [
                f"{table}.{c}" for c, hit in zip(columns, cursor.fetchone(), strict=True) if hit
            ]
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
    tables = columns_of_every_table()
    for name, requests in API_ROWS.items():
        url = fill(routes[name], name, world) + f"?value={CANARY}"
        for method, _expected, body in requests:
            payload = _body(body, world)
            if method != "get":
                payload = {**(payload or {}), **dict.fromkeys(CREDENTIAL_KEYS, CANARY)}
            with transaction.atomic():
                response = getattr(client, method)(url, payload, format="json")
                stored = database_contains(CANARY, tables)
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


def test_a_token_given_as_a_sources_variable_name_is_refused_and_goes_nowhere(world, caplog):
    """A source names its deploy token's environment variable (pixie.sources): a token
    pasted there instead, or in the URL, is refused without being stored, echoed or
    logged, on adding a source and on changing one."""
    caplog.set_level(logging.DEBUG)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['operator']}")
    source = f"/api/sources/{world.ids['source']}/"
    tables = columns_of_every_table()
    repository = "https://example.com/s.git"
    given = [
        ("post", "/api/sources/", {"url": repository, "credential_variable": CANARY}),
        ("post", "/api/sources/", {"url": f"https://x:{CANARY}@example.com/s.git"}),
        ("patch", source, {"credential_variable": CANARY}),
        ("patch", source, {"url": f"https://{CANARY}@example.com/s.git"}),
    ]  # fmt: skip
    for method, url, body in given:
        with transaction.atomic():
            response = getattr(client, method)(url, body, format="json")
            stored = database_contains(CANARY, tables)
            transaction.set_rollback(True)
        assert response.status_code == 400, (method, body)
        assert set(response.json()["fields"]) <= {"url", "credential_variable"}
        assert CANARY not in response.content.decode(), (method, body)
        assert stored == [], (method, body)
    assert CANARY not in caplog.text
