"""Two Pixie servers on loopback: a share crosses, is reviewed and imported there, and a
reply comes back; a share sent while the other server is down arrives on retry."""

import base64
import sqlite3

import pytest
from django.test import Client
from django.urls import reverse

from pixie.sharing.models import Identity, Message

from .conftest import DAILY_BRIEF_BODY
from .second_server import SecondServer

# Both servers are on loopback, which only a developer's setting allows.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("loopback_inboxes")]


@pytest.fixture
def second_server(tmp_path, live_server, settings, migrated_sqlite):
    """Rita's server, migrated and running; ours answers at the live server's address."""
    settings.PIXIE_PUBLIC_URL = live_server.url
    server = SecondServer(tmp_path, migrated_sqlite)
    server.prepare()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def connected(second_server, ann, alpha, daily_brief):
    """Alpha has Remote Desk's card and Remote Desk has Alpha's."""
    ann_client = Client()
    ann_client.force_login(ann)
    added = ann_client.post(
        "/api/workspaces/alpha/contacts/", {"card": second_server.card}, "application/json"
    )
    assert added.status_code == 201, added.json()
    our_card = ann_client.get("/api/workspaces/alpha/card/").json()
    status, body = second_server.api(
        "POST", "/api/workspaces/remote-desk/contacts/", {"card": our_card}
    )
    assert status == 201, body
    return {"ann": ann_client, "remote_desk": added.json(), "alpha_there": body}


def share_daily_brief(ann_client, contact_id):
    return ann_client.post(
        "/api/workspaces/alpha/shares/",
        {"contact": contact_id, "skill": "daily-brief"},
        "application/json",
    )


def test_a_share_crosses_to_another_server_is_imported_there_and_a_reply_comes_back(
    second_server, connected, alpha
):
    ann_client = connected["ann"]
    sent = share_daily_brief(ann_client, connected["remote_desk"]["id"])
    assert sent.status_code == 201
    assert Message.objects.get(workspace=alpha).delivery == "delivered"

    # On the second server, Rita sees the card, reviews and imports it.
    status, inbox = second_server.api("GET", "/api/workspaces/remote-desk/messages/")
    (received,) = inbox["results"]
    assert received["correspondent"] == "From Alpha"
    assert received["share"]["skill"]["name"] == "Daily Brief"
    assert received["share"]["linked_skills"] == 1
    path = f"/api/workspaces/remote-desk/messages/{received['id']}"
    status, review = second_server.api("GET", f"{path}/review/")
    assert review["unresolved_mentions"] == ["weather-report"]
    assert review["items"][0]["detailed_body"] == DAILY_BRIEF_BODY
    status, outcome = second_server.api("POST", f"{path}/import/")
    assert status == 201
    assert outcome["lines"] == ["@meeting-prep was taken — imported as @meeting-prep-2."]
    status, again = second_server.api("POST", f"{path}/import/")
    assert (status, again["repeated"]) == (200, True)

    # What the second server stored is the sealed envelope only.
    with sqlite3.connect(second_server.database) as db:
        (stored,) = db.execute("SELECT envelope FROM pixie_message").fetchone()
        (body,) = db.execute(
            "SELECT r.body FROM catalog_workspaceskill s JOIN catalog_skillrevision r "
            "ON r.id = s.head_id WHERE s.slug = 'daily-brief'"
        ).fetchone()
    sender = Identity.objects.get(workspace=alpha)
    assert b"weather-report" not in stored and b"Daily Brief" not in stored
    for key in (sender.signing_public_key, sender.box_public_key):
        assert key.encode() not in stored and base64.b64decode(key) not in stored
    assert "run @meeting-prep-2 for each meeting" in body

    # Rita replies; the reply reaches our server over HTTP and Ann reads it.
    status, reply = second_server.api(
        "POST",
        "/api/workspaces/remote-desk/messages/",
        {"contact": connected["alpha_there"]["id"], "text": "Thanks, imported!"},
    )
    assert status == 201, reply
    status, outbox = second_server.api("GET", "/api/workspaces/remote-desk/messages/")
    assert outbox["results"][0]["delivery"] == "delivered"
    ours = ann_client.get("/api/workspaces/alpha/messages/").json()["results"]
    assert (ours[0]["correspondent"], ours[0]["text"]) == ("From Remote Desk", "Thanks, imported!")


def test_a_share_sent_while_the_other_server_is_down_arrives_when_the_owner_retries(
    second_server, connected, ann, alpha
):
    second_server.stop()
    share_daily_brief(connected["ann"], connected["remote_desk"]["id"])
    sent = Message.objects.get(workspace=alpha)
    assert sent.delivery == "failed"
    assert sent.last_error == "Could not connect to the other server."

    second_server.start()
    browser = Client()
    browser.force_login(ann)
    outbox = browser.post(
        reverse("admin:pixie_message_changelist"),
        {"action": "retry_dispatch", "_selected_action": [sent.pk]},
        follow=True,
    )
    assert "Delivery tried again for 1 message(s)." in outbox.content.decode()
    sent.refresh_from_db()
    assert (sent.delivery, sent.attempts) == ("delivered", 2)
    status, inbox = second_server.api("GET", "/api/workspaces/remote-desk/messages/")
    assert inbox["count"] == 1
