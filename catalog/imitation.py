"""Does a new bundle pass itself off as another publisher's? Pure: no database.

A bundle offered beside the operator's "Accounts Receivable" under the same name,
or under a slug one typo away, is how a workspace or third party would borrow the
operator's reputation. What is checked, and what follows:

- the bundle's name, compared without case, spaces, punctuation, accents or letters
  that only look like others (Unicode's confusables: "Receivab1e", a Cyrillic "о",
  a full-width "Ａ", mathematical bold, a dotless "ı"), is the name of
  another publisher's catalog bundle: **refused** (a name of one's own costs
  nothing, and no honest reason needs the same one);
- its slug is within ``SLUG_DISTANCE`` edits of another publisher's catalog
  bundle slug: **held** for an operator's review with the reason, since short
  slugs meet by chance (``crm-kit`` and ``cms-kit``);
- the publisher's own name is another publisher's: **held** likewise (a
  workspace's name was chosen when it was made, not to imitate anyone today).

Only bundles already in the catalog are compared against, so a refusal never
reveals another workspace's private bundle.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass, field

from confusable_homoglyphs import confusables

SLUG_DISTANCE = 2


@dataclass(frozen=True)
class CatalogEntry:
    """Another publisher's bundle in the catalog."""

    publisher_id: int
    publisher_name: str
    slug: str
    name: str


@dataclass
class Verdict:
    refusals: list[str] = field(default_factory=list)
    holds: list[str] = field(default_factory=list)


# Lookalikes among ASCII itself, as Unicode's confusables map them (UTS #39): a digit one
# and a capital I read as a small L, a zero as an O.
ASCII_LOOKALIKES = {"1": "l", "I": "l", "|": "l", "0": "O"}


@functools.lru_cache(maxsize=8192)
def _prototype(char: str) -> str:
    """The character ``char`` is read as: its ASCII prototype in Unicode's confusables
    (Cyrillic о, dotless ı, Greek Α ...), else itself."""
    if char.isascii():
        return ASCII_LOOKALIKES.get(char, char)
    found = confusables.is_confusable(char, greedy=True, preferred_aliases=[])
    if not found:
        return char
    prototypes = sorted(g["c"] for g in found[0]["homoglyphs"] if g["c"].isascii())
    return ASCII_LOOKALIKES.get(prototypes[0], prototypes[0]) if prototypes else char


def name_key(name: str) -> tuple[str, str]:
    """A name as people read it: "Accounts  receivable", "accounts-Receivable",
    "Receivab1e", "Ａccounts", "𝐀ccounts" and "Аccounts" (a Cyrillic А) are one.

    Width and styled letters folded (NFKC), each character replaced by the one it is read
    as (its confusable skeleton, UTS #39, a character at a time), accents dropped, then
    only letters and digits kept; once with case folded first (so that "INVOICE" is
    "invoice") and once after (so that "Invoice" with a capital I is "lnvoice"): two
    names are one when either key is. Linear in the name."""
    text = unicodedata.normalize("NFKC", name)
    return _skeleton(text.casefold()), _skeleton(text).casefold()


def _skeleton(text: str) -> str:
    text = unicodedata.normalize("NFKD", "".join(_prototype(ch) for ch in text))
    return "".join(
        _prototype(ch) for ch in text if ch.isalnum() and not unicodedata.combining(ch)
    )


def same_name(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Two name_keys read alike (an empty name is nobody's)."""
    return any(x and x == y for x, y in zip(a, b, strict=True))


def within_distance(a: str, b: str, limit: int) -> bool:
    """Levenshtein distance of a and b is at most limit (banded: O(len * limit))."""
    if abs(len(a) - len(b)) > limit:
        return False
    if a == b:
        return True
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i] + [limit + 1] * len(b)
        low, high = max(1, i - limit), min(len(b), i + limit)
        for j in range(low, high + 1):
            cost = 0 if char_a == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if min(current[max(0, low - 1) : high + 1]) > limit:
            return False
        previous = current
    return previous[len(b)] <= limit


def imitation_verdict(
    *, publisher_id: int | None, publisher_name: str, slug: str, name: str, catalog
) -> Verdict:
    """What the rules above say about a bundle (slug, name) by a publisher, against the
    catalog's bundles (CatalogEntry rows; the publisher's own are skipped)."""
    verdict = Verdict()
    wanted_name, wanted_publisher = name_key(name), name_key(publisher_name)
    imitated_publishers: set[str] = set()
    for entry in catalog:
        if entry.publisher_id == publisher_id:
            continue
        owner = f"{entry.publisher_name}'s"
        if same_name(name_key(entry.name), wanted_name):
            verdict.refusals.append(
                f"the name {name!r} is the name of {owner} bundle {entry.slug}; "
                "choose a name of your own"
            )
        elif slug != entry.slug and within_distance(slug, entry.slug, SLUG_DISTANCE):
            verdict.holds.append(
                f"the slug {slug} is within {SLUG_DISTANCE} letters of {owner} bundle {entry.slug}"
            )
        if same_name(name_key(entry.publisher_name), wanted_publisher):
            imitated_publishers.add(entry.publisher_name)
    verdict.holds.extend(
        f"the publisher name {publisher_name!r} is the name of another publisher, {other}"
        for other in sorted(imitated_publishers)
    )
    return verdict
