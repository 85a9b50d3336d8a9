"""Standard base64 for keys and signatures, strict about length. Pure (no Django)."""

from __future__ import annotations

import base64
import binascii


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def bytes_from_b64(text: object, size: int) -> bytes | None:
    """The ``size`` bytes that ``text`` encodes in standard base64, or None."""
    if not isinstance(text, str) or len(text) != 4 * ((size + 2) // 3):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == size else None
