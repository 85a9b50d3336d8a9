"""Does a new bundle pass itself off as another publisher's? Pure: no database.

A bundle offered beside the operator's "Accounts Receivable" under the same name,
or under a slug one typo away, is how a workspace or third party would borrow the
operator's reputation. What is checked, and what follows:

- the bundle's name, compared without case, spaces or punctuation, is the name of
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

from dataclasses import dataclass, field

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


def name_key(name: str) -> str:
    """A name as people read it: "Accounts  receivable" and "accounts-Receivable" are one."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


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
        if wanted_name and name_key(entry.name) == wanted_name:
            verdict.refusals.append(
                f"the name {name!r} is the name of {owner} bundle {entry.slug}; "
                "choose a name of your own"
            )
        elif slug != entry.slug and within_distance(slug, entry.slug, SLUG_DISTANCE):
            verdict.holds.append(
                f"the slug {slug} is within {SLUG_DISTANCE} letters of {owner} bundle {entry.slug}"
            )
        if wanted_publisher and name_key(entry.publisher_name) == wanted_publisher:
            imitated_publishers.add(entry.publisher_name)
    verdict.holds.extend(
        f"the publisher name {publisher_name!r} is the name of another publisher, {other}"
        for other in sorted(imitated_publishers)
    )
    return verdict
