"""PostgreSQL's connection options come from DB_PREPARED_STATEMENTS (Django's own OPTIONS:
server_side_binding, psycopg's prepare_threshold), beside the URL's own; SQLite gets none
of them. With server-side binding a reused statement is prepared and still counted and
logged as any query."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from tests.factories import make_user

ROOT = Path(__file__).resolve().parents[2]
POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test?connect_timeout=3"


def options_with(value: str, url: str = POSTGRES_URL) -> subprocess.CompletedProcess:
    """The default database's OPTIONS, loaded in a fresh process."""
    code = (
        "import django, json; from django.conf import settings; django.setup(); "
        "print(json.dumps(settings.DATABASES['default'].get('OPTIONS', {})))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pixie.settings", "DATABASE_URL": url,
           "DB_PREPARED_STATEMENTS": value}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "value, binding, threshold",
    [("", False, None), ("off", False, None), ("ON", True, 5)],
)
def test_each_setting_gives_its_options_and_keeps_the_urls_own(value, binding, threshold):
    loaded = options_with(value)
    assert loaded.returncode == 0, loaded.stderr
    options = json.loads(loaded.stdout.splitlines()[-1])
    assert options["server_side_binding"] is binding
    assert options["prepare_threshold"] == threshold
    assert options["connect_timeout"] == 3


def test_an_unknown_setting_is_refused_with_its_name_and_the_choices():
    loaded = options_with("yes")
    assert loaded.returncode != 0
    assert "DB_PREPARED_STATEMENTS is 'yes'; it must be on or off." in loaded.stderr


def test_sqlite_gets_none_of_postgresqls_options(tmp_path):
    loaded = options_with("on", url=f"sqlite:///{tmp_path / 'pixie.sqlite3'}")
    assert loaded.returncode == 0, loaded.stderr
    options = json.loads(loaded.stdout.splitlines()[-1])
    assert "server_side_binding" not in options and "prepare_threshold" not in options


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's options")
@pytest.mark.django_db
def test_more_values_than_a_server_bound_statement_takes_still_work_by_default():
    make_user("rita")
    users = make_user("ann").__class__.objects
    many = list(range(-70_000, 0))  # past the 65,535 a statement bound on the server takes
    assert users.filter(pk__in=many).count() == 0
    assert users.filter(pk__in=many).delete()[0] == 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's options")
@pytest.mark.django_db
def test_a_read_is_logged_with_its_values():
    key = Token.objects.create(user=make_user("rita")).key
    with CaptureQueriesContext(connection) as queries:
        assert Token.objects.filter(key=key).exists()
    [logged] = queries.captured_queries
    assert key in logged["sql"]
