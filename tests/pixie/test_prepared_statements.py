"""On PostgreSQL, the catalog API's hot reads (pixie.core.db.prepared) are planned once a
connection, while every other statement keeps Django's client-side binding, which has no
limit on the number of values (pixie.postgresql, DB_PREPARED_STATEMENTS)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from pixie.core.people.tokens import _LOGIN_TOKEN
from tests.factories import make_user

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's backend")
ROOT = Path(__file__).resolve().parents[2]


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


@pytest.mark.django_db
def test_a_hot_read_is_prepared_after_five_runs_and_still_counted_as_a_query():
    rita = make_user("rita")
    key = Token.objects.create(user=rita).key
    with CaptureQueriesContext(connection) as queries:
        for _ in range(6):
            assert _LOGIN_TOKEN.first(key=key).user == rita
    assert len(queries) == 6  # django_assert_num_queries sees them as any other query
    assert [s for s in prepared_statements() if '"authtoken_token"."key" = $1' in s]
    assert _LOGIN_TOKEN.first(key="no-such-key") is None  # other values, the same statement


@pytest.mark.django_db
def test_other_statements_are_not_prepared_and_take_more_than_65535_values():
    make_user("rita")
    users = get_user_model().objects
    for _ in range(6):
        assert users.filter(username="rita").count() == 1
    many = list(range(-70_000, 0))  # past what a statement bound on the server can carry
    assert users.filter(pk__in=many).count() == 0
    assert users.filter(pk__in=many).delete()[0] == 0
    assert not [s for s in prepared_statements() if "auth_user" in s and "COUNT" in s]


def settings_with(value: str) -> subprocess.CompletedProcess:
    """Django's settings loaded in a fresh process with DB_PREPARED_STATEMENTS=value."""
    code = (
        "import django, json; from django.conf import settings; django.setup(); "
        "print(json.dumps(settings.DATABASES['default']['OPTIONS']))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pixie.settings",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test?connect_timeout=3",
        "DB_PREPARED_STATEMENTS": value,
    }
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "value, options",
    [
        ("", '"server_side_binding": false, "prepare_threshold": 5'),
        ("reads", '"server_side_binding": false, "prepare_threshold": 5'),
        ("all", '"server_side_binding": true, "prepare_threshold": 5'),
        ("OFF", '"server_side_binding": false, "prepare_threshold": null'),
    ],
)
def test_each_setting_gives_its_options_and_keeps_the_urls_own(value, options):
    loaded = settings_with(value)
    assert loaded.returncode == 0, loaded.stderr
    assert options in loaded.stdout and '"connect_timeout": 3' in loaded.stdout


def test_an_unknown_setting_is_refused_with_its_name_and_the_choices():
    loaded = settings_with("yes")
    assert loaded.returncode != 0
    assert "DB_PREPARED_STATEMENTS is 'yes'; it must be reads, all or off." in loaded.stderr


@pytest.mark.django_db
def test_a_prepared_read_is_logged_with_its_values_as_any_other_query():
    rita = make_user("rita")
    key = Token.objects.create(user=rita).key
    with CaptureQueriesContext(connection) as queries:
        _LOGIN_TOKEN.first(key=key)
    [logged] = queries.captured_queries
    assert f'"authtoken_token"."key" = \'{key}\'' in logged["sql"] and "$1" not in logged["sql"]
