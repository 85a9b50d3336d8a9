"""Private keys at rest, and tags only this server can make (PyNaCl).

Every private key Pixie holds (a workspace's box and signing keys for sharing, a
publisher's signing key for the catalog) is stored wrapped (SecretBox) under
settings.PIXIE_KEY_ENCRYPTION_KEY, which lives in the environment, not in the
database beside the ciphertext. The same key makes *tags*: keyed BLAKE2b digests
that a copy of the database alone can neither compute nor forge.
"""

from __future__ import annotations

import nacl.encoding
import nacl.exceptions
import nacl.hash
import nacl.secret
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from pixie.core.b64 import b64, bytes_from_b64  # noqa: F401 (b64 re-exported for key users)

KEY_BYTES = 32


def key_from_b64(text: object) -> bytes | None:
    """The 32-byte key that ``text`` encodes in standard base64, or None."""
    return bytes_from_b64(text, KEY_BYTES)


def key_fingerprint(*public_keys: bytes) -> str:
    """A short string two people can compare to know they hold the same key(s)."""
    digest = nacl.hash.blake2b(
        b"".join(public_keys), digest_size=10, encoder=nacl.encoding.HexEncoder
    ).decode()
    return " ".join(digest[i : i + 4] for i in range(0, len(digest), 4))


def wrapping_key() -> bytes:
    key = key_from_b64(settings.PIXIE_KEY_ENCRYPTION_KEY)
    if key is None:
        raise ImproperlyConfigured(
            "PIXIE_KEY_ENCRYPTION_KEY must be set to the base64 of 32 random bytes "
            "(`openssl rand -base64 32`): it encrypts the private keys of workspaces "
            "and publishers."
        )
    return key


def wrap_private(raw: bytes) -> bytes:
    return bytes(nacl.secret.SecretBox(wrapping_key()).encrypt(raw))


def unwrap_private(wrapped: bytes) -> bytes:
    try:
        return nacl.secret.SecretBox(wrapping_key()).decrypt(bytes(wrapped))
    except nacl.exceptions.CryptoError:
        raise ImproperlyConfigured(
            "Private keys stored here do not open with PIXIE_KEY_ENCRYPTION_KEY; "
            "it must be the key they were stored under."
        ) from None


def server_tag(data: bytes, *, person: bytes, size: int = 16) -> str:
    """A keyed digest of ``data`` that only a holder of PIXIE_KEY_ENCRYPTION_KEY makes.

    ``person`` keeps tags of one use from standing for another's (at most 16 bytes).
    """
    return nacl.hash.blake2b(
        data,
        key=wrapping_key(),
        person=person,
        digest_size=size,
        encoder=nacl.encoding.HexEncoder,
    ).decode()
