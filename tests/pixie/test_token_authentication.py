"""Token authentication, on every API request: DRF's login tokens answer as DRF says, and a
Pixie token revoked a moment ago fails on its next request (nothing caches it)."""

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pixie.core.models import ApiToken
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
