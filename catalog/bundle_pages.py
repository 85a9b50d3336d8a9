"""The catalog API's list of bundles, a page at a time, read on every visit of the catalog:
the page's bundles with their publishers, their visible versions and the count of all
bundles, in one query compiled once a process (pixie.core.db.prepared).

It reads what selectors.bundle_list's queryset reads, and the rows come back the same
(tests/catalog/test_bundle_pages.py holds the two equal for every kind of viewer).

The query ranks bundles, not versions: the page's bundles are read off the bundle_by_name
index (name, slug) with LIMIT and OFFSET (parameters, see _PageQuery), each checked for a
version the viewer may see, so page 1 reads about 50 bundles whatever the size of the
catalog; only then are the page's versions read (visible_versions' rule, by bundle id).
The count is a subquery run once, index-only: a semi-join of the bundles with the
bundle_version_visibility index (bundle_id, catalog_review, status; migration 0016).
A deep page still walks (or sorts) the bundles before it: OFFSET, not a keyset.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from django.db.models import Exists, F, Func, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.lookups import Exact, In
from rest_framework.authtoken.models import Token

from pixie.core.db.prepared import PreparedQuery, Slot
from pixie.core.db.row_digest import RowsDigest
from pixie.core.models import ApiToken, Membership
from pixie.core.people.permissions import any_membership_q, auditor_q, operator_q
from pixie.core.people.tokens import token_query_with

from .models import Bundle, BundleVersion, Publisher
from .selectors import (
    BUNDLE_LIST_VERSION_FIELDS,
    IN_CATALOG,
    StandIn,
    bundle_list,
    by_token_rule,
    read_by_token_rule,
    visible_versions,
)

_BUNDLE_FIELDS = [f"bundle__{field.name}" for field in Bundle._meta.concrete_fields]
_PUBLISHER_FIELDS = [
    f"bundle__publisher__{field.name}" for field in Publisher._meta.concrete_fields
]


def _has_version(*conditions) -> Exists:
    return Exists(BundleVersion.objects.filter(*conditions, bundle=OuterRef("pk")))


def _bundles_seen_by(user, limited_to: int | None) -> Q:
    """visible_versions' rule, for the bundles: the bundle has a version the user may see.

    The same conditions (selectors.IN_CATALOG, pixie.core.people.permissions' roles and
    memberships),
    with the publishing workspace read from the bundle being asked about rather than by
    joining each version to its bundle and publisher: so the question is one lookup of
    (bundle_id, catalog_review, status) in an index (migration 0016), and one EXISTS the
    planner can make a semi-join of (an OR of EXISTS it costs per row, however run)."""
    if user is None:  # a superuser: every version
        return Q(_has_version())
    # The bundle's, from inside the version's subquery (and one level further down).
    publishing_workspace = OuterRef("publisher__workspace")
    if limited_to is not None:
        return Q(
            Exists(Membership.objects.filter(user=user.pk, workspace=limited_to)),
            _has_version(IN_CATALOG | Q(Exact(publishing_workspace, limited_to))),
        )
    # member_q as IN (the user's workspaces), not a correlated EXISTS: the planner costs a
    # correlated EXISTS under OR per row (if run hashed), which inflated the count's cost.
    member_of_publisher = In(
        publishing_workspace, Membership.objects.filter(user=user.pk).values("workspace")
    )
    return Q(
        _has_version(
            operator_q(user)
            | auditor_q(user)
            | (IN_CATALOG & any_membership_q(user))
            | Q(member_of_publisher)
        )
    )


# Sentinels for the page's slice, [bottom:bottom + limit]: compiled to LIMIT and OFFSET
# literals, which _PageQuery turns into parameters (the SQL stays the same on every page).
_SAMPLE_BOTTOM, _SAMPLE_LIMIT = 1_999_999_937, 1_234_567


def _page(
    versions: QuerySet, user, limited_to: int | None, counted: bool = True
) -> QuerySet[BundleVersion]:
    """The visible versions of the page's bundles, each with its bundle and publisher, and
    (``counted``) on every row the count of all the bundles the user may see (``total``)."""
    seen = Bundle.objects.filter(_bundles_seen_by(user, limited_to))
    page = seen.order_by("name", "slug").values("pk")
    rows = (
        versions.filter(bundle__in=page[_SAMPLE_BOTTOM : _SAMPLE_BOTTOM + _SAMPLE_LIMIT])
        .select_related("bundle__publisher")
        .only(*BUNDLE_LIST_VERSION_FIELDS, *_BUNDLE_FIELDS, *_PUBLISHER_FIELDS)
        .order_by("bundle__name", "bundle__slug", "-created_at", "id")
    )
    return rows.annotate(total=_count(user, limited_to)) if counted else rows


def _count(user, limited_to: int | None) -> Subquery:
    seen = Bundle.objects.filter(_bundles_seen_by(user, limited_to)).order_by()
    return Subquery(seen.values(n=Func(F("pk"), function="COUNT", output_field=IntegerField())))


def _digested(versions: QuerySet, user, limited_to: int | None) -> QuerySet[BundleVersion]:
    """_page's rows, each with the digest of them all but the count (pixie.core.db.row_digest;
    PostgreSQL), read in the same statement: with the count, the page's ETag, equal to
    the one PAGE_DIGEST_WITH_TOKEN reads for the same viewer. PostgreSQL reads the page's
    rows twice, the count once: a page answered from its ETag alone (a 304, or an answer
    rendered before) is read only once, with the token."""
    uncounted = _page(versions, user, limited_to, counted=False)
    return uncounted.annotate(total=_count(user, limited_to), digest=RowsDigest(uncounted))


class _PageQuery(PreparedQuery):
    """A PreparedQuery whose slice (the sentinels above: the one LIMIT with an OFFSET in its
    SQL) is sent as two parameters, ``limit`` and ``bottom``: Django writes a slice into
    the SQL as numbers, which would make each page a statement of its own."""

    def _compile(self, using: str):
        compiled = super()._compile(using)
        clause = f"LIMIT {_SAMPLE_LIMIT} OFFSET {_SAMPLE_BOTTOM}"
        # Once, or twice where the page is read again for its digest (_digested).
        first, *rest = compiled.sql.split(clause)
        if not rest:
            raise ValueError(f"Expected {clause!r} in the page's SQL.")
        sql, slots = first, list(compiled.slots)
        at = _parameters(first)
        for after in rest:
            slots[at:at] = [("limit", _SAMPLE_LIMIT), ("bottom", _SAMPLE_BOTTOM)]
            sql += f"LIMIT %s OFFSET %s{after}"
            at += 2 + _parameters(after)
        return dataclasses.replace(compiled, sql=sql, slots=slots)


def _parameters(sql: str) -> int:
    return re.findall(r"%.", sql).count("%s")  # "%%" is a "%"


_USER = Slot("user_id", -7_000_000_021)
_WORKSPACE = Slot("workspace_id", -7_000_000_022)


def _user_page(user_id, workspace_id=None) -> QuerySet[BundleVersion]:
    user = StandIn(pk=user_id)
    return _digested(visible_versions(user, limited_to=workspace_id), user, workspace_id)


# Who is looking picks the query: a superuser (every version), a login (the rule with their
# id), a login through a token limited to one workspace (the rule for that workspace).
_PAGES = {
    "everything": _PageQuery(lambda: _digested(BundleVersion.objects.all(), None, None)),
    "user": _PageQuery(lambda user_id: _user_page(user_id), _USER),
    "limited": _PageQuery(_user_page, _USER, _WORKSPACE),
}


def _page_digest(owner, workspace) -> dict:
    user = StandIn(pk=owner)

    def digest(limited_to):
        versions = visible_versions(user, limited_to=limited_to)
        return RowsDigest(_page(versions, user, limited_to, counted=False))

    def count(limited_to):
        return _count(user, limited_to)

    return {
        "page_digest": by_token_rule(workspace, digest),
        "page_total": by_token_rule(workspace, count),
    }


# For each kind of token (pixie.core.people.tokens.read_with_token): the token, and the digest and
# count of the page its owner sees (by the rule of the workspace the token is limited to,
# if it is), in one statement, so a conditional request for the list (a 304, or an
# answer rendered before) costs one round trip. selectors.read_by_token_rule says when
# it applies; page_validator makes the ETag's input of the two.
PAGE_DIGEST_WITH_TOKEN = {
    model: token_query_with(model, _page_digest, query_class=_PageQuery)
    for model in (ApiToken, Token)
}


def page_validator(digest: str, total: int) -> list:
    """What a page's ETag is over, given its rows' digest and its count."""
    return [digest, total]


class BundlePage(Sequence):
    """A page as its query gave it. ``rows`` are what the page says (its count, and every
    field of its bundles, publishers and visible versions), enough for an ETag; the
    Bundle instances are made only when something reads them, so a 304, or an answer
    rendered before, makes none."""

    def __init__(self, query: PreparedQuery | None, rows: list[tuple]):
        self.rows, self._query = rows, query
        self._bundle_ids = dict.fromkeys(row[query.column("bundle_id")] for row in rows)

    @property
    def validator(self):
        """What the page's ETag is over: the digest of its rows, read with them, and its
        count (PostgreSQL), else the rows themselves."""
        if self.rows and (digest := self.rows[0][self._query.column("digest")]) is not None:
            return page_validator(digest, self.count_in_page)
        return self.rows

    @property
    def count_in_page(self) -> int | None:
        """The count of all the bundles the user may see (None: the page is empty)."""
        return self.rows[0][self._query.column("total")] if self.rows else None

    def __len__(self) -> int:
        return len(self._bundle_ids)

    def __getitem__(self, index):
        return self.bundles[index]

    @cached_property
    def bundles(self) -> list[Bundle]:
        bundles: dict[int, Bundle] = {}
        for version in self._query.instances(self.rows) if self.rows else ():
            bundle = bundles.get(version.bundle_id)
            if bundle is None:  # each row carries its bundle: the first one's is kept
                bundle = bundles[version.bundle_id] = version.bundle
                bundle._count_in_page = version.total
                bundle.visible_versions = []
            BundleVersion.bundle.field.set_cached_value(version, bundle)
            bundle.visible_versions.append(version)
        return list(bundles.values())


@dataclass(frozen=True)
class BundlePages:
    """bundle_list for pixie.core.web.pagination.CountInPagePaginator: each row a Bundle with its
    publisher, ``_count_in_page`` and ``visible_versions`` (limited_to: the workspace the
    request is limited to, or None; see visible_versions)."""

    user: object
    limited_to: int | None = None

    def read_page(self, bottom: int, limit: int) -> BundlePage:
        """The page of ``limit`` bundles from ``bottom`` (empty if the user sees no catalog)."""
        user = self.user
        if not user.is_authenticated or not user.is_active:
            return BundlePage(None, [])
        if self.limited_to is not None:
            kind, who = "limited", {"user_id": user.pk, "workspace_id": self.limited_to}
        elif user.is_superuser:
            kind, who = "everything", {}
        else:
            kind, who = "user", {"user_id": user.pk}
        query = _PAGES[kind]
        return BundlePage(query, query.rows(bottom=bottom, limit=limit, **who))

    def read_by_token_rule(self) -> bool:
        """Whether PAGE_DIGEST_WITH_TOKEN's digest stands for this viewer's page."""
        return read_by_token_rule(self.user, self.limited_to)

    def page_rows(self, bottom: int, limit: int) -> list[Bundle]:
        return list(self.read_page(bottom, limit))

    def count(self) -> int:
        """For a page past the end, which holds no row to carry the count."""
        return bundle_list(user=self.user, limited_to=self.limited_to).count()
