"""The envelope as it travels between servers, and its hard validation.

``{"pixie_envelope": 1, "id": "<uuid>", "to": "<recipient box key>", "sealed": "<base64>"}``

The outside names only the message id (for dedup) and the recipient's public
key (for routing); the sender and the body are inside the seal.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid

from django.conf import settings

from pixie.core.errors import ErrorCode, PixieError, ValidationFailed
from pixie.sharing import crypto

ENVELOPE_SENTINEL = "pixie_envelope"
ENVELOPE_FIELDS = frozenset({ENVELOPE_SENTINEL, "id", "to", "sealed"})


class EnvelopeTooLarge(PixieError):
    code = ErrorCode.TOO_LARGE
    status = 413


def envelope_dump(*, message_id: uuid.UUID, to: str, sealed: bytes) -> bytes:
    document = {
        ENVELOPE_SENTINEL: 1,
        "id": str(message_id),
        "to": to,
        "sealed": base64.b64encode(bytes(sealed)).decode("ascii"),
    }
    return json.dumps(document, separators=(",", ":")).encode("ascii")


def envelope_parse(raw: bytes) -> tuple[uuid.UUID, bytes, bytes]:
    """(message id, recipient box key, sealed bytes), or ValidationFailed naming the fault.

    Size comes first, then shape; nothing here looks anything up.
    """
    limit = settings.PIXIE_INBOX_MAX_BYTES
    if len(raw) > limit:
        raise EnvelopeTooLarge(f"An envelope is at most {limit} bytes.")
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        raise ValidationFailed("The envelope is not JSON.", code=ErrorCode.BAD_ENVELOPE) from None
    if not isinstance(document, dict) or document.keys() != ENVELOPE_FIELDS:
        raise ValidationFailed(
            f"An envelope has exactly the fields {', '.join(sorted(ENVELOPE_FIELDS))}.",
            code=ErrorCode.BAD_ENVELOPE,
        )
    problems = []
    if document[ENVELOPE_SENTINEL] != 1 or isinstance(document[ENVELOPE_SENTINEL], bool):
        problems.append(f"{ENVELOPE_SENTINEL} must be 1")
    message_id = _uuid(document["id"])
    if message_id is None:
        problems.append("id must be a UUID in its canonical form")
    to = crypto.key_from_b64(document["to"])
    if to is None:
        problems.append("to must be a 32-byte public key in base64")
    sealed = _base64(document["sealed"])
    if sealed is None:
        problems.append("sealed must be base64")
    if problems:
        raise ValidationFailed(problems, code=ErrorCode.BAD_ENVELOPE)
    return message_id, to, sealed


def _uuid(value: object) -> uuid.UUID | None:
    if not isinstance(value, str) or len(value) != 36:
        return None
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return None
    return parsed if str(parsed) == value else None


def _base64(value: object) -> bytes | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
