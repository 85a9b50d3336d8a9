"""Whole numbers as people and addresses give them: an id in a path, a position or a
plan number in a query string, a header's length.

str.isdigit() is not the test: it also takes "²" and "١", which int() refuses (a crash,
500) or reads as another number. Only ASCII digits count, and at most 18 of them, the
most a bigint column surely holds: a longer number names no row.
"""

MAX_DIGITS = 18


def whole_number(text, *, digits: int = MAX_DIGITS) -> int | None:
    """``text`` as a whole number (0 or more) if it is one of at most ``digits`` ASCII
    digits, else None."""
    text = str(text)
    if text.isascii() and text.isdigit() and len(text) <= digits:
        return int(text)
    return None
