"""The catalog API's hand-written reads (pixie.core.plain_reads) give what the ORM gives:
the same values, of the same types, on SQLite and PostgreSQL alike, in one query."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from rest_framework.authtoken.models import Token

from catalog.models import CatalogStamp
from catalog.selectors import catalog_stamp
from pixie.core.models import ApiToken
from pixie.core.people.tokens import key_hash
from pixie.core.plain_reads import (
    column_values,
    read_with_every_token,
    read_with_token,
    token_with_user,
)
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db


def stored(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.mark.parametrize("limited", [False, True])
def test_a_token_is_read_whole_in_one_query(limited, django_assert_num_queries):
    """Every request reads its token with its person (and workspace) in one statement of
    plain SQL (pixie.core.plain_reads): the same values, of the same types, as
    the ORM reads, on SQLite and PostgreSQL alike."""
    rita = make_user("rita", first_name="Rita", is_staff=True)
    workspace = make_workspace("acme", owner=rita)
    secret = "pixie_" + "s" * 40
    ApiToken.objects.create(
        user=rita, name="CI", prefix=secret[:12], key_hash=key_hash(secret),
        workspace=workspace if limited else None, read_only=limited, last_used_at=timezone.now(),
    )  # fmt: skip
    expected = ApiToken.objects.select_related("user", "workspace").get(key_hash=key_hash(secret))
    with django_assert_num_queries(1):
        token = token_with_user(
            ApiToken, column="key_hash", value=key_hash(secret), related=("workspace",)
        )
        assert (token.workspace is not None) == limited  # no query of its own
    assert stored(token) == stored(expected)
    assert stored(token.user) == stored(expected.user)
    if limited:
        assert stored(token.workspace) == stored(expected.workspace)
    assert token_with_user(ApiToken, column="key_hash", value=key_hash("unknown")) is None

    login = Token.objects.create(user=rita)
    with django_assert_num_queries(1):
        read = token_with_user(Token, column="key", value=login.key)
    assert stored(read) == stored(Token.objects.get(key=login.key)) and read.user == rita


def test_a_column_is_read_as_values_list_reads_it(django_assert_num_queries):
    """The catalog's stamp, read on every catalog request: every shard's number, as the
    ORM reads it, in one query; an emptied table reads as nothing."""
    CatalogStamp.objects.update_or_create(shard=3, defaults={"number": -(2**62)})
    expected = sorted(CatalogStamp.objects.values_list("number", flat=True))
    with django_assert_num_queries(1):
        read = column_values(CatalogStamp, "number")
    assert sorted(read) == expected and all(type(value) is int for value in read)
    assert catalog_stamp() == tuple(expected)
    CatalogStamp.objects.all().delete()
    assert column_values(CatalogStamp, "number") == [] and catalog_stamp() == ()


def test_a_tokens_read_carries_the_catalogs_stamp_in_its_one_statement(django_assert_num_queries):
    """catalog.apps has every token's read carry the stamp: read with the token, the
    stamp is the stamp now, written a moment ago included, and an emptied table reads
    as no shard; what no app asked for is not there."""
    rita = make_user("rita")
    login = Token.objects.create(user=rita)
    with django_assert_num_queries(1):
        token = token_with_user(Token, column="key", value=login.key)
        carried = read_with_token(token, CatalogStamp, "number")
    assert sorted(carried) == sorted(CatalogStamp.objects.values_list("number", flat=True))
    assert carried and all(type(value) is int for value in carried)
    with django_assert_num_queries(0):
        assert catalog_stamp(token) == tuple(sorted(carried))
    make_user("sam")  # a user made: the stamp changes, and the next token's read says so
    again = token_with_user(Token, column="key", value=login.key)
    assert catalog_stamp(again) == catalog_stamp() != catalog_stamp(token)
    CatalogStamp.objects.all().delete()
    emptied = token_with_user(Token, column="key", value=login.key)
    assert read_with_token(emptied, CatalogStamp, "number") == [] and catalog_stamp(emptied) == ()
    assert read_with_token(emptied, Token, "key") is None
    assert read_with_token(None, CatalogStamp, "number") is None


def test_a_column_json_would_change_is_refused_at_start_up():
    """A date read with every token would come back as text its converters do not take:
    refused when an app asks, naming the field, and nothing else is read from then on."""
    login = Token.objects.create(user=make_user("rita"))
    with pytest.raises(ImproperlyConfigured, match=r"authtoken\.Token\.created is a DateTimeField"):
        read_with_every_token(Token, "created")
    token = token_with_user(Token, column="key", value=login.key)
    assert read_with_token(token, Token, "created") is None
    assert read_with_token(token, CatalogStamp, "number") is not None


def test_the_plain_sql_read_is_pinned_to_the_versions_it_was_written_for():
    """pixie.core.plain_reads runs the ORM's converters and Model.from_db by hand,
    the one module that does (benchmarks/ANALYSIS.md says why). Written and tested for
    these versions: after an upgrade, run this file on SQLite and PostgreSQL, then move
    the pin."""
    import django
    import psycopg

    assert django.VERSION[:2] == (5, 2), django.get_version()
    assert psycopg.__version__.startswith("3."), psycopg.__version__
