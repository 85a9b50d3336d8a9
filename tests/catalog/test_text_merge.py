"""Three-way merges of skill text: an owner's note put beside a paragraph the catalog
changed merges, as `git merge-file` merges it, and a real conflict stays one."""

import merge3

from catalog import text_merge
from pixie.installer.plan_core import three_way


def close_guide(sections: int, changed: int | None = None) -> str:
    """A month-end close guide of `sections` short steps; step `changed` reworded."""
    parts = ["# Month-end close", ""]
    for k in range(1, sections + 1):
        text = f"Reconcile ledger {k} against the bank statement before you post anything."
        if k == changed:
            text = f"Reconcile ledger {k} against the bank feed, then post the journal."
        parts += [f"## Step {k}", "", text, ""]
    return "\n".join(parts)


def with_note_before(text: str, heading: str) -> str:
    """The owner's note, a paragraph and its blank line, inserted before `heading`."""
    note = "> Acme: ask Dana before posting to this ledger."
    return text.replace(f"{heading}\n", f"{note}\n\n{heading}\n", 1)


def lines(text):
    return text.splitlines(True)


def conflicted(merger) -> bool:
    return any(region[0] == "conflict" for region in merger.merge_regions())


def test_a_note_after_the_blank_line_beside_a_changed_paragraph_merges():
    base, new = close_guide(30), close_guide(30, changed=10)
    yours = with_note_before(base, "## Step 11")
    # difflib alone reads the note as inserted before the blank line, against step 10's
    # changed paragraph: the conflict git does not see.
    assert conflicted(merge3.Merge3(lines(base), lines(yours), lines(new)))

    merged, _ = three_way(base, yours, new)

    assert merged is not None
    assert "bank feed, then post the journal.\n\n> Acme: ask Dana" in merged
    assert merged.count("> Acme: ask Dana") == 1
    assert merged == with_note_before(new, "## Step 11")


def test_a_body_past_two_hundred_lines_merges_the_same_way():
    # Past 200 lines difflib's autojunk would treat the blank lines as junk.
    base, new = close_guide(70), close_guide(70, changed=30)
    yours = with_note_before(base, "## Step 31")
    assert len(lines(base)) > 200

    merged, _ = three_way(base, yours, new)

    assert merged == with_note_before(new, "## Step 31")


def test_the_same_line_changed_both_ways_stays_a_conflict_with_markers():
    base = close_guide(30)
    yours = base.replace("ledger 10 against the bank statement", "ledger 10 by hand")
    new = close_guide(30, changed=10)

    merged, marked = three_way(base, yours, new)

    assert merged is None
    assert "<<<<<<< yours\n" in marked and ">>>>>>> new\n" in marked
    assert "Reconcile ledger 10 by hand" in marked and "bank feed, then post" in marked


def test_a_merge_without_conflict_is_merge3_s_own_result():
    base, new = close_guide(12), close_guide(12, changed=2)
    yours = base.replace("ledger 9 against", "ledger 9 (the euro one) against")
    plain = merge3.Merge3(lines(base), lines(yours), lines(new))
    chosen = text_merge.merger(lines(base), lines(yours), lines(new))

    assert not conflicted(plain)
    assert list(chosen.merge_lines()) == list(plain.merge_lines())
    assert "ledger 9 (the euro one)" in "".join(chosen.merge_lines())


def test_a_deletion_beside_a_change_slides_the_way_an_insertion_does():
    new = close_guide(30, changed=10)
    base = with_note_before(close_guide(30), "## Step 11")
    new = with_note_before(new, "## Step 11")
    yours = close_guide(30)  # the owner deleted the note the catalog keeps
    assert conflicted(merge3.Merge3(lines(base), lines(yours), lines(new)))

    merged, _ = three_way(base, yours, new)

    assert merged == close_guide(30, changed=10)
