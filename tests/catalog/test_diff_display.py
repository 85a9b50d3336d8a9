"""A fork's three texts aligned as the plan page shows them: each region between the lines
all three share is marked by who changed it, a conflict where both did differently, and
long unchanged runs fold."""

import re

from catalog.diff_display import aligned_three


def rows(html: str) -> list[tuple[str, list[str]]]:
    """(row class, the text of its base, yours and new cells) for each row."""
    found = []
    for kind, cells in re.findall(r'<tr(?: class="(\w*)")?>(.*?)</tr>', html.split("<tbody>")[1]):
        texts = re.findall(r'<td class="(?:base|changed|absent|)">(.*?)</td>', cells)
        found.append((kind, [re.sub(r"</?(ins|del)>", "", t) for t in texts]))
    return found


BASE = "\n".join(f"line {n}" for n in range(1, 21))


def test_each_side_s_change_sits_on_the_line_it_replaces():
    yours = BASE.replace("line 3", "line 3, and call first")
    new = BASE.replace("line 17", "line 17 with the portal link")
    shown = rows(aligned_three(BASE, yours, new))
    assert ("yours", ["line 3", "line 3, and call first", "line 3"]) in shown
    assert ("new", ["line 17", "line 17", "line 17 with the portal link"]) in shown
    assert not any(kind == "conflict" for kind, _ in shown)
    # lines 6..14 are unchanged everywhere: folded to one gap row between the changes
    assert ("gap", []) in shown
    assert all("line 10" not in cells for _, cells in shown)


def test_both_sides_changing_one_line_differently_is_a_conflict_both_the_same_is_not():
    html = aligned_three(BASE, BASE.replace("line 8", "mine"), BASE.replace("line 8", "theirs"))
    assert ("conflict", ["line 8", "mine", "theirs"]) in rows(html)
    assert ">conflict</td>" in html
    same = aligned_three(BASE, BASE.replace("line 8", "both"), BASE.replace("line 8", "both"))
    assert ("same", ["line 8", "both", "both"]) in rows(same)


def test_a_line_only_one_side_adds_leaves_the_others_blank_and_text_is_escaped():
    html = aligned_three("a\nb", "a\nb\n<script>@x</script>", "a\nb")
    assert "<script>" not in html and "&lt;script&gt;@x&lt;/script&gt;" in html
    assert rows(html)[-1] == ("yours", ["", "&lt;script&gt;@x&lt;/script&gt;", ""])
