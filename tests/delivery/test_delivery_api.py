"""Delivery's API, as a script of an owner's (or an auditor's) would use it."""

from __future__ import annotations

from django.contrib.auth.models import Group

from pixie.core.people.permissions import AUDITORS_GROUP
from pixie.delivery.models import DeliveryToken
from tests.clients import api_for
from tests.delivery.test_delivery_page import fetch_all
from tests.factories import make_user
from tests.installer.flow import install

TOKENS = "/api/workspaces/acme/delivery/tokens/"
CLIENTS = "/api/workspaces/acme/delivery/clients/"


def test_an_owner_makes_reads_rotates_and_revokes_tokens_through_the_api(
    acme, owner, member, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
            agents=agents)  # fmt: skip
    api = api_for(owner)
    made = api.post(TOKENS, {"name": "Desk laptops", "agent": "collections"}, format="json")
    assert made.status_code == 201, made.json()
    body = made.json()
    assert body["agent"] == "collections" and body["created_by"] == "owen"
    assert body["url"].startswith("http://testserver/deliver/pxd_") and body["url"].endswith("/")
    assert "no-store" in made["Cache-Control"]
    secret = body["url"].split("/deliver/", 1)[1].rstrip("/")
    fetch_all(api, secret)

    listed = api.get(TOKENS).json()
    assert [(t["name"], t["clients"]) for t in listed] == [("Desk laptops", 1)]
    assert "url" not in listed[0] and secret not in str(listed)
    assert api_for(member).get(TOKENS).json() == listed
    assert api.get(TOKENS, {"agent": "front-desk"}).json() == []

    clients = api.get(CLIENTS).json()
    assert clients["behind"] == [] and clients["more_clients"] == 0
    [client] = clients["clients"]
    assert client["network"] == "203.0.113.0/24" and client["token_name"] == "Desk laptops"
    assert {h["skill"] for h in client["holds"]} == {
        "ar-ground-rules", "invoice-chase", "take-payment", "apply-credit-note"
    }  # fmt: skip
    assert all(h["current"] and h["revision"] == 1 for h in client["holds"])

    rotated = api.post(f"{TOKENS}{body['id']}/rotate/")
    assert rotated.status_code == 201
    assert rotated.json()["url"] != body["url"] and rotated.json()["name"] == "Desk laptops"
    new = rotated.json()["id"]
    assert api.delete(f"{TOKENS}{body['id']}/").status_code == 404  # revoked by the rotation
    assert api.delete(f"{TOKENS}{new}/").status_code == 204
    assert DeliveryToken.objects.filter(revoked_at=None).count() == 0


def test_bad_input_and_other_peoples_writes_change_nothing(acme, owner, member, agents):
    api = api_for(owner)
    assert api.post(TOKENS, {"name": "", "agent": "collections"}, format="json").status_code == 400
    assert api.post(TOKENS, {"name": "X", "agent": "nobody"}, format="json").status_code == 404
    refused = api.post(TOKENS, {"name": "X", "extra": 1}, format="json")
    assert refused.status_code == 400 and "extra" in str(refused.json())
    assert api_for(member).post(TOKENS, {"name": "Mine"}, format="json").status_code == 403
    assert DeliveryToken.objects.count() == 0

    auditor = make_user("audra")
    auditor.groups.add(Group.objects.get_or_create(name=AUDITORS_GROUP)[0])
    reads = api_for(auditor)
    assert reads.get(CLIENTS).status_code == 200 and reads.get(TOKENS).status_code == 200
    assert reads.post(TOKENS, {"name": "Audit"}, format="json").status_code == 404
    assert DeliveryToken.objects.count() == 0
