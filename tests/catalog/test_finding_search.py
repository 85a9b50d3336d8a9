"""The findings scan looks for a rule only where one of its literal starts occurs: the
same matches as the regex engine's scan of every position, found faster. Pure."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.finding_rules import BUILT_IN
from catalog.findings import (
    URL_FAST,
    URL_STARTS,
    _finditer,
    literal_starts,
    rules_from_toml,
)

RULES = rules_from_toml(BUILT_IN.read_text(encoding="utf-8"), str(BUILT_IN))
PATTERNS = [(rule.fast, rule.starts) for rule in RULES] + [(URL_FAST, URL_STARTS)]
for source in (r"aa", r"abab|ba(?:b|)", r"(?:ab)+c?", r"(?<=x)ab\s+cd", r"\bab(?=c)"):
    PATTERNS.append((re.compile(source), literal_starts(source)))
# Pieces that start, finish or spoil a match of the rules above.
PIECES = [
    " ",
    "\n",
    "x",
    "ab",
    "c",
    "d",
    "ignore",
    "all",
    "previous",
    "instructions",
    "do",
    "don't",
    "not",
    "tell",
    "the",
    "user",
    "print",
    "your",
    "system prompt",
    "you",
    "have",
    "no",
    "rules",
    "developer",
    "dan",
    "mode",
    "from",
    "now",
    "on",
    "are",
    "https://",
    "ftp://",
    "example.com",
    ":8080",
    "_",
]


@pytest.mark.parametrize(
    "pattern, starts",
    [
        (r"\bfoo", ("foo",)),
        (r"(?:ignore|disregard)\s+all", ("disregard", "ignore")),
        (r"(?:do\s+not|don't|never)", ("do", "never")),
        (r"(?:ab)+cd", ("ab",)),
        (r"(?=ab)abc", ("abc",)),
        (r"a|bc", None),  # a one-letter start: the regex engine is as quick
        (r"x*yz", None),
        (r"\s+foo", None),
        (r"(?i)abc", None),
        (r"(?i:ab)c", None),
        (r"[ab]cd", None),
    ],
)
def test_literal_starts(pattern, starts):
    assert literal_starts(pattern) == starts


def test_every_built_in_rule_and_the_url_search_have_literal_starts():
    assert URL_STARTS == ("ftp", "http", "ws")
    assert all(rule.starts for rule in RULES)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_the_matches_are_the_regex_engines(pieces):
    text = "".join(pieces)
    for pattern, starts in PATTERNS:
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in _finditer(pattern, text, starts)] == expected, pattern


def test_a_start_found_everywhere_leaves_the_search_to_the_regex_engine():
    pattern = re.compile(r"dan\s+mode")
    text = "guidance " * 2000 + "dan mode"
    assert [m.span() for m in _finditer(pattern, text, ("dan",))] == [
        m.span() for m in pattern.finditer(text)
    ]
