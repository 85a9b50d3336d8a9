"""Display names (of workspaces, bundles, skills, agents, publishers, tools, tokens): one
line of text a person reads in pages, plans and the subjects of emails.

A control character (a line break, a tab, an escape) breaks the line a name is shown on,
and Django refuses a line break in an email header outright, so one such name stopped
every email behind it. A bidirectional control reorders how the rest of the line reads.
Both are refused wherever a name enters (the model field's validator serves the admin's
forms and the API's serializers; the loaders and services call ``name_problem``), and a
name already stored is made one line before it goes into a header (``one_line``).
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

# Unicode's control characters (category Cc: C0, DEL, C1), its line and paragraph
# separators (Zl, Zp), and the bidirectional controls (a subset of Cf: marks,
# embeddings, overrides, isolates). A character class: one pass, linear in the name.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
NOT_IN_A_NAME = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}]")
BIDI = re.compile(f"[{BIDI_CONTROLS}]")
LINE_BREAKS = "\n\r\x0b\x0c\x85\u2028\u2029"


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot be a display name, naming the first character at fault; or
    None."""
    found = NOT_IN_A_NAME.search(value)
    if found is None:
        return None
    char = found.group()
    code = f"U+{ord(char):04X}"
    if BIDI.fullmatch(char):
        return f"holds a bidirectional control ({code}), which reorders how it reads"
    kind = "a line break" if char in LINE_BREAKS else "a control character"
    return f"holds {kind} ({code}); a name is one line of text"


def validate_name(value: str) -> None:
    """The model field validator: the admin's forms and the API's serializers run it."""
    problem = name_problem(value)
    if problem:
        raise ValidationError(f"The name {problem}.", code="control_character")


def one_line(text: str) -> str:
    """``text`` with each character a name may not hold replaced by a space: for a header
    (an email's subject) built from rows stored before names were checked."""
    return NOT_IN_A_NAME.sub(" ", text)
