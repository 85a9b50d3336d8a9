"""Text that comes from upstream, shown and never trusted: a commit's author and message,
a file's name in a notice, and git's own error lines (which carry the server's words,
``remote: ...``).

Each piece is bounded, and nothing in it hides: the characters a reader would not see
are written out as the catalog writes them out in a skill (``catalog.findings.visible``:
bidirectional controls, zero-width characters, tag characters, stray variation
selectors, as ⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩), and the control characters a display name
may not hold (``pixie.core.names.NOT_IN_A_NAME``: an escape that recolours a terminal, a
carriage return that overwrites a log line) are written out as ⟨U+001B⟩. A message keeps
its line breaks and tabs; a line keeps neither. Lookalike letters are left as they are:
the catalog folds them only to compare a name with the catalog's (catalog.imitation), and
a commit's author is compared with nothing.
"""

from __future__ import annotations

from catalog.findings import visible
from pixie.core.names import NOT_IN_A_NAME

MORE = "…"


def upstream_line(text: str, *, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters (and a note of its length when
    it was cut), every hidden or control character written out."""
    return _shown(text, limit=limit, kept="")


def upstream_message(text: str, *, limit: int) -> str:
    """Like ``upstream_line``, for text of many lines: line breaks and tabs are kept, a
    Windows line end is a line end, and trailing blank lines go."""
    return _shown(text.replace("\r\n", "\n").rstrip("\n"), limit=limit, kept="\n\t")


def _shown(text: str, *, limit: int, kept: str) -> str:
    # Cut before writing out (a megabyte of message need not be read to show ten
    # thousand characters of it), and again after: a written-out character is longer
    # than the character, and is cut whole or not at all.
    cut = len(text) > limit
    shown = visible(text[:limit])
    shown = NOT_IN_A_NAME.sub(
        lambda found: found.group() if found.group() in kept else f"⟨U+{ord(found.group()):04X}⟩",
        shown,
    )
    if len(shown) > limit:
        cut = True
        shown = shown[:limit]
        opened = shown.rfind("⟨")
        if opened > shown.rfind("⟩"):
            shown = shown[:opened]
    return f"{shown}{MORE} ({len(text):,} characters in all)" if cut else shown
