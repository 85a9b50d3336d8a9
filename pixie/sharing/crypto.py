"""Keys and sealed envelopes for messages between workspaces (PyNaCl).

A workspace has two key pairs: Curve25519 for encryption, Ed25519 for
signatures. A letter (message id, recipient, sender card, body) is signed with
the sender's signing key, then sealed to the recipient's public key with an
anonymous SealedBox, so the envelope reveals neither the body nor the sender;
only the recipient's private key opens it. Signing the recipient and the
message id with the body means a recipient cannot forward a letter to someone
else as if it had been addressed to them, nor re-send it under a new id.

Private keys are stored wrapped under settings.PIXIE_KEY_ENCRYPTION_KEY (pixie.core.keys),
which lives in the environment, not in the database beside the ciphertext.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import nacl.exceptions
from nacl.public import PrivateKey, PublicKey, SealedBox
from nacl.signing import SigningKey, VerifyKey

# Key encoding and wrapping are the kernel's (pixie.core.keys); re-exported for sharing's modules.
from pixie.core.keys import (  # noqa: F401
    KEY_BYTES,
    b64,
    key_fingerprint,
    key_from_b64,
    server_tag,
    unwrap_private,
    wrap_private,
)

SIGNATURE_BYTES = 64
SENDER_FIELDS = frozenset({"name", "workspace", "boxKey", "signingKey", "inboxUrl"})
LETTER_FIELDS = frozenset({"id", "to", "from", "sentAt", "body"})


class EnvelopeRefused(Exception):
    """An envelope that does not open, or opens to something we must not trust."""


@dataclass(frozen=True)
class KeyPairs:
    box_public: bytes
    box_private: bytes
    signing_public: bytes
    signing_seed: bytes


@dataclass(frozen=True)
class Letter:
    """What a sealed envelope holds, once opened and its signature checked."""

    message_id: str
    to: bytes  # the recipient's box public key, as the sender signed it
    sender: dict[str, str]  # the sender's contact card fields (camelCase keys)
    signing_key: bytes  # the key that signed it
    sent_at: str
    body: str


def fingerprint(signing_public: bytes, box_public: bytes) -> str:
    """A short string two people can compare to know they hold the same card."""
    return key_fingerprint(signing_public, box_public)


def sender_tag(signing_public: bytes) -> str:
    """A stable tag of a sender's signing key that only this server can compute.

    Keyed with PIXIE_KEY_ENCRYPTION_KEY (never in the database), so the inbox
    can count, block and find a sender's messages while a copy of the database
    alone does not say who sent them.
    """
    return server_tag(signing_public, person=b"pixie-sender")


def new_key_pairs() -> KeyPairs:
    box = PrivateKey.generate()
    signing = SigningKey.generate()
    return KeyPairs(
        box_public=bytes(box.public_key),
        box_private=bytes(box),
        signing_public=bytes(signing.verify_key),
        signing_seed=bytes(signing),
    )


def seal(
    *,
    message_id: str,
    recipient_box_public: bytes,
    sender: dict[str, str],
    signing_seed: bytes,
    sent_at: str,
    body: str,
    seal_to: bytes | None = None,
) -> bytes:
    """Sign a letter to ``recipient_box_public`` and seal it (to ``seal_to`` if given).

    ``seal_to`` lets the sender keep a copy only it can read: the same signed
    letter, sealed to its own key.
    """
    letter = {
        "id": message_id,
        "to": b64(recipient_box_public),
        "from": sender,
        "sentAt": sent_at,
        "body": body,
    }
    payload = json.dumps(letter, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    signing = SigningKey(signing_seed)
    plaintext = bytes(signing.verify_key) + bytes(signing.sign(payload))
    return bytes(SealedBox(PublicKey(seal_to or recipient_box_public)).encrypt(plaintext))


def open_sealed(
    *, sealed: bytes, box_private: bytes, message_id: str, addressed_to: bytes | None
) -> Letter:
    """Open, verify and check a sealed letter; raise EnvelopeRefused if anything is off.

    ``addressed_to`` is the box key the letter must name as its recipient
    (None only for the sender's own copy, which names the contact).
    """
    try:
        plaintext = SealedBox(PrivateKey(box_private)).decrypt(bytes(sealed))
    except nacl.exceptions.CryptoError:
        raise EnvelopeRefused("it does not open with this workspace's key") from None
    if len(plaintext) < KEY_BYTES + SIGNATURE_BYTES:
        raise EnvelopeRefused("it is too short to be a signed letter")
    signing_key = plaintext[:KEY_BYTES]
    try:
        payload = VerifyKey(signing_key).verify(plaintext[KEY_BYTES:])
    except nacl.exceptions.BadSignatureError:
        raise EnvelopeRefused("its signature does not verify") from None
    letter = _parse_letter(payload)
    if letter["id"] != message_id:
        raise EnvelopeRefused("it was signed under another message id")
    to = key_from_b64(letter["to"])
    if to is None or (addressed_to is not None and to != addressed_to):
        raise EnvelopeRefused("it was addressed to someone else")
    if key_from_b64(letter["from"]["signingKey"]) != signing_key:
        raise EnvelopeRefused("its sender's card names another signing key")
    return Letter(
        message_id=letter["id"],
        to=to,
        sender=letter["from"],
        signing_key=signing_key,
        sent_at=letter["sentAt"],
        body=letter["body"],
    )


def _parse_letter(payload: bytes) -> dict:
    try:
        letter = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise EnvelopeRefused("its letter is not JSON") from None
    if not isinstance(letter, dict) or letter.keys() != LETTER_FIELDS:
        raise EnvelopeRefused("its letter does not have the expected fields")
    sender = letter["from"]
    if not isinstance(sender, dict) or sender.keys() != SENDER_FIELDS:
        raise EnvelopeRefused("its sender card does not have the expected fields")
    values = [letter["id"], letter["to"], letter["sentAt"], letter["body"], *sender.values()]
    if not all(isinstance(value, str) for value in values):
        raise EnvelopeRefused("its letter has a field that is not text")
    return letter
