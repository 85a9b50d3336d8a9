"""The catalog API's list of bundles, a page at a time, read on every visit of the catalog:
the page's bundles with their publishers, their visible versions and the count of all
bundles, in one query compiled once a process (pixie.prepared), with visible_versions'
rule inside it.

It reads what selectors.bundle_list's queryset reads, and the rows come back the same
(tests/catalog/test_bundle_pages.py holds the two equal for every kind of viewer).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, QuerySet, Window
from django.db.models.functions import DenseRank

from pixie.prepared import PreparedQuery, Slot

from .models import Bundle, BundleVersion, Publisher
from .selectors import BUNDLE_LIST_VERSION_FIELDS, StandIn, bundle_list, visible_versions

_BUNDLE_FIELDS = [f"bundle__{field.name}" for field in Bundle._meta.concrete_fields]
_PUBLISHER_FIELDS = [
    f"bundle__publisher__{field.name}" for field in Publisher._meta.concrete_fields
]


def _page(versions: QuerySet, bottom: int, top: int) -> QuerySet[BundleVersion]:
    """The visible versions of the bundles ranked bottom+1 to top by (name, slug), each
    with its bundle and publisher. Ranked from both ends, a row also tells how many
    bundles there are (rank + back - 1): the page and its count in one query, without
    LIMIT, so the bounds are values, not part of the SQL."""
    by_name = [F("bundle__name"), F("bundle__slug")]
    return (
        versions.select_related("bundle__publisher")
        .only(*BUNDLE_LIST_VERSION_FIELDS, *_BUNDLE_FIELDS, *_PUBLISHER_FIELDS)
        .annotate(
            rank=Window(DenseRank(), order_by=[field.asc() for field in by_name]),
            back=Window(DenseRank(), order_by=[field.desc() for field in by_name]),
        )
        .filter(rank__gt=bottom, rank__lte=top)
        .order_by("rank", "-created_at", "id")
    )


_USER = Slot("user_id", -7_000_000_021)
_WORKSPACE = Slot("workspace_id", -7_000_000_022)
# Within a 32-bit integer (the rank's type): Django leaves no lookup out of its range in SQL.
_BOTTOM, _TOP = Slot("bottom", -2_147_000_023), Slot("top", -2_147_000_024)


def _seen_by(user_id, workspace_id=None) -> QuerySet[BundleVersion]:
    return visible_versions(StandIn(pk=user_id), limited_to=workspace_id)


# Who is looking picks the query: a superuser (every version), a login (the rule with their
# id), a login through a token limited to one workspace (the rule for that workspace).
_PAGES = {
    "everything": PreparedQuery(
        lambda bottom, top: _page(BundleVersion.objects.all(), bottom, top), _BOTTOM, _TOP
    ),
    "user": PreparedQuery(
        lambda user_id, bottom, top: _page(_seen_by(user_id), bottom, top),
        _USER, _BOTTOM, _TOP,
    ),
    "limited": PreparedQuery(
        lambda user_id, workspace_id, bottom, top: _page(
            _seen_by(user_id, workspace_id), bottom, top
        ),
        _USER, _WORKSPACE, _BOTTOM, _TOP,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class BundlePages:
    """bundle_list for pixie.pagination.CountInPagePaginator: each row a Bundle with its
    publisher, ``_count_in_page`` and ``visible_versions`` (limited_to: the workspace the
    request is limited to, or None; see visible_versions)."""

    user: object
    limited_to: int | None = None

    def page_rows(self, bottom: int, limit: int) -> list[Bundle]:
        user = self.user
        if not user.is_authenticated or not user.is_active:
            return []
        if self.limited_to is not None:
            kind, who = "limited", {"user_id": user.pk, "workspace_id": self.limited_to}
        elif user.is_superuser:
            kind, who = "everything", {}
        else:
            kind, who = "user", {"user_id": user.pk}
        bundles: dict[int, Bundle] = {}
        for version in _PAGES[kind].objects(bottom=bottom, top=bottom + limit, **who):
            bundle = bundles.get(version.bundle_id)
            if bundle is None:  # each row carries its bundle: the first one's is kept
                bundle = bundles[version.bundle_id] = version.bundle
                bundle._count_in_page = version.rank + version.back - 1
                bundle.visible_versions = []
            BundleVersion.bundle.field.set_cached_value(version, bundle)
            bundle.visible_versions.append(version)
        return list(bundles.values())

    def count(self) -> int:
        """For a page past the end, which holds no row to carry the count."""
        return bundle_list(user=self.user, limited_to=self.limited_to).count()
