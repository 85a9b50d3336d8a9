"""Line diffs whose work is bounded, for every view of a change (a plan, a revision
comparison, a bundle comparison, a fork, a merge, a file's diff) and every later one.

difflib's SequenceMatcher compares every line of one side's changed middle with every
line of the other's: two 6,000-line edits took 19 s, a worker tied up by one reader. Here
the common head and tail are matched first (linear), and the middle is aligned line by
line only while it holds at most PAIR_BUDGET pairs of lines; past that it is shown as
the lines removed, then the lines added (still a correct diff, with ``aligned`` False so
that a view says so). Pure standard library.
"""

from __future__ import annotations

import difflib
from difflib import Match

# Pairs of lines the middle of a diff may hold and still be aligned line by line: about
# 0.15 s of SequenceMatcher at worst (a 316-line middle on each side, every other line
# alike: its cost grows faster than the square of the lines).
PAIR_BUDGET = 100_000
# Pairs of words two changed lines may hold and still have their changed words marked;
# and the pairs one view may spend on marking words in all.
WORD_PAIR_BUDGET = 40_000
VIEW_WORD_BUDGET = 2_000_000
NOT_ALIGNED = (
    "Too many lines changed to align them one by one ({old:,} and {new:,} lines): shown "
    "as the lines removed, then the lines added."
)


class BoundedMatcher(difflib.SequenceMatcher):
    """A SequenceMatcher (no autojunk: past 200 lines it would take blank lines for junk)
    whose matching blocks cost at most PAIR_BUDGET comparisons of lines beyond a linear
    pass; ``aligned`` says whether the middle was aligned line by line."""

    def __init__(self, isjunk=None, a="", b=""):
        self.aligned = True
        super().__init__(isjunk, a, b, autojunk=False)

    def get_matching_blocks(self):
        if self.matching_blocks is not None:
            return self.matching_blocks
        a, b = self.a, self.b
        head = _common_head(a, b)
        tail = _common_head(a[head:][::-1], b[head:][::-1])
        a_end, b_end = len(a) - tail, len(b) - tail
        middle_a, middle_b = a[head:a_end], b[head:b_end]
        self.aligned = len(middle_a) * len(middle_b) <= PAIR_BUDGET
        blocks = [Match(0, 0, head)]
        if self.aligned and middle_a and middle_b:
            inner = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
            blocks += [Match(i + head, j + head, n) for i, j, n in inner.get_matching_blocks()]
        blocks.append(Match(a_end, b_end, tail))
        self.matching_blocks = _joined(blocks) + [Match(len(a), len(b), 0)]
        return self.matching_blocks


def _common_head(a, b) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _joined(blocks: list[Match]) -> list[Match]:
    """The non-empty blocks, adjacent ones joined (as difflib returns them)."""
    joined: list[Match] = []
    for i, j, n in blocks:
        if not n:
            continue
        if joined and joined[-1].a + joined[-1].size == i and joined[-1].b + joined[-1].size == j:
            last = joined.pop()
            joined.append(Match(last.a, last.b, last.size + n))
        else:
            joined.append(Match(i, j, n))
    return joined


def unified_diff(a: list[str], b: list[str], fromfile: str = "", tofile: str = "",
                 n: int = 3) -> tuple[list[str], bool]:  # fmt: skip
    """(difflib.unified_diff's lines, without line ends, from a BoundedMatcher; whether
    the change was aligned line by line)."""
    matcher = BoundedMatcher(None, a, b)
    lines: list[str] = []
    for group in matcher.get_grouped_opcodes(n):
        if not lines:
            lines += [f"--- {fromfile}", f"+++ {tofile}"]
        first, last = group[0], group[-1]
        old = _range(first[1], last[2])
        new = _range(first[3], last[4])
        lines.append(f"@@ -{old} +{new} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                lines += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                lines += ["+" + line for line in b[j1:j2]]
    return lines, matcher.aligned


def _range(start: int, stop: int) -> str:
    """A unified diff's range, as difflib writes it."""
    length = stop - start
    beginning = start + 1
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
