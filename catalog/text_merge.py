"""Three-way merges of skill text: merge3, with the line alignment chosen so that an
edit next to a blank line does not collide with the other side's edit nearby.

An inserted paragraph that ends with a blank line, put after a blank line, can be read
as inserted before or after that blank line: both alignments are right, and difflib takes
the first. When that places it against a line the other side changed, the merge reports a
conflict that `git merge-file` (which slides such hunks) does not. So when the first
alignment conflicts, the same merge is tried with every pure insertion and deletion slid
down, then up, as far as it goes, and the alignment with the fewest conflicts is kept.
"""

import merge3

from catalog.line_diff import BoundedMatcher


class _Matcher(BoundedMatcher):
    """No autojunk (past 200 lines it treats blank lines as junk, which no match may start
    from, and a long body's paragraphs then align on the wrong blank line), and bounded
    work: a middle too large to align merges as one region (a conflict if both changed
    it), never a minutes-long alignment."""


class _SlidDown(_Matcher):
    down = True

    def get_matching_blocks(self):
        return _slid(super().get_matching_blocks(), self.a, self.b, down=self.down)


class _SlidUp(_SlidDown):
    down = False


def _slid(blocks, a, b, *, down: bool):
    """Matching blocks with each gap that is on one side only moved as far down (or up)
    as the lines around it allow; the text each side says is unchanged."""
    blocks = [list(block) for block in blocks]
    for k in range(len(blocks) - 2):  # the last block is difflib's empty sentinel
        (i1, j1, n1), (i2, j2, n2) = blocks[k], blocks[k + 1]
        gap_a, gap_b = i2 - i1 - n1, j2 - j1 - n1
        if (gap_a == 0) == (gap_b == 0):
            continue  # a replacement, or no gap: nothing can slide
        seq, first, after = (b, j1 + n1, j2) if gap_a == 0 else (a, i1 + n1, i2)
        if down:
            while n2 > 1 and seq[first] == seq[after]:
                n1, n2, first, after = n1 + 1, n2 - 1, first + 1, after + 1
                i2, j2 = i2 + 1, j2 + 1
        else:
            while n1 > 1 and seq[first - 1] == seq[after - 1]:
                n1, n2, first, after = n1 - 1, n2 + 1, first - 1, after - 1
                i2, j2 = i2 - 1, j2 - 1
        blocks[k][2], blocks[k + 1] = n1, [i2, j2, n2]
    return [tuple(block) for block in blocks]


def _conflicts(merger) -> int:
    return sum(1 for group in merger.merge_regions() if group[0] == "conflict")


def merger(base: list[str], yours: list[str], new: list[str]) -> merge3.Merge3:
    """The Merge3 of three texts as lists of lines, with the fewest conflicts among the
    alignments tried (the first, difflib's own, whenever it has none)."""
    best = merge3.Merge3(base, yours, new, sequence_matcher=_Matcher)
    fewest = _conflicts(best)
    for matcher in (_SlidDown, _SlidUp):
        if not fewest:
            break
        candidate = merge3.Merge3(base, yours, new, sequence_matcher=matcher)
        if (count := _conflicts(candidate)) < fewest:
            best, fewest = candidate, count
    return best
