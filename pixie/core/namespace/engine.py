"""The @-mention namespace: slugs, mention parsing, slug allocation, rename
cascade and skill closure.

Pure standard-library code: no Django, no database. Skills and tools share one
flat namespace of slugs matching ``^[a-z0-9][a-z0-9-]{0,63}$``.

Mention rules (shared by ``parse_mentions``, ``mention_set`` and the renames): an
``@`` not preceded by an ASCII letter, digit, ``.`` or ``_`` (so
``ann@example.com`` is an address, not a mention), followed by the longest run of
``[A-Za-z0-9-]`` that starts with a letter or digit. Trailing hyphens are
punctuation, not part of the slug (``@plan-.`` mentions ``plan``). The slug is the
run lowercased; a run longer than 64 characters is not a mention at all rather than
a truncated one, because truncating would make ``@`` + 70 letters silently refer
to a different, shorter skill. What published skills write in prose that is no
skill is not a mention either: an ``@`` after ``/`` (``@workflow/@task``), a
camelCase run (``@borealBytes``: a handle), and a run followed by ``/``
(``@scope/pkg``), ``_`` (``@small_task``), ``.`` and a letter or digit
(``@mcp.tool``) or ``](http`` (``[@name](https://...)``, a profile link).

Mentions follow Markdown (CommonMark): an ``@`` inside code is text, not a
mention, so it is not parsed, not followed by ``closure`` and not rewritten by a
rename. Code is, as CommonMark reads it:

- a fenced code block: a line of at least three backticks or tildes indented by at
  most 3 spaces (a backtick fence's info string holds no backtick), through the
  next line of the same character, at least as long, indented by at most 3 spaces
  and followed only by spaces or tabs, or through the end of the text if none
  closes it. The fence lines and the info string are code too;
- an indented code block: lines indented by 4 or more columns (a tab counts as
  reaching the next multiple of 4) at the start of the text or after a blank line
  or a fenced block; blank lines between such lines belong to it;
- a code span, outside those blocks: a run of n backticks through the next run of
  exactly n backticks, including both runs. It does not reach past the end of its
  paragraph: a blank line, a fenced block, or a line that starts a heading, block
  quote, list item, thematic break or setext underline. A run that nothing closes is
  literal text, and so is a backtick escaped by a backslash (an odd number of them,
  up to 5) outside code spans; inside one a backslash is literal.

Lists, simplified: once the text has a line that starts a list item (after at most 3
spaces, ``-``, ``+``, ``*`` or 1 to 9 digits and ``.`` or ``)``, then a space or
tab; even inside a fence), an indented block is code only when the paragraph before
it starts at the margin and is not a list item (so any list before it is closed, as
a paragraph, heading or fence at the margin after a blank line closes it); otherwise
its lines are an item's continuation, which CommonMark reads as prose. A fence's
opening line may be indented by up to 12 spaces or tabs or follow a list marker
(indented by up to 8, with up to 3 digits), its closing line by up to 12, so that a
fence nested in a list item is still code. Any numbered line ends a code span's
paragraph there, where CommonMark lets only ``1.`` interrupt a paragraph outside a
list.

Not supported (an ``@`` there is read as before, as a mention, unless stated):
block quotes (a fence inside ``>`` is not seen, though backticks there still pair
up as code spans), HTML blocks, raw HTML and autolinks (``<a title="`">``), link
reference definitions, an indented code block right after a heading or thematic
break without a blank line, a code span that opens in an ATX heading and would
close on a later line (CommonMark keeps it literal; here it may pair across the line
end), a container ending a fence early (a fence in a list item closes where the item
ends; here it runs to its closing line), and lone carriage-return line endings (CR LF
is fine).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Mapping

MAX_SLUG = 64
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")

# Character classes are spelled out in ASCII (never \w, \d or re.IGNORECASE
# without re.ASCII): in Unicode mode [a-z] with IGNORECASE also matches the
# Kelvin sign and the long s, which would let look-alike text name a skill.
# The "@" comes first and the look-behind checks the character before it: a pattern
# that starts with a literal lets the regex engine jump between "@"s (3x faster).
#
# A "/" before the "@" makes it part of a path (@workflow/@task). What follows the "@"
# decides too. A camelCase run (a lowercase letter then a capital:
# @borealBytes) is a handle or an identifier, not a slug in some case of its own. A run
# followed by "/" (@scope/pkg, @workflow/@task), "_" (@small_task), "." and a letter or
# digit (@mcp.tool, @app.route) or "](http" (a profile link, [@name](https://...)) is a
# package, path, decorator or person, not a skill. The run is possessive (*+), so that
# a refused run is not retried shorter.
_AT = r"@(?<![A-Za-z0-9._/]@)"
_NOT_CAMEL = r"(?-i:(?![A-Za-z0-9-]*?[a-z][A-Z]))"
_BEFORE_MENTION = _AT + _NOT_CAMEL
# A rename looks for camelCase only in texts that have such a run at all: the check
# at every "@" costs as much as the rest of a rename's pass.
_CAMEL_AT = re.compile(_AT + r"[A-Za-z0-9-]*?[a-z][A-Z]")
_NOT_A_NAME_AFTER = r"(?!-*+(?:/|_|\.[A-Za-z0-9]|\]\(https?:))"
_MENTION_RE = re.compile(_BEFORE_MENTION + r"([A-Za-z0-9][A-Za-z0-9-]*+)" + _NOT_A_NAME_AFTER)
_NOT_SLUG_CHARS = re.compile(r"[^A-Za-z0-9]+")

# Code, per the module docstring, is found by compiled regexes, so in C. A text with
# backticks only (no tilde fence, no indented code) takes one pass: at each backtick
# run, a fence if the run opens a fence line, else a code span if a run as long
# closes it, else a literal run. Otherwise up to three passes in CommonMark's order:
# fences, then indented code (no fence opens inside one: its lines are indented by
# 4 or more), then code spans in what is left. Each pattern starts with a fixed
# string ("`", "```", "~~~" or "\n") where it can, so that the engine jumps from one
# candidate to the next instead of trying every position; what a construct needs
# before it on its line is checked by fixed-width look-behinds. A pass runs over the
# text with "\n\n" in front, so the start of the text reads as a line start after a
# blank line.
#
# Reading replaces each code region, a block by "\n\n" (a blank line, which a code
# span cannot cross and after which an indented block may start, as after a fence in
# CommonMark), a code span by spaces. Neither creates nor hides a mention: a region
# starts with "`", "~" or "\n" or after a line's indentation or list marker, and ends
# with "`" or before a "\n", none of them slug characters or the "." and "_" that
# would hide an "@" after them. Renaming needs positions: it keeps the mentions of the
# old slugs that start outside the regions (the region bounds come from one re.split).
_LIST_MARKER = r"(?:[-+*]|[0-9]{1,9}[.)])[ \t]"
_HAS_LIST_ITEM = re.compile(r"\n[ ]{0,3}" + _LIST_MARKER)


def _fence(char: str, lists: bool) -> str:
    """A fenced code block of ``char``, from its opening run to the end of its closing line."""
    run = char * 3
    # Look-behinds have a fixed width, hence a bounded choice of what may come before.
    if lists:
        space = [rf"[ \t]{{{n}}}" for n in range(13)]
        markers = ["[-+*]", "[0-9][.)]", "[0-9]{2}[.)]", "[0-9]{3}[.)]"]
        opener = space + [space[n] + marker + r"[ \t]" for n in range(9) for marker in markers]
        closer = space
    else:
        opener = closer = [" " * n for n in range(4)]
    opens_line = "|".join(rf"(?<=\n{prefix}{run})" for prefix in opener)
    starts_line = "|".join(rf"(?<=\n{prefix})" for prefix in closer)
    group = "backticks" if char == "`" else "tildes"
    # A backtick fence's info string holds no backtick, or the line is no fence.
    info = r"[^`\n]*(?=\n|\Z)" if char == "`" else r"[^\n]*"
    closing = rf"(?:{starts_line}){run}(?P={group}){char}*+[ \t]*\r?(?=\n|\Z)"
    # The content is skipped up to each next fence character, in C: a closing line
    # starts with one.
    return (
        rf"{run}(?:{opens_line})(?P<{group}>{char}*+){info}"
        rf"(?:[^{char}]++|(?!{closing}){char})*+(?:{closing})?"
    )


@functools.cache
def _fences(lists: bool, backticks: bool, tildes: bool) -> re.Pattern[str]:
    # With both kinds the pattern has no fixed first character, and scans slower.
    branches = [_fence(char, lists) for char, used in (("`", backticks), ("~", tildes)) if used]
    return re.compile("(" + "|".join(branches) + ")")


_INDENTED_LINE_START = re.compile(r"\n(?: {4}| {0,3}\t)")
_INDENTS = ("    ", "\t", " \t", "  \t", "   \t")
_INDENTED_LINE = r"(?:[ ]{4}|[ ]{0,3}\t)[ \t]*[^ \t\r\n][^\n]*"
# From the "\n" that ends the line before the blank lines, through the last code line.
_INDENTED = re.compile(
    rf"(\n(?:[ \t]*\r?\n)+{_INDENTED_LINE}(?:\n(?:[ \t]*\r?\n)*{_INDENTED_LINE})*+)"
)


def _span(lists: bool, escapes: bool) -> str:
    """A backtick run, and the code span it opens if a run as long closes it."""
    # After a "\n" inside a code span: a line that ends its paragraph.
    breaks = [r"#{1,6}(?:[ \t]|\r?\n|\Z)", ">"] + ([_LIST_MARKER] if lists else [])
    breaks.append((r"[ \t]{0,9}" if lists else "") + r"`{3,}[^`\n]*(?:\n|\Z)")  # a fence
    breaks.append(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|-+|=+)[ \t]*\r?(?:\n|\Z)")
    paragraph_end = r"(?:[ \t]*\r?(?:\n|\Z)|[ ]{0,3}(?:" + "|".join(breaks) + "))"
    # A backtick after an odd number of backslashes (up to 5) is escaped: literal.
    escaped = r"(?<=[^\\]\\`)|(?<=[^\\]\\\\\\`)|(?<=[^\\]\\\\\\\\\\`)|" if escapes else ""
    content = rf"(?:[^`\n]++|\n(?!{paragraph_end})|(?!`(?P=run)(?!`))`++)*+"
    return rf"`(?:{escaped}(?P<run>`*+)(?:{content}`(?P=run)(?!`))?)"


@functools.cache
def _spans(lists: bool, escapes: bool, fences: bool) -> re.Pattern[str]:
    """Code spans; with ``fences``, backtick fences too, in the same single pass."""
    branches = [_span(lists, escapes)[1:]]
    if fences:
        branches.insert(0, _fence("`", lists)[1:])
    # Every branch starts with a backtick, so the regex engine jumps between them in C.
    return re.compile("(`(?:" + "|".join(branches) + "))")


class _IndentedAfterLists:
    """Indented code blocks in a text with lists: a candidate block is code only when the
    paragraph before it starts at the margin and is no list item, so any list before
    it is closed (an item's indented continuation stays prose). It offers the two
    methods of a compiled pattern the passes use."""

    groups = 1

    @staticmethod
    def _is_code(text: str, start: int) -> bool:
        line_end = start
        first = ""
        while True:
            line_start = text.rfind("\n", 0, line_end) + 1
            line = text[line_start:line_end]
            if not line.strip():
                break
            first = line
            if line_start == 0:
                break
            line_end = line_start - 1
        if not first:  # the start of the text
            return True
        return first[0] not in " \t" and not _LIST_ITEM_START.match(first)

    def _code(self, text: str) -> list[re.Match[str]]:
        return [m for m in _INDENTED.finditer(text) if self._is_code(text, m.start())]

    def sub(self, filler: str, text: str) -> str:
        pieces, cursor = [], 0
        for match in self._code(text):
            pieces += [text[cursor : match.start()], filler]
            cursor = match.end()
        return "".join(pieces) + text[cursor:]

    def split(self, text: str) -> list[str]:
        parts, cursor = [], 0
        for match in self._code(text):
            parts += [text[cursor : match.start()], match.group(0)]
            cursor = match.end()
        return [*parts, text[cursor:]]


_LIST_ITEM_START = re.compile(_LIST_MARKER)
_INDENTED_AFTER_LISTS = _IndentedAfterLists()
_BLANK_THEN_INDENTED = re.compile(r"\n[ \t]*\r?\n(?: {4}| {0,3}\t)")


def _may_have_indented_code_after_lists(text: str) -> bool:
    """A cheap necessary condition for an indented code block in a text with lists: a
    line at the margin, not a list item, then a blank line, then an indented line.
    (Most texts with lists have indented lines only in items and fences.)"""
    for match in _BLANK_THEN_INDENTED.finditer(text):
        end = match.start()
        start = text.rfind("\n", 0, end) + 1
        if start < end and text[start] not in " \t\r" and not _LIST_ITEM_START.match(text, start):
            return True
    return False


def _code_passes(text: str) -> list[tuple[re.Pattern[str], str]]:
    """The passes that find code in ``text``, each with what replaces a region in it."""
    backticks = "`" in text
    backtick_fences = backticks and "```" in text
    tilde_fences = "~" in text and "~~~" in text
    if backticks or tilde_fences:
        lists = _HAS_LIST_ITEM.search("\n" + text) is not None
        indented = _has_indented_line(text)
    elif not _has_indented_line(text):
        return []
    else:
        lists = _HAS_LIST_ITEM.search("\n" + text) is not None
        indented = True
    if lists and indented:
        indented = _may_have_indented_code_after_lists(text)
        if not indented and not backticks and not tilde_fences:
            return []
    escapes = "\\" in text
    if not tilde_fences and not indented:
        # Fences and spans in one pass: a fence is matched first at its opening run.
        return [(_spans(lists, escapes, backtick_fences), "\n")]
    passes = []
    if backtick_fences or tilde_fences:
        passes.append((_fences(lists, backtick_fences, tilde_fences), "\n"))
    if indented:
        passes.append((_INDENTED_AFTER_LISTS if lists else _INDENTED, "\n"))
    if backticks:
        passes.append((_spans(lists, escapes, False), " "))
    return passes


def _has_indented_line(text: str) -> bool:
    # A regex, not "\n    " in text: str's search is slow when spaces abound.
    return _INDENTED_LINE_START.search(text) is not None or text.startswith(_INDENTS)


def _outside_code(text: str) -> str:
    """``text`` with its code replaced: the same mentions outside code, none in it."""
    passes = _code_passes(text)
    if not passes:
        return text
    text = "\n\n" + text
    for pattern, filler in passes:
        if _needed(pattern, text):
            text = pattern.sub(filler * 2, text)
    return text


def _needed(pattern: re.Pattern[str], text: str) -> bool:
    # Indented lines inside the fences just removed (Python code, say) need no pass.
    indented = pattern is _INDENTED or pattern is _INDENTED_AFTER_LISTS
    return not indented or _INDENTED_LINE_START.search(text) is not None


def _masked_code(text: str) -> str:
    """``text`` with each code region overwritten, keeping every position."""
    passes = _code_passes(text)
    if not passes:
        return text
    text = "\n\n" + text
    for pattern, filler in passes:
        if not _needed(pattern, text):
            continue
        parts = pattern.split(text)
        if len(parts) > 1:
            stride = pattern.groups + 1  # re.split gives the prose, then each group's text
            pieces = [""] * (2 * (len(parts) - 1) // stride + 1)
            pieces[::2] = parts[::stride]
            pieces[1::2] = map(filler.__mul__, map(len, parts[1::stride]))
            text = "".join(pieces)
    return text[2:]


def _code_bounds(code: re.Pattern[str], text: str) -> list[int]:
    """Where the one pass ``code`` cuts "\n\n" + ``text``: from bounds[k] to
    bounds[k + 1] is code when k is odd, prose when k is even."""
    bounds = [0]
    for match in code.finditer("\n\n" + text):
        bounds += match.span()
    return bounds


def _sub_outside_code(
    pattern: re.Pattern[str],
    replacement: Callable[[re.Match[str]], str],
    text: str,
    passes: list[tuple[re.Pattern[str], str]],
) -> str:
    """``pattern.sub(replacement, text)``, but only for matches outside code."""
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    if len(passes) == 1:
        bounds = _code_bounds(passes[0][0], text)
        # A match is one mention: it starts in prose or in code, and never straddles.
        matches = [m for m in matches if bisect.bisect_right(bounds, m.start() + 2) % 2]
    else:  # tilde fences or indented code: several passes, so mask and match again
        matches = list(pattern.finditer(_masked_code(text)))
    pieces, cursor = [], 0
    for match in matches:
        start, end = match.span()
        pieces += [text[cursor:start], replacement(match)]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def is_slug(value: object) -> bool:
    """True when ``value`` is a str that is a well-formed slug."""
    # fullmatch, because SLUG_RE.match would accept "plan\n" ($ matches before
    # a trailing newline).
    return isinstance(value, str) and SLUG_RE.fullmatch(value) is not None


def parse_mentions(text: str) -> list[str]:
    """The slugs mentioned in ``text``, lowercased, in first-appearance order."""
    seen: dict[str, None] = {}
    if "@" not in text:
        return []
    # findall and dict.fromkeys run in C; the loop sees each distinct run once, in
    # first-appearance order, so each slug lands at its first appearance.
    for run in dict.fromkeys(_MENTION_RE.findall(_outside_code(text))):
        slug = run.rstrip("-").lower()
        if len(slug) <= MAX_SLUG:
            seen.setdefault(slug)
    return list(seen)


def make_slug(display_name: str, is_taken: Callable[[str], bool]) -> str:
    """Kebab-case ``display_name`` and return the first free slug.

    Candidates are the base, then ``base-2``, ``base-3``, ... with the base
    shortened so the result stays within 64 characters.
    """
    return next(c for c in slug_candidates(display_name) if not is_taken(c))


def slug_candidates(display_name: str, start: int = 1):
    """The slugs make_slug tries for ``display_name``, in order, from the ``start``-th (1:
    the base, 2: ``base-2``, ...); endless."""
    name = display_name if isinstance(display_name, str) else ""
    # Substitute before lowercasing so only ASCII survives to .lower(): "İ"
    # would otherwise lowercase into an ASCII "i" plus a combining dot.
    base = _NOT_SLUG_CHARS.sub("-", name).lower().strip("-")
    base = base[:MAX_SLUG].rstrip("-") or "skill"
    counter = start
    if counter <= 1:
        yield base
        counter = 2
    while True:
        suffix = f"-{counter}"
        yield base[: MAX_SLUG - len(suffix)].rstrip("-") + suffix
        counter += 1


@functools.lru_cache(maxsize=1024)
def _mention_of(slug: str, camel: bool = True) -> re.Pattern[str]:
    # After the slug only hyphens may follow before a non-slug character (or
    # the end); otherwise the run is a longer slug such as @plan-trip. ``camel``:
    # whether to refuse camelCase runs (needless in a text without any).
    return re.compile(
        (_BEFORE_MENTION if camel else _AT)
        + re.escape(slug)
        + r"(?=-*(?![A-Za-z0-9-]))"
        + _NOT_A_NAME_AFTER,
        re.ASCII | re.IGNORECASE,
    )


@functools.lru_cache(maxsize=1024)
def _mention_of_any(slugs: tuple[str, ...], camel: bool = True) -> re.Pattern[str]:
    # The mentioned slug is group 1; the tail settles which alternative matches.
    alternatives = "|".join(re.escape(slug) for slug in slugs)
    return re.compile(
        (_BEFORE_MENTION if camel else _AT)
        + f"({alternatives})"
        + r"(?=-*(?![A-Za-z0-9-]))"
        + _NOT_A_NAME_AFTER,
        re.ASCII | re.IGNORECASE,
    )


def apply_rename(old: str, new: str, text: str) -> str:
    """Rewrite every mention of ``@old`` in ``text`` to ``@new``, leaving code as it is.

    Raises ValueError unless both are slugs; ``new`` must also not end in a
    hyphen, since such a slug could never be mentioned again.
    """
    if not is_slug(old):
        raise ValueError(f"Cannot rename {old!r}: it is not a valid slug.")
    if not is_slug(new) or new.endswith("-"):
        raise ValueError(f"Cannot rename to {new!r}: it is not a valid slug.")
    if "@" not in text:
        return text
    passes = _code_passes(text)
    if not passes:
        # A slug holds no backslash, so it is safe as a literal replacement string.
        return _mention_of(old).sub("@" + new, text)
    return _sub_outside_code(_mention_of(old), lambda _match: "@" + new, text, passes)


def apply_renames(renames: Mapping[str, str], text: str) -> str:
    """``apply_rename`` for several renames at once.

    No new slug may be an old one: each mention is renamed once, never twice.
    """
    for old, new in renames.items():
        if not is_slug(old):
            raise ValueError(f"Cannot rename {old!r}: it is not a valid slug.")
        if not is_slug(new) or new.endswith("-") or new in renames:
            raise ValueError(f"Cannot rename to {new!r}: it is not a valid slug.")
    if "@" not in text or not renames:
        return text
    passes = _code_passes(text)
    # Several passes over the text: look for camelCase runs once, not in each of them.
    camel = len(renames) == 1 or _CAMEL_AT.search(text) is not None
    if not passes:
        # One C-speed pass per rename, without a Python call per match. Applying them in
        # turn equals applying them at once: a new slug is never an old one, and a
        # mention of a new slug is never a mention of an old one.
        for old, new in renames.items():
            text = _mention_of(old, camel).sub("@" + new, text)
        return text
    pattern = _mention_of_any(tuple(renames), camel)
    return _sub_outside_code(pattern, lambda match: "@" + renames[match[1].lower()], text, passes)


def mention_set(text: str) -> set[str]:
    """The slugs mentioned in ``text``, as a set: parse_mentions without the order."""
    if "@" not in text:
        return set()
    runs = set(_MENTION_RE.findall(_outside_code(text)))
    slugs = {run.rstrip("-").lower() for run in runs}
    return {slug for slug in slugs if len(slug) <= MAX_SLUG}


def closure(
    root: str,
    body_of: Callable[[str], str],
    is_skill: Callable[[str], bool],
) -> list[str]:
    """The root and every skill reachable through its mentions, pre-order DFS.

    Mentions that are not skills (tools, unknown slugs) are not followed.
    """
    # An explicit stack rather than recursion: a chain of thousands of skills
    # would otherwise hit the interpreter's recursion limit. Children are
    # pushed reversed and marked on pop, which yields the recursive pre-order.
    order: list[str] = []
    visited: set[str] = set()
    stack = [root]
    while stack:
        slug = stack.pop()
        if slug in visited:
            continue
        visited.add(slug)
        order.append(slug)
        children = [
            mention
            for mention in parse_mentions(body_of(slug))
            if mention not in visited and is_skill(mention)
        ]
        stack.extend(reversed(children))
    return order
