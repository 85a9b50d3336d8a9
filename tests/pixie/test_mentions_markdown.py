"""Mentions follow Markdown: an @slug in code (a code span, a fenced or an indented
code block) is text, not a mention. markdown-it-py, a CommonMark-compliant parser,
is the reference for what is code."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pixie.core.namespace.engine import (
    apply_rename,
    apply_renames,
    closure,
    mention_set,
    parse_mentions,
)
from tests.pixie.test_namespace import reference_mention_spans

COMMONMARK = MarkdownIt("commonmark")
MARKER = 0xE000  # private-use characters: structurally inert, like "@" outside HTML


def code_positions(text: str) -> set[int]:
    """The positions of the "@"s that markdown-it reads as inside code.

    Each "@" is swapped for its own private-use character (same length, and neither
    "@" nor the marker takes part in code spans, fences or indented blocks without
    "<"), the text is parsed, and the markers found in code tokens say which.
    """
    ats = [at for at, char in enumerate(text) if char == "@"]
    marked = list(text)
    for number, at in enumerate(ats):
        marked[at] = chr(MARKER + number)
    inside = set()

    def collect(code: str) -> None:
        for char in code:
            number = ord(char) - MARKER
            if 0 <= number < len(ats):
                inside.add(ats[number])

    for token in COMMONMARK.parse("".join(marked)):
        if token.type in ("fence", "code_block"):
            collect(token.info + token.content)
        for child in token.children or ():
            if child.type == "code_inline":
                collect(child.content)
    return inside


def commonmark_mentions(text: str) -> list[tuple[int, int, str]]:
    in_code = code_positions(text)
    return [span for span in reference_mention_spans(text) if span[0] not in in_code]


def commonmark_renames(renames: dict[str, str], text: str) -> str:
    pieces, cursor = [], 0
    for start, end, slug in commonmark_mentions(text):
        if slug in renames:
            pieces += [text[cursor:start], "@" + renames[slug]]
            cursor = end
    return "".join(pieces) + text[cursor:]


# Markdown from the constructs the module supports exactly (see its docstring): no
# lists, block quotes, HTML, links or carriage returns. A paragraph line starts with
# a word, so it never opens another block.
WORDS = ["Use", "then", "plan", "x", "ann@example.com", "@mcp.tool()", "@parcel/config-default"]
INLINE = st.sampled_from(
    WORDS
    + ["@plan", "@Plan-", "@plan-trip", "@a", "@@", "x@a", ".@a", " ", " ", "-", ".", "#"]
    + ["`", "`", "``", "```", "\\`", "\\\\", "\\", "~", "~~~", "\t", "@"]
)


@st.composite
def paragraph(draw):
    lines = []
    for number in range(draw(st.integers(1, 3))):
        indent = " " * draw(st.integers(0, 6)) if number else ""
        words = draw(st.lists(INLINE, max_size=10))
        lines.append(indent + draw(st.sampled_from(WORDS)) + "".join(words))
    return "\n".join(lines)


@st.composite
def fence(draw):
    char = draw(st.sampled_from("`~"))
    length = draw(st.integers(3, 5))
    indent = " " * draw(st.integers(0, 3))
    info = draw(st.sampled_from(["", "python", " py @plan", "a`b", " ~~", "@a"]))
    lines = [indent + char * length + info]
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            # Not starting with white space: after a closing line (a content line can
            # close the fence early), an indented line would be unsupported code.
            start = draw(st.sampled_from([*WORDS, "`", "``", "@a", "\\`"]))
            lines.append(start + "".join(draw(st.lists(INLINE, max_size=8))))
        else:
            fence_char = draw(st.sampled_from([char, char, "`~".replace(char, "")]))
            line_indent = draw(st.integers(0, 4))
            run = draw(st.integers(2, 6))
            after = draw(st.sampled_from(["", " ", "\t", "x", " @a"]))
            lines.append(" " * line_indent + fence_char * run + after)
            if fence_char == char and line_indent <= 3 and run >= length and not after.strip():
                return "\n".join(lines), True  # it closes the fence
    closed = draw(st.booleans())
    if closed:
        closing = char * draw(st.integers(length, length + 2))
        indent = " " * draw(st.integers(0, 3))
        lines.append(indent + closing + draw(st.sampled_from(["", "  "])))
    return "\n".join(lines), closed


@st.composite
def indented_block(draw):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        indent = draw(st.sampled_from(["    ", "     ", "\t", "  \t", " \t "]))
        lines.append(indent + draw(st.sampled_from(WORDS)) + "".join(draw(st.lists(INLINE))))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "  ", "\t"])))
    return "\n".join(lines)


heading = st.builds(
    lambda level, words: "#" * level + " " + "".join(words),
    st.integers(1, 6),
    st.lists(st.sampled_from([w for w in WORDS if "`" not in w] + [" ", "@plan"]), max_size=5),
)


@st.composite
def markdown(draw):
    blocks = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["paragraph", "fence", "indented", "heading"]),
                st.sampled_from(["\n", "\n\n", "\n\n\n", "\n  \n"]),
            ),
            max_size=6,
        )
    )
    text, previous = "", None
    for kind, separator in blocks:
        # An indented block right after a heading is code in CommonMark even without a
        # blank line: not supported, so add one. (After a paragraph it continues the
        # paragraph; after a fence it is code, both as here.)
        if kind == "indented" and previous == "heading" and separator == "\n":
            separator = "\n\n"
        if kind == "fence":
            block, closed = draw(fence())
        else:
            closed = True
            block = draw(
                {"paragraph": paragraph(), "indented": indented_block()}.get(kind, heading)
            )
        text += (separator if previous else "") + block
        previous = kind
        if not closed:
            break  # a fence that nothing closes runs to the end; blocks after it are moot
    return text


# About 2 s each. A one-off run of 20,000 texts (parse_mentions and apply_renames)
# found no disagreement.
@settings(max_examples=500, deadline=None)
@given(markdown())
def test_mentions_are_those_commonmark_leaves_outside_code(text):
    expected = list(dict.fromkeys(slug for _, _, slug in commonmark_mentions(text)))
    assert parse_mentions(text) == expected
    assert mention_set(text) == set(expected)


RENAMED = st.sampled_from(["plan", "a", "plan-trip", "mcp", "parcel", "x"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(RENAMED, st.sampled_from(["go", "b-2", "plan-2"]), max_size=3), markdown())
def test_renames_rewrite_exactly_the_mentions_outside_code(renames, text):
    renames = {old: new for old, new in renames.items() if new not in renames}
    assert apply_renames(renames, text) == commonmark_renames(renames, text)
    for old, new in renames.items():
        assert apply_rename(old, new, text) == commonmark_renames({old: new}, text)


# Real examples that used to be read as mentions.


def test_scoped_package_in_inline_code_is_not_a_mention():
    assert parse_mentions("Extend `@parcel/config-default` and ask @bundler.") == ["bundler"]


def test_decorator_in_a_python_fence_is_not_a_mention():
    body = (
        "Register the tool with @mcp-setup:\n\n"
        "```python\n"
        "@mcp.tool()\n"
        "def search(query: str) -> str:\n"
        "    return index.find(query)\n"
        "```\n\n"
        "Then hand over to @search-info.\n"
    )
    assert parse_mentions(body) == ["mcp-setup", "search-info"]
    assert mention_set(body) == {"mcp-setup", "search-info"}


def test_email_in_a_code_sample_is_neither_mention_nor_renamed():
    body = "Send it:\n\n```sh\nmail -s hi @ops <ops@example.com\n```\nor ask @ops."
    assert parse_mentions(body) == ["ops"]
    assert apply_rename("ops", "oncall", body) == body.replace("ask @ops", "ask @oncall")


def test_tilde_fence_and_indented_block_are_code():
    body = "~~~\n@a\n~~~\n\n    @b\n\tand @c\n\nbut @d"
    assert parse_mentions(body) == ["d"]


def test_an_unclosed_fence_runs_to_the_end():
    assert parse_mentions("@a\n```\n@b\n\n@c") == ["a"]
    assert parse_mentions("@a\n````\n@b\n```\n@c") == ["a"]  # a shorter fence does not close


def test_a_fence_closes_only_with_its_own_character():
    assert parse_mentions("~~~\n@a\n```\n@b\n~~~~\n@c") == ["c"]


def test_a_fence_interrupts_a_code_span_that_has_not_closed_yet():
    # Line 1 is no fence (a backtick in its info string); line 2 opens one.
    assert parse_mentions("````a`b\n```` @a") == []
    assert parse_mentions("`a\n```\n@b` @c") == []


def test_a_fence_indented_four_spaces_is_not_a_fence():
    assert parse_mentions("text\n    ```\n@a\n") == ["a"]


def test_double_backtick_span_holds_a_single_backtick():
    assert parse_mentions("Run ``echo `@a` @b`` then @c") == ["c"]


def test_unmatched_and_escaped_backticks_are_literal():
    assert parse_mentions("a ` @b and `` @c") == ["b", "c"]
    assert parse_mentions("a ` @b and `` @c ` d") == []  # the single runs pair up
    assert parse_mentions("\\`@a` @b") == ["a", "b"]
    assert parse_mentions("\\\\`@a` @b") == ["b"]


def test_a_code_span_does_not_cross_a_blank_line_or_a_heading():
    assert parse_mentions("`@a\n\n@b`") == ["a", "b"]
    assert parse_mentions("`@a\n# @b`") == ["a", "b"]
    assert parse_mentions("`@a\n@b`") == []


def test_mentions_right_next_to_code_are_found():
    assert parse_mentions("@a`x`@b\n```\n@c\n```\n@d") == ["a", "b", "d"]
    # A fence interrupts a paragraph, so the "```" in the paragraph stays unmatched.
    assert parse_mentions("@a ```\n@b\n```\n@c") == ["a", "b"]
    assert parse_mentions("x`@a`") == []


def test_code_span_in_a_heading_is_code():
    assert parse_mentions("## Use `@a` with @b") == ["b"]


def test_rename_cascade_rewrites_prose_and_leaves_code_alone():
    body = "Ask @plan.\n\n```\n@plan\n```\nThen `@plan` and @Plan again.\n\n    @plan\n"
    assert apply_rename("plan", "trip", body) == (
        "Ask @trip.\n\n```\n@plan\n```\nThen `@plan` and @trip again.\n\n    @plan\n"
    )
    assert apply_renames({"plan": "trip"}, body) == apply_rename("plan", "trip", body)


def test_rename_with_nul_in_the_text_still_skips_code():
    assert apply_rename("a", "b", "\0@a `@a`\0@a") == "\0@b `@a`\0@b"


def test_crlf_line_endings():
    body = "@a\r\n```\r\n@b\r\n```\r\n@c\r\n\r\n    @d\r\n"
    assert parse_mentions(body) == ["a", "c"]


def test_closure_does_not_follow_a_mention_only_in_code():
    bodies = {
        "root": "Use @helper.\n\n```python\n@secret.tool\n```\nSee `@other`.",
        "helper": "",
        "secret": "",
        "other": "",
    }
    assert closure("root", bodies.__getitem__, bodies.__contains__) == ["root", "helper"]


# Lists (the module docstring's rule): indented lines are the item's prose, and a
# fence nested in an item is code at any indentation.


def test_indented_lines_in_a_list_are_prose():
    body = "1. Ask @a\n\n    then @b\n\n        and @c\n"
    assert parse_mentions(body) == ["a", "b", "c"]


def test_fences_nested_in_list_items_are_code():
    body = (
        "1. Register:\n\n"
        "    ```python\n    @mcp.tool()\n    ```\n\n"
        "2. Then @next\n"
        "   - nested:\n"
        "         ```\n         @deep\n         ```\n"
        "- ```\n  @inline\n  ```\n"
        "- done, @last"
    )
    assert parse_mentions(body) == ["next", "last"]


def test_text_without_lists_keeps_indented_code():
    assert parse_mentions("Intro\n\n    @a\n") == []
    assert parse_mentions("- item\n\n    @a\n") == ["a"]


@pytest.mark.parametrize(
    "body",
    [
        "1. Register:\n\n    ```python\n    @mcp.tool()\n    ```\n\n2. Then @next\n",
        "- ```\n  @inline\n  ```\n- done, @last",
        "- a\n  - b\n\n        ```\n        @deep\n        ```\n  @c",
        "1. Ask @a\n\n    then @b\n",
    ],
)
def test_the_list_rule_agrees_with_commonmark_on_common_shapes(body):
    assert parse_mentions(body) == [slug for _, _, slug in commonmark_mentions(body)]
