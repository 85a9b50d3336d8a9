"""A flood of valid envelopes from strangers' fresh keys, through the public inbox.

Issue #13: 2,000 valid 60 KB envelopes from unknown keys were all taken (202)
and each stored twice (its row and a history version). Now the inbox keeps at
most the unknown senders' quota, answers the rest 429 with Retry-After, never
copies an envelope into history, and a contact's message still arrives in the
middle of it. CI sends 200; PIXIE_HEAVY=1 sends 2,000.
"""

import os
import time

import pytest
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db.models import Sum
from django.db.models.functions import Length
from django.test import Client
from django.urls import reverse
from reversion.models import Version

from pixie.sharing import crypto
from pixie.sharing import services as sharing
from pixie.sharing.models import InboxRefusals, Message
from tests.factories import add_local_contact, make_user, make_workspace
from tests.sharing.strangers import envelope, post

pytestmark = pytest.mark.django_db

FLOOD = 2000 if os.environ.get("PIXIE_HEAVY") == "1" else 200
BODY = "x" * 60_000  # a sealed envelope of about 60 KB


def test_a_flood_from_strangers_stores_at_most_the_quota_and_a_contact_still_gets_through(
    django_capture_on_commit_callbacks, record_property
):
    owner, friend = make_user("bob", is_staff=True), make_user("ann")
    beta = make_workspace("beta", owner=owner)
    alpha = make_workspace("alpha", owner=friend)
    to_beta = add_local_contact(workspace=alpha, other_slug="beta", actor=friend)
    add_local_contact(workspace=beta, other_slug="alpha", actor=owner)
    client = Client()

    statuses, retry_after = [], set()
    contact_note = None
    started = time.monotonic()
    for number in range(FLOOD):
        answer = post(envelope(beta, body=BODY), client, REMOTE_ADDR="203.0.113.66")
        statuses.append(answer.status_code)
        if answer.status_code == 429:
            retry_after.add(answer.get("Retry-After"))
        if number == FLOOD // 2:  # the contact writes while the flood goes on
            with django_capture_on_commit_callbacks(execute=True):
                contact_note = sharing.text_send(
                    workspace=alpha, contact=to_beta, text="Lunch on Friday?", actor=friend
                )
    seconds = time.monotonic() - started

    taken = statuses.count(202)
    refused = statuses.count(429)
    assert taken + refused == FLOOD, set(statuses)
    assert None not in retry_after and all(int(value) > 0 for value in retry_after)

    from_strangers = Message.objects.filter(
        workspace=beta, direction=Message.Direction.INCOMING, from_contact=False
    )
    # The bytes in the rows, as the database counts them (not the database file's size).
    stored_bytes = from_strangers.aggregate(bytes=Sum(Length("envelope")))["bytes"] or 0
    stored_count = from_strangers.count()
    assert stored_count == taken
    assert stored_count <= settings.PIXIE_INBOX_UNKNOWN_MAX_PENDING
    assert stored_bytes <= settings.PIXIE_INBOX_UNKNOWN_MAX_PENDING_BYTES

    tally = InboxRefusals.objects.filter(workspace=beta).aggregate(
        over_quota=Sum("over_quota"), rate_limited=Sum("rate_limited")
    )
    assert (tally["over_quota"] or 0) + (tally["rate_limited"] or 0) == refused
    assert InboxRefusals.objects.filter(workspace=beta).count() == 1

    # History says what arrived, never the bytes.
    message_type = ContentType.objects.get_for_model(Message)
    versions = Version.objects.filter(content_type=message_type)
    history_bytes = sum(len(data) for data in versions.values_list("serialized_data", flat=True))
    for blob in from_strangers.values_list("envelope", flat=True)[:5]:
        assert not versions.filter(serialized_data__contains=crypto.b64(bytes(blob))[:64]).exists()
    assert history_bytes < 1000 * (stored_count + 2)

    # The contact's note was delivered mid-flood, and Bob sees it with the count refused.
    contact_note.refresh_from_db()
    assert contact_note.delivery == Message.Delivery.DELIVERED
    browser = Client()
    browser.force_login(owner)
    page = " ".join(
        browser.get(reverse("admin:pixie_message_changelist") + "?workspace=beta")
        .content.decode()
        .split()
    )
    assert "Lunch on Friday?" in page
    assert f"Refused in the last 30 days, not stored: {tally['over_quota'] or 0} over" in page

    waits = [int(value) for value in retry_after]
    record_property(
        "figure",
        f"{FLOOD} valid {len(BODY) // 1000} KB envelopes from fresh keys in {seconds:.0f} s: "
        f"{stored_count} stored ({stored_bytes / 1e6:.2f} MB), {refused} refused with 429 "
        f"(Retry-After {min(waits)} to {max(waits)} s); history of received messages "
        f"{history_bytes / 1000:.1f} KB, no envelope bytes; the contact's message delivered",
    )
