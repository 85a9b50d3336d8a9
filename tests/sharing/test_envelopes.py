"""What the server keeps and relays is sealed, and the inbox refuses anything off."""

import base64
import json

import pytest
from django.core.exceptions import ImproperlyConfigured
from nacl.public import PrivateKey, PublicKey, SealedBox
from rest_framework.test import APIClient

from pixie.sharing import crypto
from pixie.sharing import services as sharing
from pixie.sharing.envelopes import envelope_dump
from pixie.sharing.identities import private_keys
from pixie.sharing.models import Identity, Message
from tests.factories import make_user, make_workspace

from .conftest import DAILY_BRIEF_BODY

pytestmark = pytest.mark.django_db

REFUSED_WORDS = "The envelope was refused."
REFUSED = {"code": "refused", "detail": REFUSED_WORDS, "problems": [REFUSED_WORDS]}


@pytest.fixture
def undelivered(alpha, ann, daily_brief, contacts):
    """Ann's share to Beta, sealed and stored, its delivery not yet run."""
    return sharing.share_send(
        workspace=alpha, skill=daily_brief, contact=contacts["beta_at_alpha"], actor=ann
    )


def post(raw: bytes, client=None):
    return (client or APIClient()).generic(
        "POST", "/api/inbox/", raw, content_type="application/json"
    )


def genuine(message: Message) -> dict:
    return json.loads(
        envelope_dump(
            message_id=message.message_id,
            to=message.contact.box_public_key,
            sealed=message.envelope,
        )
    )


def reseal(document: dict, plaintext: bytes, to_box_key: str) -> bytes:
    sealed = SealedBox(PublicKey(crypto.key_from_b64(to_box_key))).encrypt(plaintext)
    return json.dumps({**document, "to": to_box_key, "sealed": crypto.b64(sealed)}).encode()


def opened_by(workspace, document: dict) -> bytes:
    """What the recipient sees inside the seal (as a malicious recipient could)."""
    keys = private_keys(Identity.objects.get(workspace=workspace))
    return SealedBox(PrivateKey(keys.box_private)).decrypt(base64.b64decode(document["sealed"]))


def test_the_stored_envelopes_reveal_neither_the_body_nor_the_sender(alpha, beta, undelivered):
    assert post(json.dumps(genuine(undelivered)).encode()).status_code == 202
    sender = Identity.objects.get(workspace=alpha)
    secrets_of_the_letter = [
        DAILY_BRIEF_BODY.split("\n")[0],
        "pixie_skill_share",
        "Daily Brief",
        sender.signing_public_key,
        sender.box_public_key,
        "alpha",
    ]
    raw_keys = [
        crypto.key_from_b64(sender.signing_public_key),
        crypto.key_from_b64(sender.box_public_key),
    ]
    for message in Message.objects.all():
        stored = [bytes(message.envelope), bytes(message.own_copy or b"")]
        for blob in stored:
            for text in secrets_of_the_letter:
                assert text.encode() not in blob
                assert base64.b64encode(text.encode()) not in blob
            for key in raw_keys:
                assert key not in blob
    received = Message.objects.get(direction="in")
    assert received.workspace == beta
    assert received.contact is None  # the server does not know, or keep, who sent it


def test_the_genuine_envelope_lands_once_and_a_replay_is_refused(beta, undelivered):
    raw = json.dumps(genuine(undelivered)).encode()
    assert post(raw).status_code == 202
    replay = post(raw)
    assert replay.status_code == 409
    again = "This envelope was already received."
    assert replay.json() == {"code": "duplicate", "detail": again, "problems": [again]}
    assert Message.objects.filter(workspace=beta).count() == 1


def test_a_replay_under_a_new_message_id_is_refused(beta, undelivered):
    document = genuine(undelivered)
    assert post(json.dumps(document).encode()).status_code == 202
    document["id"] = "00000000-0000-4000-8000-000000000000"
    response = post(json.dumps(document).encode())
    assert (response.status_code, response.json()) == (400, REFUSED)
    assert Message.objects.filter(workspace=beta).count() == 1


def test_a_flipped_byte_anywhere_in_the_seal_is_refused(beta, undelivered):
    document = genuine(undelivered)
    sealed = bytearray(base64.b64decode(document["sealed"]))
    for position in (0, 40, len(sealed) // 2, len(sealed) - 1):
        flipped = bytearray(sealed)
        flipped[position] ^= 0x01
        response = post(json.dumps({**document, "sealed": crypto.b64(bytes(flipped))}).encode())
        assert (response.status_code, response.json()) == (400, REFUSED)
    assert not Message.objects.filter(workspace=beta).exists()


def test_a_letter_altered_inside_a_fresh_seal_fails_its_signature(beta, undelivered):
    document = genuine(undelivered)
    plaintext = bytearray(opened_by(beta, document))
    plaintext[-20] ^= 0x01  # somewhere in the signed letter
    response = post(reseal(document, bytes(plaintext), document["to"]))
    assert (response.status_code, response.json()) == (400, REFUSED)
    assert not Message.objects.filter(workspace=beta).exists()


def test_a_recipient_cannot_forward_a_letter_to_someone_else_as_if_addressed_to_them(
    beta, undelivered
):
    carol = make_user("carol")
    gamma = make_workspace("gamma", owner=carol)
    gamma_key = sharing.identity_ensure(workspace=gamma).box_public_key
    document = genuine(undelivered)
    # Beta opens Ann's letter and seals the very same signed bytes to Gamma.
    forwarded = reseal(document, opened_by(beta, document), gamma_key)
    response = post(forwarded)
    assert (response.status_code, response.json()) == (400, REFUSED)
    assert not Message.objects.filter(workspace=gamma).exists()


def test_an_envelope_sent_to_the_wrong_recipient_key_is_refused(beta, undelivered):
    gamma = make_workspace("gamma", owner=make_user("carol"))
    document = genuine(undelivered)
    document["to"] = sharing.identity_ensure(workspace=gamma).box_public_key
    response = post(json.dumps(document).encode())
    assert (response.status_code, response.json()) == (400, REFUSED)


def test_an_unknown_recipient_is_refused_exactly_like_a_bad_seal(undelivered):
    document = genuine(undelivered)
    document["to"] = crypto.b64(bytes(PrivateKey.generate().public_key))
    response = post(json.dumps(document).encode())
    assert (response.status_code, response.json()) == (400, REFUSED)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"not json", "The envelope is not JSON."),
        (b"[]", "An envelope has exactly the fields id, pixie_envelope, sealed, to."),
        (
            b'{"pixie_envelope": 2, "id": "x", "to": "short", "sealed": "%%%"}',
            "pixie_envelope must be 1; id must be a UUID in its canonical form; "
            "to must be a 32-byte public key in base64; sealed must be base64",
        ),
    ],
)
def test_a_malformed_envelope_is_refused_with_what_is_wrong(raw, says):
    response = post(raw)
    assert response.status_code == 400
    assert response.json()["detail"] == says
    assert not Message.objects.exists()


def test_an_oversized_envelope_is_refused_before_it_is_read(settings):
    settings.PIXIE_INBOX_MAX_BYTES = 1000
    response = post(b"x" * 1001)
    assert response.status_code == 413
    too_large = "An envelope is at most 1000 bytes."
    assert response.json() == {"code": "too_large", "detail": too_large, "problems": [too_large]}


def test_the_inbox_takes_only_post_and_needs_no_login_or_csrf():
    opened = APIClient().get("/api/inbox/")
    assert opened.status_code == 405 and opened["Allow"] == "POST"
    assert opened.json()["detail"] == (
        "The inbox takes sealed envelopes from other servers, by POST; it has nothing to read."
    )
    assert APIClient(enforce_csrf_checks=True).post("/api/inbox/", {}).status_code == 400


def test_private_keys_are_stored_wrapped_under_a_key_that_is_not_in_the_database(alpha, settings):
    identity = sharing.identity_ensure(workspace=alpha)
    keys = private_keys(identity)
    assert keys.box_private not in bytes(identity.box_private_wrapped)
    assert keys.signing_seed not in bytes(identity.signing_private_wrapped)
    settings.PIXIE_KEY_ENCRYPTION_KEY = crypto.b64(b"\x07" * 32)
    with pytest.raises(ImproperlyConfigured, match="do not open with PIXIE_KEY_ENCRYPTION_KEY"):
        private_keys(Identity.objects.get(pk=identity.pk))
    settings.PIXIE_KEY_ENCRYPTION_KEY = ""
    with pytest.raises(ImproperlyConfigured, match="must be set"):
        private_keys(Identity.objects.get(pk=identity.pk))
