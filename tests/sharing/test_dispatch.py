"""Delivery: once per message, retried when the other side is away, never twice."""

import socket
import time
import uuid

import pytest

from pixie.celery import app as celery_app
from pixie.sharing import services as sharing
from pixie.sharing.dispatch import DispatchDeferred, message_dispatch
from pixie.sharing.models import Contact, Message
from pixie.sharing.tasks import dispatch_message
from tests.factories import make_user, make_workspace

from .remote_stub import remote_inbox

# The remotes here are stubs on loopback, which only a developer's setting allows
# (tests/reliability/test_outbound_dispatch.py shows what happens without it).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loopback_inboxes")]


def remote_contact(workspace, actor, inbox_url) -> Contact:
    """A contact on another server (its keys made here, then forgotten here)."""
    far_away = make_workspace(f"far-{uuid.uuid4().hex[:6]}", owner=make_user())
    card = sharing.contact_card_export(workspace=far_away)
    card["pixie_contact_card"]["inboxUrl"] = inbox_url
    contact = sharing.contact_card_import(workspace=workspace, card=card, actor=actor)
    far_away.delete()  # its identity goes with it: the contact is now truly remote
    return contact


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/inbox/"


def state(message):
    message.refresh_from_db()
    return message.delivery, message.attempts, message.last_error


def test_running_the_delivery_again_never_lands_a_message_twice(
    ann, alpha, beta, contacts, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        sent = sharing.text_send(
            workspace=alpha, contact=contacts["beta_at_alpha"], text="Once.", actor=ann
        )
    assert dispatch_message.delay(sent.pk).get() == "already delivered"
    # Even if the sender lost track of having delivered it, the inbox dedups by id.
    Message.objects.filter(pk=sent.pk).update(delivery=Message.Delivery.PENDING)
    assert dispatch_message.delay(sent.pk).get() == "delivered"
    assert Message.objects.filter(workspace=beta).count() == 1


def test_an_unreachable_contact_is_reported_and_can_be_retried(
    ann, alpha, django_capture_on_commit_callbacks
):
    contact = remote_contact(alpha, ann, closed_port_url())
    with django_capture_on_commit_callbacks(execute=True):
        sent = sharing.text_send(workspace=alpha, contact=contact, text="Hello?", actor=ann)
    delivery, attempts, error = state(sent)
    assert (delivery, attempts) == ("failed", 1)
    assert error == "Could not connect to the other server."

    with remote_inbox() as (url, received):
        Contact.objects.filter(pk=contact.pk).update(inbox_url=url)
        with django_capture_on_commit_callbacks(execute=True):
            sharing.message_retry(message=sent, actor=ann)
    assert state(sent) == ("delivered", 2, "")
    assert [envelope["id"] for envelope in received] == [str(sent.message_id)]


def test_a_busy_remote_is_tried_again_later_and_a_refusing_one_is_not(ann, alpha):
    with remote_inbox(503, 400) as (url, received):
        contact = remote_contact(alpha, ann, url)
        sent = sharing.text_send(workspace=alpha, contact=contact, text="Hi.", actor=ann)
        with pytest.raises(DispatchDeferred, match=r"busy \(HTTP 503\); will try again"):
            message_dispatch(message_pk=sent.pk, final_attempt=False)
        assert state(sent)[:2] == ("pending", 1)
        assert message_dispatch(message_pk=sent.pk, final_attempt=False) == "failed"
    assert state(sent) == ("failed", 2, "The other server refused the message (HTTP 400).")
    assert len(received) == 2 and received[0] == received[1]  # the same envelope each time


def test_a_redirect_is_not_followed(ann, alpha):
    with remote_inbox(307) as (url, received):
        contact = remote_contact(alpha, ann, url)
        sent = sharing.text_send(workspace=alpha, contact=contact, text="Hi.", actor=ann)
        assert message_dispatch(message_pk=sent.pk, final_attempt=True) == "failed"
    assert len(received) == 1
    assert state(sent)[2] == "The other server refused the message (HTTP 307)."


@pytest.mark.slow  # a real worker waiting out real backoff delays: about 10 s
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_retries_with_backoff_until_the_remote_takes_it(
    postgres_only, queue, monkeypatch
):
    from celery.contrib.testing.worker import start_worker

    owner = make_user("ann")
    alpha = make_workspace("alpha", owner=owner)
    monkeypatch.setattr(dispatch_message, "retry_backoff", 1)  # 1 s, then 2 s: a short test
    monkeypatch.setattr(dispatch_message, "retry_jitter", False)
    with remote_inbox(503, 503) as (url, received):
        contact = remote_contact(alpha, owner, url)
        # queues=: an earlier in-process worker may have narrowed what the app consumes.
        with start_worker(
            celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, queues=[queue]
        ):
            sent = sharing.text_send(workspace=alpha, contact=contact, text="Hi.", actor=owner)
            deadline = time.monotonic() + 60
            while state(sent)[0] != "delivered" and time.monotonic() < deadline:
                time.sleep(0.2)
    assert state(sent) == ("delivered", 3, "")
    assert len(received) == 3 and len({envelope["id"] for envelope in received}) == 1


def test_the_delivery_task_retries_transient_failures_with_backoff():
    assert dispatch_message.autoretry_for == (DispatchDeferred,)
    assert dispatch_message.retry_backoff and dispatch_message.retry_jitter
    assert dispatch_message.max_retries >= 5
