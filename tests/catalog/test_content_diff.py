"""File changes as every comparison shows them: a file that only moved is one move (not a
removal and an addition with its whole text), and one page's file diffs stay bounded."""

import hashlib

from catalog.content_diff import DiffBudget, FileInfo, file_texts_needed, files_diff, moves


def text_file(path: str, text: str, *, executable: bool = False) -> tuple[FileInfo, str]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return FileInfo(path, executable, digest, len(text.encode()), "text/markdown"), text


def schema(n: int) -> str:
    return "\n".join(f"<element name='field{k}' type='string'/>" for k in range(n)) + "\n"


def test_a_file_at_a_new_path_with_the_same_bytes_is_one_move_with_no_text_read():
    old_schema, text = text_file("schemas/ledger.xsd", schema(300))
    new_schema, _ = text_file("references/schemas/ledger.xsd", schema(300))

    assert file_texts_needed([old_schema], [new_schema]) == set()
    (entry,) = files_diff([old_schema], [new_schema], {})

    assert (entry["path"], entry["change"], entry["from_path"]) == (
        "references/schemas/ledger.xsd", "moved", "schemas/ledger.xsd",
    )  # fmt: skip
    assert (entry["content"], entry["diff"], entry["mode"]) == ("same", [], "")


def test_a_move_that_also_becomes_executable_says_so():
    old, _ = text_file("tools/check.sh", "#!/bin/sh\necho ok\n")
    new, _ = text_file("scripts/check.sh", "#!/bin/sh\necho ok\n", executable=True)

    (entry,) = files_diff([old], [new], {})

    assert (entry["change"], entry["mode"]) == ("moved", "becomes executable")


def test_two_copies_of_one_file_move_by_name_and_a_copy_kept_in_place_is_an_addition():
    a_old, _ = text_file("old/a.md", "same bytes\n")
    b_old, _ = text_file("old/b.md", "same bytes\n")
    b_new, _ = text_file("new/b.md", "same bytes\n")
    a_new, _ = text_file("new/a.md", "same bytes\n")
    kept, _ = text_file("keep/c.md", "kept\n")
    copy, _ = text_file("copy/c.md", "kept\n")

    found = moves([a_old, b_old, kept], [b_new, a_new, kept, copy])

    assert {new: old.path for new, old in found.items()} == {
        "new/a.md": "old/a.md", "new/b.md": "old/b.md",
    }  # fmt: skip
    entries = files_diff([a_old, b_old, kept], [b_new, a_new, kept, copy], {})
    changes = {e["path"]: e["change"] for e in entries}
    assert changes == {"new/a.md": "moved", "new/b.md": "moved", "copy/c.md": "added"}


def test_a_changed_file_at_a_new_path_is_still_a_removal_and_an_addition():
    old, old_text = text_file("notes/fees.md", "Fees are 2%.\n")
    new, new_text = text_file("references/fees.md", "Fees are 3%.\n")

    entries = files_diff([old], [new], {old.sha256: old_text, new.sha256: new_text})

    assert [(e["path"], e["change"]) for e in entries] == [
        ("notes/fees.md", "removed"), ("references/fees.md", "added"),
    ]  # fmt: skip


def test_file_diffs_past_the_page_budget_are_listed_without_their_text():
    added = [text_file(f"references/part-{n}.md", schema(400 + n)) for n in range(4)]
    small = text_file("references/z-small.md", "one line\n")
    texts = {info.sha256: text for info, text in [*added, small]}
    budget = DiffBudget(lines=1_000)

    entries = files_diff([], [info for info, _ in [*added, small]], texts, budget)

    shown = {e["path"]: e["content"] for e in entries}
    # Two 400-line diffs fit; the next ones would pass 1,000 lines; the small one still fits.
    assert shown == {
        "references/part-0.md": "text", "references/part-1.md": "text",
        "references/part-2.md": "not_shown", "references/part-3.md": "not_shown",
        "references/z-small.md": "text",
    }  # fmt: skip
    assert all(e["diff"] == [] for e in entries if e["content"] == "not_shown")
    assert sum(len(e["diff"]) for e in entries) <= 1_000
    # The budget is shared: a second call on the same page gets what is left.
    (again,) = files_diff([], [added[0][0]], texts, budget)
    assert again["content"] == "not_shown"
