"""A query compiled once (pixie.core.db.prepared) gives what the ORM gives: the same rows, the
same field values with the same types, the same related objects; and token
authentication, which uses it on every request, still says what DRF says."""

from datetime import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pixie.core.db.prepared import PreparedQuery, Slot
from pixie.core.models import ApiToken, Membership
from pixie.core.people.tokens import key_hash
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db


def fields_of(instance) -> dict:
    return {
        field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields
    }


TOKENS = PreparedQuery(
    lambda user_id: (
        ApiToken.objects.select_related("user", "workspace")
        .filter(user_id=user_id)
        .order_by("name")
    ),
    Slot("user_id", -7_000_000_003),
)


def test_instances_and_their_related_rows_equal_the_orms():
    rita = make_user("rita")
    acme = make_workspace("acme", owner=rita)
    ApiToken.objects.create(user=rita, name="b", prefix="pixie_b", key_hash="1" * 64,
                            workspace=acme, last_used_at=timezone.now())  # fmt: skip
    ApiToken.objects.create(user=rita, name="a", prefix="pixie_a", key_hash="2" * 64,
                            read_only=True)  # fmt: skip
    ApiToken.objects.create(user=make_user(), name="c", prefix="pixie_c", key_hash="3" * 64)

    prepared = TOKENS.objects(user_id=rita.pk)
    expected = list(TOKENS._build(user_id=rita.pk))
    assert [t.name for t in prepared] == ["a", "b"]
    for mine, orms in zip(prepared, expected, strict=True):
        assert fields_of(mine) == fields_of(orms)
        assert fields_of(mine.user) == fields_of(orms.user)
        assert (mine.workspace and fields_of(mine.workspace)) == (
            orms.workspace and fields_of(orms.workspace)
        )
    # Converted as Django converts them (SQLite stores text): aware datetimes, booleans.
    assert isinstance(prepared[1].created_at, datetime) and prepared[1].created_at.tzinfo
    assert prepared[0].read_only is True and prepared[1].read_only is False
    assert prepared[0].workspace is None  # a null foreign key, already known: no query
    with CaptureQueriesContext(connection) as queries:
        assert prepared[1].workspace.slug == "acme" and prepared[1].user.username == "rita"
    assert len(queries) == 0
    assert TOKENS.objects(user_id=-1) == []


def test_it_sends_one_query_and_the_same_sql_each_time():
    rita = make_user("rita")
    TOKENS.objects(user_id=rita.pk)
    with CaptureQueriesContext(connection) as queries:
        TOKENS.objects(user_id=rita.pk)
        TOKENS.objects(user_id=rita.pk + 1)
    assert len(queries) == 2
    assert queries[0]["sql"].replace(str(rita.pk), "?") == queries[1]["sql"].replace(
        str(rita.pk + 1), "?"
    )


def test_a_stand_in_the_query_changes_or_a_prefetch_is_refused_when_compiled():
    altered = PreparedQuery(
        lambda name: ApiToken.objects.filter(name__icontains=name), Slot("name", "\x00n\x00")
    )
    with pytest.raises(ValueError, match="does not pass through"):
        altered.objects(name="x")
    prefetching = PreparedQuery(
        lambda user_id: Membership.objects.filter(user_id=user_id).prefetch_related("workspace"),
        Slot("user_id", -7_000_000_004),
    )
    with pytest.raises(ValueError, match="cannot prefetch"):
        prefetching.objects(user_id=1)


def test_values_rows_come_back_converted():
    rita = make_user("rita")
    ApiToken.objects.create(user=rita, name="a", prefix="pixie_a", key_hash="2" * 64)
    dates = PreparedQuery(
        lambda user_id: ApiToken.objects.filter(user_id=user_id).values_list(
            "created_at", "read_only"
        ),
        Slot("user_id", -7_000_000_005),
    )
    ((created_at, read_only),) = dates.rows(user_id=rita.pk)
    assert created_at == ApiToken.objects.get().created_at and read_only is False


# --- token authentication, which runs the prepared lookups on every request ------------


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


def test_a_pixie_token_is_one_query_and_a_revoked_one_fails_at_once():
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
