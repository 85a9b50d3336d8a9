"""Clients signed in as a person: the API with their credentials, the admin with their
login (made staff, as every admin login is)."""

from django.test import Client
from rest_framework.test import APIClient


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def token_client(user, **limits) -> APIClient:
    """The API through a Pixie token the person made for themselves (POST /api/tokens/),
    with its limits (read_only, workspace)."""
    made = api_for(user).post("/api/tokens/", {"name": "CI", **limits}, format="json")
    assert made.status_code == 201, made.json()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {made.json()['secret']}")
    return client


def admin_for(user, client_class=Client) -> Client:
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    client = client_class()
    client.force_login(user)
    return client
