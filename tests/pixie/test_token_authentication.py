"""Token authentication, on every API request: DRF's login tokens answer as DRF says, and a
Pixie token revoked a moment ago fails on its next request (nothing caches it)."""

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pixie.core.models import ApiToken
from pixie.core.people.token_reads import token_with_user
from pixie.core.people.tokens import key_hash
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db


def test_login_tokens_answer_as_drfs_own_did():
    rita = make_user("rita")
    make_workspace("acme", owner=rita)
    token = Token.objects.create(user=rita)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/workspaces/acme/members/").status_code == 200

    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    refused = client.get("/api/workspaces/acme/members/")
    assert refused.status_code == 401 and refused.json()["detail"] == "Invalid token."
    assert refused["WWW-Authenticate"] == "Token"

    # Deactivating deletes the login's tokens (pixie.installer.offboarding); a row left behind
    # (say, restored from a backup) still does not authenticate.
    type(rita).objects.filter(pk=rita.pk).update(is_active=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    inactive = client.get("/api/workspaces/acme/members/")
    assert inactive.status_code == 401
    assert inactive.json()["detail"] == "User inactive or deleted."


def test_a_revoked_pixie_token_fails_on_its_next_request():
    rita = make_user("rita")
    make_workspace("acme", owner=rita)
    secret = "pixie_" + "s" * 43
    token = ApiToken.objects.create(user=rita, name="CI", prefix=secret[:12],
                                    key_hash=key_hash(secret))  # fmt: skip
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert client.get("/api/workspaces/acme/members/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    refused = client.get("/api/workspaces/acme/members/")
    assert refused.status_code == 401
    assert refused.json()["detail"] == "Invalid or revoked token."


def stored(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.mark.parametrize("limited", [False, True])
def test_a_token_is_read_whole_in_one_query(limited, django_assert_num_queries):
    """Every request reads its token with its person (and workspace) in one statement of
    plain SQL (pixie.core.people.token_reads): the same values, of the same types, as
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


def test_the_plain_sql_read_is_pinned_to_the_versions_it_was_written_for():
    """pixie.core.people.token_reads runs the ORM's converters and Model.from_db by hand,
    the one read that does (benchmarks/ANALYSIS.md says why). Written and tested for
    these versions: after an upgrade, run this file on SQLite and PostgreSQL, then move
    the pin."""
    import django
    import psycopg

    assert django.VERSION[:2] == (5, 2), django.get_version()
    assert psycopg.__version__.startswith("3."), psycopg.__version__
