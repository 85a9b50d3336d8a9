"""Changes as the pages show them: side by side with changed words marked, and file diffs.

The plan page, a skill's revision comparison and a bundle's comparison all use these."""

from __future__ import annotations

import difflib
import re
from itertools import zip_longest

from django.utils.html import escape
from django.utils.safestring import mark_safe

from catalog import text_merge
from catalog.line_diff import (
    NOT_ALIGNED,
    VIEW_WORD_BUDGET,
    WORD_PAIR_BUDGET,
    BoundedMatcher,
)

_TOKENS = re.compile(r"^\s+|\S+\s*")  # indentation, then each word with the spaces after it


class _WordBudget:
    """Pairs of words one view may still compare to mark changed words (VIEW_WORD_BUDGET);
    past it, or past WORD_PAIR_BUDGET for two lines, a changed line is marked whole."""

    def __init__(self):
        self.left = VIEW_WORD_BUDGET

    def take(self, pairs: int) -> bool:
        if pairs > WORD_PAIR_BUDGET or pairs > self.left:
            return False
        self.left -= pairs
        return True


def _marked_words(old: str, new: str, budget: _WordBudget | None = None) -> tuple[str, str]:
    """Both lines escaped, with the words that differ wrapped in <del> and <ins>."""
    before, after = _TOKENS.findall(old), _TOKENS.findall(new)
    whole = f"<del>{escape(old)}</del>", f"<ins>{escape(new)}</ins>"
    if not (budget or _WordBudget()).take(len(before) * len(after)):
        return whole
    left, right = [], []
    # Words are compared without their spaces, so "date." matches "date. " at a line's end.
    matcher = difflib.SequenceMatcher(
        None, [t.strip() for t in before], [t.strip() for t in after], autojunk=False
    )
    kept = sum(block.size for block in matcher.get_matching_blocks())
    if kept < 0.5 * min(len(before), len(after)):  # rewritten: scattered marks read as noise
        return whole
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_part, new_part = escape("".join(before[i1:i2])), escape("".join(after[j1:j2]))
        if tag == "equal":
            left.append(old_part)
            right.append(new_part)
            continue
        if old_part:
            left.append(f"<del>{old_part}</del>")
        if new_part:
            right.append(f"<ins>{new_part}</ins>")
    return "".join(left), "".join(right)


def _row(old_number, old_html, new_number, new_html, change="") -> str:
    return (
        f'<tr class="{change}"><td class="num">{old_number or ""}</td>'
        f'<td class="old">{old_html}</td><td class="num">{new_number or ""}</td>'
        f'<td class="new">{new_html}</td></tr>'
    )


def side_by_side(old: str, new: str, context: int = 2) -> str:
    """A side-by-side diff of changed lines (with a little context), the words that
    changed inside a line marked; every piece of text is escaped here. Its work is
    bounded (catalog.line_diff): a change too large to align is shown as the lines
    removed, then the lines added, and the table says so."""
    before, after = old.splitlines(), new.splitlines()
    matcher = BoundedMatcher(None, before, after)
    groups = list(matcher.get_grouped_opcodes(context))  # aligns: sets matcher.aligned
    words = _WordBudget()
    rows = []
    if not matcher.aligned:
        note = escape(NOT_ALIGNED.format(old=len(before), new=len(after)))
        rows.append(f'<tr class="note"><td colspan="4">{note}</td></tr>')
    for n, group in enumerate(groups):
        if n:
            rows.append('<tr class="gap"><td colspan="4">⋯</td></tr>')
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(i2 - i1):
                    line = escape(before[i1 + k])
                    rows.append(_row(i1 + k + 1, line, j1 + k + 1, escape(after[j1 + k])))
                continue
            pairs = (
                zip_longest(range(i1, i2), range(j1, j2)) if matcher.aligned
                else [*((i, None) for i in range(i1, i2)), *((None, j) for j in range(j1, j2))]
            )  # fmt: skip
            for i, j in pairs:
                if i is not None and j is not None:
                    left, right = _marked_words(before[i], after[j], words)
                    rows.append(_row(i + 1, left, j + 1, right, "changed"))
                elif i is not None:
                    rows.append(_row(i + 1, f"<del>{escape(before[i])}</del>", None, "", "removed"))
                else:
                    rows.append(_row(None, "", j + 1, f"<ins>{escape(after[j])}</ins>", "added"))
    table = (
        '<table class="diff"><colgroup><col class="num"><col><col class="num"><col></colgroup>'
        '<thead><tr><th scope="col" colspan="2">Before</th><th scope="col" colspan="2">After'
        "</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )
    return mark_safe(table)  # noqa: S308 - every line was escaped above


def unified(lines: list[str]) -> str:
    """A file's unified diff, each line escaped and marked as added, removed or a hunk
    (each line a block, so no newline between them)."""
    rows = []
    for line in lines:
        if line.startswith(("+++", "---")):
            continue
        kind = {"+": "added", "-": "removed", "@": "hunk"}.get(line[:1], "")
        rows.append(f'<span class="{kind}">{escape(line)}</span>')
    return mark_safe(  # noqa: S308 - every line was escaped above
        '<pre class="file-diff">' + "".join(rows) + "</pre>"
    )


def file_views(files: list[dict]) -> list[dict]:
    views = []
    for entry in files:
        view = dict(entry)
        if entry.get("diff"):
            view["diff_html"] = unified(entry["diff"])
        views.append(view)
    return views


def _three_cells(number, html, change) -> str:
    return f'<td class="num">{number or ""}</td><td class="{change}">{html}</td>'


def aligned_three(
    base: str,
    yours: str,
    new: str,
    context: int = 2,
    headings: tuple[str, str, str] = ("Base", "Yours", "New"),
) -> str:
    """Base, yours and new side by side, aligned on the lines all three share (merge3's
    sync regions, the ones the merge itself uses). Each region between them is marked by
    who changed it: yours, new, both the same way, or both differently (a conflict), with
    the changed words marked against the base. Long unchanged runs fold to a gap row;
    every piece of text is escaped here."""
    z, a, b = base.splitlines(), yours.splitlines(), new.splitlines()
    rows: list[str] = []
    words = _WordBudget()
    labels = {"yours": "yours changed", "new": "new changed", "same": "both, the same way",
              "conflict": "conflict"}  # fmt: skip

    def unchanged(zs, ze, as_, bs, first, last):
        keep = range(ze - zs)
        if ze - zs > 2 * context + 1:
            head = [] if first else list(range(context))
            tail = [] if last else list(range(ze - zs - context, ze - zs))
            keep = head + [None] + tail
        for k in keep:
            if k is None:
                rows.append('<tr class="gap"><td colspan="7">⋯</td></tr>')
                continue
            line = escape(z[zs + k])
            rows.append(
                f"<tr>{_three_cells(zs + k + 1, line, '')}{_three_cells(as_ + k + 1, line, '')}"
                f"{_three_cells(bs + k + 1, line, '')}<td></td></tr>"
            )

    def changed(zs, ze, as_, ae, bs, be):
        za, aa, ba = z[zs:ze], a[as_:ae], b[bs:be]
        kind = ("same" if aa == ba else "new" if aa == za else "yours" if ba == za
                else "conflict")  # fmt: skip
        for n, (zl, al, bl) in enumerate(zip_longest(za, aa, ba)):
            base_html = escape(zl) if zl is not None else ""
            cells = []
            for line, start in ((al, as_), (bl, bs)):
                if line is None and zl is not None:  # that side deleted the base's line
                    cells.append(_three_cells(None, f"<del>{escape(zl)}</del>", "removed"))
                elif line is None:
                    cells.append(_three_cells(None, "", "absent"))
                elif zl is not None and line == zl:
                    cells.append(_three_cells(start + n + 1, escape(line), ""))
                else:
                    marked = (
                        _marked_words(zl, line, words)[1] if zl is not None
                        else f"<ins>{escape(line)}</ins>"
                    )  # fmt: skip
                    cells.append(_three_cells(start + n + 1, marked, "changed"))
            base_cell = _three_cells(zs + n + 1 if zl is not None else None, base_html, "base")
            label = f'<td class="what">{labels[kind]}</td>' if n == 0 else "<td></td>"
            rows.append(f'<tr class="{kind}">{base_cell}{"".join(cells)}{label}</tr>')

    merger = text_merge.merger(z, a, b)  # the merge's own alignment: the page shows it
    regions = merger.find_sync_regions()
    iz = ia = ib = 0
    for index, (zmatch, zend, amatch, aend, bmatch, bend) in enumerate(regions):
        if amatch - ia or bmatch - ib or zmatch - iz:
            changed(iz, zmatch, ia, amatch, ib, bmatch)
        if zend > zmatch:
            unchanged(zmatch, zend, amatch, bmatch, first=index == 0 and not rows,
                      last=index == len(regions) - 1)  # fmt: skip
        iz, ia, ib = zend, aend, bend
    table = (
        '<table class="diff three"><colgroup><col class="num"><col><col class="num"><col>'
        '<col class="num"><col><col class="what"></colgroup><thead><tr>'
        + "".join(f'<th scope="col" colspan="2">{escape(h)}</th>' for h in headings)
        + '<th scope="col">Who changed it</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )
    return mark_safe(table)  # noqa: S308 - every line was escaped above
