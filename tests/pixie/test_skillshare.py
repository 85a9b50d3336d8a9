"""Skill shares: the wire format, hard validation on receipt, and the merge."""

import copy
import json
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pixie.core.namespace.engine import SLUG_RE, is_slug, parse_mentions
from pixie.core.skillshare import (
    MAX_WIRE_BYTES,
    SENTINEL,
    Item,
    Outcome,
    Share,
    decode,
    encode,
    merge,
    unresolved_mentions,
)
from tests.suite import examples


def item(slug, name=None, body="", short="Does a thing."):
    return Item(id=slug, name=name or slug.title(), short_description=short, detailed_body=body)


def wire(slug, **overrides):
    raw = {"id": slug, "name": slug.title(), "shortDescription": "", "detailedBody": ""}
    return {**raw, **overrides}


def share_body(skill, closure=(), **envelope_extra):
    return json.dumps({SENTINEL: {"skill": skill, "closure": list(closure), **envelope_extra}})


SEARCH_INFO = item("search-info", "Search Info", "First @check-notebook, then @fetch-file.")
FETCH_FILE = item("fetch-file", "Fetch File", "Ask @list-devices, then @find-file.")


# Encoding and decoding


def test_shared_skill_round_trips_with_its_closure():
    body = encode(SEARCH_INFO, [FETCH_FILE])
    assert decode(body) == Share(skill=SEARCH_INFO, closure=(FETCH_FILE,))
    assert decode(body).items == (SEARCH_INFO, FETCH_FILE)


def test_wire_items_carry_exactly_the_four_authored_fields():
    document = json.loads(encode(SEARCH_INFO, [FETCH_FILE]))
    assert list(document) == [SENTINEL]
    assert set(document[SENTINEL]) == {"skill", "closure"}
    assert document[SENTINEL]["skill"] == {
        "id": "search-info",
        "name": "Search Info",
        "shortDescription": "Does a thing.",
        "detailedBody": "First @check-notebook, then @fetch-file.",
    }


def test_escaped_surrogate_pair_decodes_to_one_character():
    body = share_body(wire("a", name="Smile \\ud83d\\ude00")).replace("\\\\", "\\")
    assert decode(body).skill.name == "Smile \U0001f600"


def test_key_order_on_the_wire_does_not_matter():
    skill = {"detailedBody": "", "shortDescription": "", "name": "A", "id": "a"}
    body = json.dumps({SENTINEL: {"closure": [wire("b")], "skill": skill}})
    assert decode(body) == Share(item("a", "A", short=""), (item("b", "B", short=""),))


def test_share_at_exactly_the_size_limit_is_accepted():
    body = encode(item("a"), [])
    padded = body + " " * (MAX_WIRE_BYTES - len(body.encode()))
    assert decode(padded) is not None


@pytest.mark.parametrize(
    "body", [None, 42, b'{"pixie_skill_share": {}}', ["x"], "", "hello", "pixie_skill_share"]
)
def test_ordinary_messages_and_non_strings_are_not_shares(body):
    assert decode(body) is None


def with_raw(fragment):
    """A share whose skill's name is the raw JSON ``fragment``."""
    return share_body(wire("a", name="PLACEHOLDER")).replace('"PLACEHOLDER"', fragment)


def closure_of(count):
    return [wire(f"s{n}") for n in range(count)]


REFUSED = {
    "duplicate top-level keys": share_body(wire("a"))[:-1] + f', "{SENTINEL}": ""}}',
    "duplicate keys in an item": with_raw('"A", "name": "B"'),
    "NaN": with_raw("NaN"),
    "Infinity": with_raw("Infinity"),
    "-Infinity": with_raw("-Infinity"),
    "a number": with_raw("1e400"),
    "lone surrogate": with_raw('"\\ud800"'),
    "lone surrogate in a key": share_body(wire("a"), **{"\ud800": ""}),
    "NUL": share_body(wire("a", detailedBody="run\u0000me")),
    "over 64 KiB": encode(item("a"), []) + " " * MAX_WIRE_BYTES,
    "over 64 KiB of UTF-8 in fewer characters": encode(item("a", body="é" * 7900), [])
    + " " * 50_000,
    "13 items": share_body(wire("a"), closure_of(12)),
    "duplicate ids": share_body(wire("a"), [wire("b"), wire("a")]),
    "extra key in an item": share_body(wire("a", enabled="true")),
    "missing key in an item": share_body({"id": "a", "name": "A", "shortDescription": ""}),
    "null value": with_raw("null"),
    "boolean value": with_raw("true"),
    "list value": with_raw('["A"]'),
    "empty name": share_body(wire("a", name="")),
    "81-character name": share_body(wire("a", name="n" * 81)),
    "401-character short description": share_body(wire("a", shortDescription="s" * 401)),
    "8001-character body": share_body(wire("a", detailedBody="b" * 8001)),
    "uppercase id": share_body(wire("Plan")),
    "id with trailing newline": share_body(wire("plan\n")),
    "id with a path": share_body(wire("../plan")),
    "65-character id": share_body(wire("a" * 65)),
    "top-level extra key": json.dumps({SENTINEL: {"skill": wire("a"), "closure": []}, "x": ""}),
    "envelope extra key": share_body(wire("a"), note=""),
    "closure not a list": json.dumps({SENTINEL: {"skill": wire("a"), "closure": {}}}),
    "skill not an object": share_body([wire("a")]),
    "share wrapped in a list": json.dumps([{SENTINEL: {"skill": wire("a"), "closure": []}}]),
    "truncated JSON": share_body(wire("a"))[:-1],
    "deep nesting": "[" * 100_000,
    "deep nesting under the sentinel": f'{{"{SENTINEL}": ' + "[" * 60_000,
    "deep objects under the sentinel": f'{{"{SENTINEL}": ' + '{"a": ' * 10_000,
}


@pytest.mark.parametrize("body", REFUSED.values(), ids=REFUSED.keys())
def test_malformed_share_degrades_to_an_ordinary_message(body):
    assert decode(body) is None


def test_limits_themselves_are_accepted():
    at_limits = wire("a" * 64, name="n" * 80, shortDescription="s" * 400, detailedBody="b" * 8000)
    assert decode(share_body(at_limits, closure_of(11))) is not None


clean_characters = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


@st.composite
def valid_shares(draw):
    ids = draw(
        st.lists(st.from_regex(SLUG_RE, fullmatch=True), min_size=1, max_size=12, unique=True)
    )
    items = [
        Item(
            id=slug,
            name=draw(st.text(clean_characters, min_size=1, max_size=80)),
            short_description=draw(st.text(clean_characters, max_size=400)),
            detailed_body=draw(st.text(clean_characters, max_size=8000)),
        )
        for slug in ids
    ]
    return Share(skill=items[0], closure=tuple(items[1:]))


@given(valid_shares())
def test_every_valid_share_round_trips(share):
    body = encode(share.skill, list(share.closure))
    fits = len(body.encode()) <= MAX_WIRE_BYTES
    assert decode(body) == (share if fits else None)


SAMPLE_BODIES = [
    encode(SEARCH_INFO, [FETCH_FILE]),
    encode(item("a", "Ünïcödé 😀", '\\ " \n @b'), [item("b", "B", "x" * 50)]),
    share_body(wire("a", name="PLACEHOLDER")),
]


@st.composite
def damaged_shares(draw):
    body = draw(st.sampled_from(SAMPLE_BODIES))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(body)))
        cut = draw(st.integers(0, 3))
        splice = draw(
            st.sampled_from(["", "{", "]", '"', "\\", ",", "1", "\\ud800", "é", "\x00", "NaN"])
        )
        body = body[:at] + splice + body[at + cut :]
    return body


any_string = st.one_of(
    st.text(),
    st.tuples(st.text(), st.text()).map(lambda pair: f'{pair[0]}{{"{SENTINEL}"{pair[1]}'),
    damaged_shares(),
)


# 10,000 examples each in CI's slow run (the spec's floor), 1,000 in the quick one;
# PIXIE_HEAVY=1 runs 150,000 in all.
HEAVY = os.environ.get("PIXIE_HEAVY") == "1"


STRINGS = 100_000 if HEAVY else examples(10_000)
JSON_VALUES = 50_000 if HEAVY else examples(10_000)


# A property test (its @given inside): all its examples under --slow, a soak there.
@pytest.mark.hypothesis
def test_decode_never_raises_on_any_string(record_property):
    @settings(max_examples=STRINGS, deadline=None, derandomize=not HEAVY)
    @given(any_string)
    def check(body):
        share = decode(body)
        assert share is None or isinstance(share, Share)

    check()
    record_property("figure", f"{STRINGS:,} strings, 0 exceptions")


ITEM_KEYS = list(wire("a"))


def json_containers(children):
    return st.lists(children, max_size=3) | st.dictionaries(
        st.text(max_size=6) | st.sampled_from(ITEM_KEYS), children, max_size=4
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    json_containers,
    max_leaves=6,
)


def as_item(value):
    """A valid wire item overlaid with ``value``'s keys, if it is an object."""
    return {**wire("a"), **value} if isinstance(value, dict) else value


# One value drawn per example, placed at every depth of a share: cheaper for
# Hypothesis than drawing a separate value for each position.
PLACEMENTS = [
    lambda value: value,
    lambda value: {SENTINEL: value},
    lambda value: {SENTINEL: {"skill": value, "closure": []}},
    lambda value: {SENTINEL: {"skill": as_item(value), "closure": []}},
    lambda value: {SENTINEL: {"skill": wire("a"), "closure": value}},
    lambda value: {SENTINEL: {"skill": wire("a"), "closure": [as_item(value)]}},
]
share_shaped = st.tuples(st.sampled_from(PLACEMENTS), json_values).map(
    lambda placed: placed[0](placed[1])
)


# A property test (its @given inside): all its examples under --slow, a soak there.
@pytest.mark.hypothesis
def test_decode_never_raises_on_any_json_value(record_property):
    @settings(max_examples=JSON_VALUES, deadline=None, derandomize=not HEAVY)
    @given(share_shaped, st.booleans())
    def check(value, ensure_ascii):
        share = decode(json.dumps(value, ensure_ascii=ensure_ascii))
        assert share is None or all(is_slug(member.id) for member in share.items)

    check()
    record_property("figure", f"{JSON_VALUES:,} JSON values, 0 exceptions")


# Review


def test_review_flags_only_mentions_nothing_here_resolves():
    share = Share(
        skill=item("daily-brief", body="@weather-v2, @meeting-prep, @calendar, @my-notes"),
        closure=(item("meeting-prep", body="@weather-v2 then @old-tool and @Daily-Brief"),),
    )
    flagged = unresolved_mentions(share, {"my-notes"}, {"calendar"})
    assert flagged == ["weather-v2", "old-tool"]


# Merge


def local_copy(*items):
    return {member.id: (member.name, member.detailed_body) for member in items}


def test_reslug_cascade_leaves_mentions_in_code_alone():
    body = "Use @meeting-prep.\n\n```python\n@meeting-prep.tool\n```\nNot `@meeting-prep`."
    daily_brief = item("daily-brief", "Daily Brief", body)
    meeting_prep = item("meeting-prep", "Meeting Prep", "X")
    local = {"meeting-prep": ("Meeting Prep", "a different procedure")}

    outcome = merge(Share(daily_brief, (meeting_prep,)), local, set())

    assert outcome.imported[0].detailed_body == body.replace(
        "Use @meeting-prep", "Use @meeting-prep-2"
    )


def test_a_mention_only_in_code_is_not_flagged_nor_avoided():
    share = Share(item("plan", "Plan", "Run `@tool-x`, then:\n~~~\n@plan-2\n~~~\n"))
    assert unresolved_mentions(share, set(), set()) == []
    # @plan-2 is only in code, so it is free for the re-slug.
    assert merge(share, local_copy(item("plan", "Other", "y")), set()).renames == [
        ("plan", "plan-2")
    ]


def test_colliding_skill_is_reslugged_and_its_mentions_follow():
    daily_brief = item("daily-brief", "Daily Brief", "…use @meeting-prep for the agenda…")
    meeting_prep = item("meeting-prep", "Meeting Prep", "X")
    local = {"meeting-prep": ("Meeting Prep", "a different procedure")}

    outcome = merge(Share(daily_brief, (meeting_prep,)), local, set())

    assert outcome.renames == [("meeting-prep", "meeting-prep-2")]
    assert outcome.imported == [
        item("daily-brief", "Daily Brief", "…use @meeting-prep-2 for the agenda…"),
        item("meeting-prep-2", "Meeting Prep", "X"),
    ]
    assert outcome.skipped_identical == []
    assert local == {"meeting-prep": ("Meeting Prep", "a different procedure")}


def test_free_slugs_import_as_they_are():
    outcome = merge(Share(SEARCH_INFO, (FETCH_FILE,)), {"other": ("Other", "")}, {"find-file"})
    assert outcome == Outcome(imported=[SEARCH_INFO, FETCH_FILE])
    assert not outcome.nothing_new


def test_importing_the_same_share_twice_is_nothing_new():
    share = Share(SEARCH_INFO, (FETCH_FILE,))
    first = merge(share, {}, set())
    second = merge(share, local_copy(*first.imported), set())
    assert second.nothing_new
    assert second.skipped_identical == ["search-info", "fetch-file"]
    assert second.renames == []


def test_identical_builtin_in_the_closure_evaporates():
    outcome = merge(Share(SEARCH_INFO, (FETCH_FILE,)), local_copy(FETCH_FILE), set())
    assert outcome.imported == [SEARCH_INFO]
    assert outcome.skipped_identical == ["fetch-file"]


def test_skill_named_like_a_tool_is_reslugged():
    fetch = item("http-request", "HTTP Request", "Fetch a page.")
    caller = item("caller", body="Use @http-request.")
    outcome = merge(Share(caller, (fetch,)), {}, {"http-request"})
    assert outcome.renames == [("http-request", "http-request-2")]
    assert [member.id for member in outcome.imported] == ["caller", "http-request-2"]
    assert outcome.imported[0].detailed_body == "Use @http-request-2."


def test_reslug_skips_a_name_taken_by_another_incoming_skill():
    planner = item("plan", "Trip Planner", "Hand over to @trip-planner.")
    helper = item("trip-planner", "Helper", "Called by @plan.")
    outcome = merge(Share(planner, (helper,)), {"plan": ("Plan", "mine")}, set())
    assert outcome.renames == [("plan", "trip-planner-2")]
    assert outcome.imported == [
        item("trip-planner-2", "Trip Planner", "Hand over to @trip-planner."),
        item("trip-planner", "Helper", "Called by @trip-planner-2."),
    ]


def test_rename_chain_never_renames_a_mention_twice():
    first = item("x", "Y", "Then @y.")
    second = item("y", "Y", "Back to @x.")
    local = {"x": ("X", "mine"), "y": ("Y", "mine")}
    outcome = merge(Share(first, (second,)), local, set())
    assert outcome.renames == [("x", "y-2"), ("y", "y-3")]
    assert outcome.imported == [item("y-2", "Y", "Then @y-3."), item("y-3", "Y", "Back to @y-2.")]


def test_identical_skill_that_relies_on_a_reslugged_mate_is_imported_too():
    # Keeping the local copy would point its @meeting-prep at the recipient's
    # own, unrelated Meeting Prep: a silent hijack.
    brief = item("daily-brief", "Daily Brief", "Use @meeting-prep.")
    prep = item("meeting-prep", "Meeting Prep", "Theirs.")
    local = {**local_copy(brief), "meeting-prep": ("Meeting Prep", "Mine.")}
    outcome = merge(Share(brief, (prep,)), local, set())
    assert outcome.skipped_identical == []
    assert outcome.imported == [
        item("daily-brief-2", "Daily Brief", "Use @meeting-prep-2."),
        item("meeting-prep-2", "Meeting Prep", "Theirs."),
    ]


def test_reslug_does_not_capture_a_dangling_mention():
    share = Share(item("plan", "Plan", "Needs @plan-2 from a newer app."))
    outcome = merge(share, {"plan": ("Plan", "mine")}, set())
    assert outcome.renames == [("plan", "plan-3")]
    assert outcome.imported[0].detailed_body == "Needs @plan-2 from a newer app."


class UnscannableDict(dict):
    """A local store that fails the test if merge walks all of it."""

    def _scan(self, *args):
        raise AssertionError("merge scanned every local skill")

    __iter__ = keys = values = items = __len__ = _scan


# A time limit: in the group of timing tests, which xdist runs one after another.
@pytest.mark.xdist_group("timing")
def test_merge_against_ten_thousand_local_skills_only_looks_slugs_up():
    local = UnscannableDict({f"skill-{n}": (f"Skill {n}", "mine") for n in range(10_000)})
    local.update({f"meeting-prep-{n}": ("Meeting Prep", "mine") for n in range(2, 500)})
    local["meeting-prep"] = ("Meeting Prep", "mine")
    incoming = [item(f"skill-{n}", f"Skill {n}", f"@skill-{n + 1}") for n in range(11)]
    share = Share(item("meeting-prep", "Meeting Prep", "@skill-0"), tuple(incoming))

    started = time.perf_counter()
    outcome = merge(share, local, frozenset({"http-request"}))
    elapsed = time.perf_counter() - started

    assert outcome.renames[0] == ("meeting-prep", "meeting-prep-500")
    assert len(outcome.imported) == 12
    assert elapsed < 1.0


POOL = ["a", "b", "c", "a-2", "b-2", "plan", "plan-trip", "skill"]
pool_bodies = st.lists(
    st.sampled_from([f"@{slug}" for slug in POOL] + ["@A", " ", "-", ".", "x", "@plan-.", "@zz"])
    # Code: mentions in it are text, so the merge must neither follow nor rewrite them.
    | st.sampled_from(["`", "`@a`", "\n```\n@b ", "\n```\n", "\n~~~\n@plan\n", "\n\n    @c"]),
    max_size=8,
).map("".join)
pool_names = st.sampled_from(["A", "B", "Plan", "Plan Trip", "A 2", "!!"])


@st.composite
def merge_scenarios(draw):
    ids = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=6, unique=True))
    items = [Item(slug, draw(pool_names), "", draw(pool_bodies)) for slug in ids]
    local = draw(st.dictionaries(st.sampled_from(POOL), st.tuples(pool_names, pool_bodies)))
    for member in items:
        if draw(st.booleans()):
            local[member.id] = (member.name, member.detailed_body)
    tools = draw(st.sets(st.sampled_from(POOL)))
    return Share(items[0], tuple(items[1:])), local, tools


@given(merge_scenarios())
def test_merge_keeps_local_untouched_and_every_bundle_mention_resolving(scenario):
    share, local, tools = scenario
    local_before = copy.deepcopy(local)
    outcome = merge(share, local, tools)
    assert local == local_before

    renamed = dict(outcome.renames)
    skipped = set(outcome.skipped_identical)
    kept = [member for member in share.items if member.id not in skipped]
    incoming_ids = {member.id for member in share.items}
    assert len(kept) == len(outcome.imported)
    for member in share.items:
        if member.id in skipped:
            assert local[member.id] == (member.name, member.detailed_body)
            assert not set(parse_mentions(member.detailed_body)) & set(renamed)

    imported_ids = [member.id for member in outcome.imported]
    assert len(set(imported_ids)) == len(imported_ids)
    for original, landed in zip(kept, outcome.imported, strict=True):
        assert landed.id == renamed.get(original.id, original.id)
        assert is_slug(landed.id) and landed.id not in local and landed.id not in tools
        assert (landed.name, landed.short_description) == (
            original.name,
            original.short_description,
        )
        before = parse_mentions(original.detailed_body)
        after = parse_mentions(landed.detailed_body)
        for mention, now in zip(before, after, strict=True):
            if mention in incoming_ids:
                assert now in imported_ids or (now == mention and mention in skipped)
            assert now == renamed.get(mention, mention)
