"""The @-mention engine: slugs, mentions, slug allocation, renames, closure."""

import itertools
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixie.core.namespace.engine import (
    SLUG_RE,
    apply_rename,
    apply_renames,
    closure,
    is_slug,
    make_slug,
    mention_set,
    parse_mentions,
)

ALNUM = string.ascii_letters + string.digits
KELVIN = "\u212a"  # case-folds to "k" under Unicode IGNORECASE


def reference_mention_spans(text: str) -> list[tuple[int, int, str]]:
    """An independent, character-by-character reading of the mention rules.

    Returns (start of "@", end of slug, slug) for every mention.
    """
    spans = []
    for at, char in enumerate(text):
        if char != "@" or (at > 0 and text[at - 1] in ALNUM + "._/"):
            continue
        end = at + 1
        if end == len(text) or text[end] not in ALNUM:
            continue
        while end < len(text) and text[end] in ALNUM + "-":
            end += 1
        full_run = text[at + 1 : end]
        # A handle or identifier (camelCase), or a package, path, decorator or profile
        # link (what follows), is not a skill.
        if any(a.islower() and b.isupper() for a, b in itertools.pairwise(full_run)):
            continue
        after = text[end:]
        if after[:1] in ("/", "_") or after.startswith(("](http:", "](https:")):
            continue
        if after[:1] == "." and after[1:2] != "" and after[1] in ALNUM:
            continue
        run = full_run.rstrip("-")
        if len(run) <= 64:
            spans.append((at, at + 1 + len(run), run.lower()))
    return spans


def reference_rename(old: str, new: str, text: str) -> str:
    pieces, cursor = [], 0
    for start, end, slug in reference_mention_spans(text):
        if slug == old:
            pieces += [text[cursor:start], "@" + new]
            cursor = end
    return "".join(pieces) + text[cursor:]


def reference_renames(renames: dict[str, str], text: str) -> str:
    pieces, cursor = [], 0
    for start, end, slug in reference_mention_spans(text):
        if slug in renames:
            pieces += [text[cursor:start], "@" + renames[slug]]
            cursor = end
    return "".join(pieces) + text[cursor:]


slugs = st.from_regex(SLUG_RE, fullmatch=True)
mentionable_slugs = slugs.filter(lambda slug: not slug.endswith("-"))
fragments = st.sampled_from(
    ["@", "plan", "PLAN", "Plan", "-", "--", "trip", "ner", ".", "_", " ", "\n", "ann", "2"]
    + ["@plan", "@Plan-", "@plan-trip", "a" * 60, "é", KELVIN, "@@", "x@"]
)
mention_heavy_text = st.lists(fragments, max_size=30).map("".join)


def without_code(text: str) -> str:
    """``text`` with nothing Markdown could read as code: no backtick, tilde or tab, and
    no line indented by 4 spaces. Mentions in code are tested in test_mentions_markdown.py;
    here every mention follows the plain rules above."""
    text = text.replace("`", "'").replace("~", "-").replace("\t", " ")
    return re.sub(r"(?m)^ {4,}", "   ", text)


any_text = st.one_of(mention_heavy_text, st.text()).map(without_code)
code_fragments = st.sampled_from(["`", "``", "```\n", "~~~\n", "\n", "\n\n    ", "\t", "\\"])
markdownish_text = st.lists(fragments | code_fragments, max_size=30).map("".join)


# Slugs


def test_slug_with_trailing_newline_is_refused():
    assert SLUG_RE.match("plan\n")  # why a bare match would be a bug
    assert not is_slug("plan\n")


@pytest.mark.parametrize("good", ["plan", "a", "0", "plan-trip", "a" * 64, "x--y", "9-lives"])
def test_well_formed_slugs_are_accepted(good):
    assert is_slug(good)


@pytest.mark.parametrize(
    "bad", ["", "Plan", "-plan", "a" * 65, "plan trip", "plan_trip", "plän", "../etc", KELVIN]
)
def test_malformed_slugs_are_refused(bad):
    assert not is_slug(bad)


@pytest.mark.parametrize("not_a_string", [None, 42, b"plan", ["plan"]])
def test_non_strings_are_not_slugs(not_a_string):
    assert not is_slug(not_a_string)


# Mentions


def test_mentions_come_lowercased_in_first_appearance_order_without_duplicates():
    text = "Use @Search-Info, then @fetch-file; if stuck, @SEARCH-INFO again."
    assert parse_mentions(text) == ["search-info", "fetch-file"]


def test_email_address_is_not_a_mention():
    assert parse_mentions("write to ann@example.com or ann.b@plan") == []


def test_handle_after_dot_or_underscore_is_not_a_mention():
    assert parse_mentions("x.@plan y_@plan") == []


def test_mention_may_follow_punctuation_and_whitespace():
    assert parse_mentions("(@a) -@b,\n@c:\t@d") == ["a", "b", "c", "d"]


def test_trailing_hyphens_are_not_part_of_a_mention():
    assert parse_mentions("see @plan-. and @plan-trip--") == ["plan", "plan-trip"]


def test_mention_must_start_with_a_letter_or_digit():
    assert parse_mentions("@-plan @ plan @") == []


def test_a_65_character_run_is_not_a_mention():
    assert parse_mentions("@" + "a" * 65) == []
    assert parse_mentions("@" + "a" * 64) == ["a" * 64]
    assert parse_mentions("@" + "a" * 64 + "---!") == ["a" * 64]


def test_lookalike_letters_are_not_slug_characters():
    assert parse_mentions("@" + KELVIN) == []
    assert parse_mentions("@plan" + KELVIN) == ["plan"]


@given(markdownish_text | st.text())
def test_code_only_ever_hides_mentions(text):
    mentions = parse_mentions(text)
    assert set(mentions) <= {slug for _, _, slug in reference_mention_spans(text)}
    assert len(set(mentions)) == len(mentions) and all(is_slug(slug) for slug in mentions)
    assert mention_set(text) == set(mentions)


@given(any_text)
def test_mentions_match_the_reference_reading_and_are_all_slugs(text):
    expected = list(dict.fromkeys(slug for _, _, slug in reference_mention_spans(text)))
    mentions = parse_mentions(text)
    assert mentions == expected
    assert all(is_slug(slug) for slug in mentions)


# Slug allocation


def nothing_taken(_slug):
    return False


def test_display_name_is_kebab_cased():
    assert make_slug("  Meeting Prep: Weekly!! ", nothing_taken) == "meeting-prep-weekly"


def test_non_ascii_characters_become_separators():
    assert make_slug("Café Crème", nothing_taken) == "caf-cr-me"
    assert make_slug("İstanbul " + KELVIN + "2", nothing_taken) == "stanbul-2"


@pytest.mark.parametrize("empty", ["", "   ", "!!!", "日本語"])
def test_a_name_with_nothing_usable_becomes_skill(empty):
    assert make_slug(empty, nothing_taken) == "skill"


def test_taken_slug_gets_the_first_free_numeric_suffix():
    taken = {"meeting-prep", "meeting-prep-2", "meeting-prep-3"}
    assert make_slug("Meeting Prep", taken.__contains__) == "meeting-prep-4"


def test_empty_name_that_is_taken_becomes_skill_2():
    assert make_slug("", {"skill"}.__contains__) == "skill-2"


def test_slug_is_cut_to_64_characters():
    assert make_slug("a" * 100, nothing_taken) == "a" * 64
    assert make_slug("a" * 63 + " b", nothing_taken) == "a" * 63


def test_suffix_cuts_the_base_to_stay_within_64_characters():
    long_name = "a" * 70
    taken = {"a" * 64} | {"a" * 62 + f"-{n}" for n in range(2, 10)}
    assert make_slug(long_name, taken.__contains__) == "a" * 61 + "-10"


def test_suffix_never_leaves_a_double_hyphen():
    name = "a" * 61 + " bb"  # base "aaa…a-bb"; cutting for "-2" ends on the hyphen
    slug = make_slug(name, {"a" * 61 + "-bb"}.__contains__)
    assert slug == "a" * 61 + "-2"


@given(st.text(), st.sets(slugs, max_size=20))
def test_allocated_slug_is_always_free_and_well_formed(name, taken):
    taken |= {make_slug(name, nothing_taken)}
    slug = make_slug(name, taken.__contains__)
    assert is_slug(slug) and slug not in taken
    assert "--" not in slug and not slug.endswith("-")


# Rename cascade


def test_rename_rewrites_every_mention_whatever_its_case():
    assert apply_rename("plan", "trip", "@plan then @PLAN and @Plan.") == (
        "@trip then @trip and @trip."
    )


def test_rename_leaves_longer_slugs_alone():
    text = "@plan-trip @planner @plan2 ann@plan x.@plan @plan"
    assert apply_rename("plan", "go", text) == "@plan-trip @planner @plan2 ann@plan x.@plan @go"


def test_rename_treats_trailing_hyphens_as_punctuation():
    assert apply_rename("plan", "go", "@plan-. @plan--\n@plan-") == "@go-. @go--\n@go-"


def test_rename_does_not_fold_lookalike_letters():
    assert apply_rename("k", "x", "@" + KELVIN) == "@" + KELVIN


def test_rename_chain_does_not_rename_twice():
    text = apply_rename("x", "y-2", "@x @y")
    assert apply_rename("y", "y-3", text) == "@y-2 @y-3"


@pytest.mark.parametrize(
    ("old", "new"),
    [("Plan", "go"), ("plan", "Go"), ("plan\n", "go"), ("plan", "go\n"), ("plan", "go-")]
    + [("plan", ""), ("", "go"), ("plan", "a" * 65), ("pl an", "go")],
)
def test_rename_refuses_malformed_slugs(old, new):
    with pytest.raises(ValueError):
        apply_rename(old, new, "@plan")


@given(mentionable_slugs, mentionable_slugs, any_text)
def test_rename_matches_the_reference_reading(old, new, text):
    assert apply_rename(old, new, text) == reference_rename(old, new, text)


NO_Q_TEXT = any_text.map(lambda text: text.replace("q", "").replace("\x00", ""))


@given(st.sampled_from(["plan", "plan-trip", "a", "2", "a" * 64]), NO_Q_TEXT, st.booleans())
def test_rename_never_changes_text_outside_mentions_of_old(old, text, new_is_long):
    # "q" appears nowhere in the text, so every "@" + new in the result is one
    # the rename wrote; masking those must give the text with old's mentions masked.
    new = ("b" * 62 if new_is_long else "b") + "q"
    renamed = apply_rename(old, new, text)
    masked, cursor = [], 0
    for start, end, slug in reference_mention_spans(text):
        if slug == old:
            masked += [text[cursor:start], "\x00"]
            cursor = end
    assert renamed.replace("@" + new, "\x00") == "".join(masked) + text[cursor:]
    assert apply_rename(new, old, renamed).lower() == text.lower()


@given(mentionable_slugs, mentionable_slugs, any_text | markdownish_text)
def test_after_rename_old_is_no_longer_mentioned(old, new, text):
    if old != new:
        assert old not in parse_mentions(apply_rename(old, new, text))


NEAR_SLUGS = st.sampled_from(["plan", "plan-trip", "trip", "ner", "ann", "2", "a" * 60])


@given(st.dictionaries(NEAR_SLUGS, NEAR_SLUGS | mentionable_slugs, max_size=4), any_text)
def test_several_renames_at_once_match_the_reference_reading(renames, text):
    # The reference: each mention, read once, replaced by its rename if it has one.
    renames = {old: new for old, new in renames.items() if new not in renames}
    assert apply_renames(renames, text) == reference_renames(renames, text)


def test_several_renames_refuse_a_chain():
    with pytest.raises(ValueError):
        apply_renames({"a": "b", "b": "c"}, "@a @b")


@given(any_text)
def test_mention_set_is_parse_mentions_as_a_set(text):
    assert mention_set(text) == set(parse_mentions(text))


# Closure


def graph_functions(bodies, tools=()):
    def body_of(slug):
        assert slug in bodies, f"read the body of non-skill {slug}"
        return bodies[slug]

    return body_of, lambda slug: slug in bodies and slug not in tools


def test_closure_packs_skills_not_tools():
    bodies = {
        "search-info": "First @check-notebook, THEN use @fetch-file, then @grep-memory.",
        "fetch-file": "Ask @list-devices, then @find-file.",
    }
    assert closure("search-info", *graph_functions(bodies)) == ["search-info", "fetch-file"]


def test_closure_is_depth_first_in_first_appearance_order():
    bodies = {"a": "@b @c", "b": "@d", "c": "@d @e", "d": "", "e": "@a"}
    assert closure("a", *graph_functions(bodies)) == ["a", "b", "d", "c", "e"]


def test_closure_stops_at_cycles_and_self_mentions():
    bodies = {"a": "@a @b", "b": "@c", "c": "@a @b"}
    assert closure("a", *graph_functions(bodies)) == ["a", "b", "c"]


def test_closure_of_a_skill_without_mentions_is_itself():
    assert closure("solo", *graph_functions({"solo": "just do it"})) == ["solo"]


def test_closure_follows_a_chain_of_ten_thousand_skills_without_recursion_error():
    bodies = {f"s{n}": f"then @s{n + 1}" for n in range(10_000)}
    assert closure("s0", *graph_functions(bodies)) == [f"s{n}" for n in range(10_000)]


def recursive_closure(root, body_of, is_skill):
    order = []

    def visit(slug):
        order.append(slug)
        for mention in parse_mentions(body_of(slug)):
            if mention not in order and is_skill(mention):
                visit(mention)

    visit(root)
    return order


names = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@given(st.dictionaries(names, st.lists(names, max_size=5)), names, st.sets(names))
def test_closure_matches_recursive_depth_first_walk(edges, root, tools):
    bodies = {slug: " ".join("@" + target for target in targets) for slug, targets in edges.items()}
    bodies.setdefault(root, "")
    tools = tools - {root}
    functions = graph_functions(bodies, tools)
    assert closure(root, *functions) == recursive_closure(root, *functions)
