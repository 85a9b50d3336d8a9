"""Reads of the catalog, each a bounded number of queries whatever the data size."""

from dataclasses import dataclass, replace

from django.contrib.auth.models import Group
from django.core.cache import caches
from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Value,
    prefetch_related_objects,
)
from django.http import Http404

from pixie.core.models import Membership
from pixie.core.people.permissions import (
    AUDITORS_GROUP,
    OPERATORS_GROUP,
    any_membership_q,
    auditor_q,
    member_q,
    operator_q,
)
from pixie.core.plain_reads import column_values, read_with_token

from .models import (
    Bundle,
    BundleSkill,
    BundleVersion,
    CatalogReview,
    CatalogStamp,
    FileBlob,
    Publisher,
    SkillFile,
    Status,
)
from .skill_content import is_text
from .validators import version_key

# Every workspace sees it (BundleVersion.in_catalog, as a condition).
IN_CATALOG = Q(catalog_review=CatalogReview.APPROVED) & ~Q(status=Status.DRAFT)
PUBLISHING_WORKSPACE = "bundle__publisher__workspace"


def visible_versions(user, *, limited_to: int | None = None) -> QuerySet[BundleVersion]:
    """The bundle versions a user may see: the one rule every list, page, download and
    plan form asks.

    Operators and auditors see every version. Anyone else sees the versions approved for the
    catalog (yanked included), provided they belong to a workspace, and every
    version a workspace they belong to published (drafts, pending and refused ones
    included). A login of no workspace sees none. One query, with the rest of it:
    the roles are conditions inside it, not reads of their own.

    limited_to: the id of the one workspace the request may act in (an API token limited
    to it, pixie.core.people.permissions.token_workspace_id). The user then sees what a plain member
    of that workspace sees, provided they are one: the catalog and what it published.
    Their other memberships and their roles (operator, auditor, superuser) count for
    nothing.

    versions_seen_by(catalog_viewer(user)) states the same rule with the user's roles
    and memberships read first, in a query of their own, for the catalog API's reads,
    where building these subqueries cost more than a round trip
    (tests/catalog/test_selectors_viewer.py holds the two equal).
    """
    versions = BundleVersion.objects.all()
    if not user.is_authenticated or not user.is_active:
        return versions.none()
    if limited_to is not None:
        return versions.filter(
            Exists(Membership.objects.filter(user=user.pk, workspace=limited_to)),
            IN_CATALOG | Q(**{f"{PUBLISHING_WORKSPACE}_id": limited_to}),
        )
    if user.is_superuser:
        return versions
    return versions.filter(
        operator_q(user)
        | auditor_q(user)
        | (IN_CATALOG & any_membership_q(user))
        | member_q(user, workspace_field=PUBLISHING_WORKSPACE)
    )


@dataclass(frozen=True)
class CatalogViewer:
    """What visible_versions decides about a user, read as plain facts: whether they see
    every version (an operator, auditor or superuser), whether they belong to a
    workspace (and so see the catalog), and the publishers of their workspaces (whose
    versions they see in any state)."""

    sees_everything: bool = False
    in_a_workspace: bool = False
    publisher_ids: tuple[int, ...] = ()
    # The catalog's stamp (catalog.models.stamp) the facts were read under, when asked
    # for: every shard's value, sorted. Empty when not read, or when there is none to
    # read (a database just emptied): then it says nothing about the catalog.
    stamp: tuple[int, ...] = ()


_ROLE, _MEMBER, _PUBLISHER = 0, 1, 2


def _facts(user_id: int, limited_to: int | None = None) -> QuerySet:
    """(fact, id) rows: the user's operator or auditor groups, memberships, and the
    publishers of their workspaces. Limited to a workspace: their membership of that
    one and its publishers, no roles."""
    roles = Group.objects.filter(user=user_id, name__in=[OPERATORS_GROUP, AUDITORS_GROUP])
    memberships = Membership.objects.filter(user=user_id)
    publishers = Publisher.objects.filter(workspace__memberships__user=user_id)
    if limited_to is not None:
        memberships = memberships.filter(workspace=limited_to)
        publishers = publishers.filter(workspace=limited_to)
    parts = [
        memberships.annotate(fact=Value(_MEMBER)).values_list("fact", "pk").order_by(),
        publishers.annotate(fact=Value(_PUBLISHER)).values_list("fact", "pk").order_by(),
    ]
    if limited_to is None:
        parts.insert(0, roles.annotate(fact=Value(_ROLE)).values_list("fact", "pk").order_by())
    first, *rest = parts
    return first.union(*rest, all=True)


def catalog_stamp(token=None) -> tuple[int, ...]:
    """The catalog's stamp (catalog.models.stamp): every shard's value, sorted. As read
    with the request's API token, in its statement (catalog.apps), or else now, in one
    query; in plain SQL either way, since every catalog request reads it
    (pixie.core.plain_reads)."""
    values = read_with_token(token, CatalogStamp, "number")
    if values is None:
        values = column_values(CatalogStamp, "number")
    return tuple(sorted(values))


def catalog_viewer(
    user, *, limited_to: int | None = None, stamped: bool = False, token=None
) -> CatalogViewer:
    """The user's facts for the catalog's reads: one query (none for a superuser or an
    anonymous or inactive user), read on every request, so a change of membership or
    role shows on the next one. limited_to: as for visible_versions, the one workspace
    whose membership counts (a superuser's facts are then read too).

    stamped: the catalog's stamp is read first, and the facts are kept in this process
    under it (the stamp changes with any membership, role or publisher), so a reader
    who comes again at the same stamp costs that one query and no other; none with the
    request's API token (``token``), which read the stamp with it."""
    if not user.is_authenticated or not user.is_active:
        return CatalogViewer()
    if not stamped:
        return _read_viewer(user, limited_to)
    stamp = catalog_stamp(token)
    key = f"catalog:viewer:{user.pk}:{limited_to}:{hash(stamp)}"
    viewer = caches["viewers"].get(key) if stamp else None
    if viewer is None or viewer.stamp != stamp:
        viewer = replace(_read_viewer(user, limited_to), stamp=stamp)
        if stamp:
            caches["viewers"].set(key, viewer, timeout=None)
    return viewer


def _read_viewer(user, limited_to: int | None) -> CatalogViewer:
    if user.is_superuser and limited_to is None:
        return CatalogViewer(sees_everything=True, in_a_workspace=True)
    facts: dict[int, set[int]] = {}
    for fact, pk in _facts(user.pk, limited_to):
        facts.setdefault(int(fact), set()).add(pk)
    return CatalogViewer(
        sees_everything=_ROLE in facts,
        in_a_workspace=_MEMBER in facts,
        publisher_ids=tuple(sorted(facts.get(_PUBLISHER, ()))),
    )


def versions_seen_by(viewer: CatalogViewer) -> QuerySet[BundleVersion]:
    """visible_versions for a viewer already read: the same rule, with the roles and
    memberships as values rather than subqueries (a plain filter, cheap to build and
    to run)."""
    versions = BundleVersion.objects.all()
    if viewer.sees_everything:
        return versions
    if not viewer.in_a_workspace:
        return versions.none()
    if viewer.publisher_ids:
        return versions.filter(IN_CATALOG | Q(bundle__publisher_id__in=viewer.publisher_ids))
    return versions.filter(IN_CATALOG)


def _workspace_may_see(workspace) -> Q:
    return IN_CATALOG | Q(**{PUBLISHING_WORKSPACE: workspace})


def versions_visible_to_workspace(workspace) -> QuerySet[BundleVersion]:
    """What a workspace may plan: the catalog, and what it published itself."""
    return BundleVersion.objects.filter(_workspace_may_see(workspace))


def visible_to_workspace(workspace) -> ExpressionWrapper:
    """The same rule as a column of each row read, so a check costs no query of its own."""
    return ExpressionWrapper(_workspace_may_see(workspace), output_field=BooleanField())


# What bundle_list reads of each visible version (its bundle's latest_version, the detail's
# version summaries).
BUNDLE_LIST_VERSION_FIELDS = [
    "id",
    "bundle_id",
    "version",
    "status",
    "published_at",
    "yank_reason",
    "catalog_review",
    "catalog_review_reason",
]


def bundle_list(
    *, user, limited_to: int | None, viewer: CatalogViewer | None = None
) -> QuerySet[Bundle]:
    """The bundles with a version the user may see, each with those versions
    (limited_to: the workspace the request is limited to, or None; see visible_versions;
    viewer: the user's facts, if already read for this request)."""
    # The user's roles and memberships read once, for the page and its versions alike.
    if viewer is None:
        viewer = catalog_viewer(user, limited_to=limited_to)
    versions = versions_seen_by(viewer).only(*BUNDLE_LIST_VERSION_FIELDS)
    # EXISTS rather than a join: no DISTINCT over wide rows, and a plain COUNT for the pages.
    return (
        Bundle.objects.filter(Exists(versions.filter(bundle=OuterRef("pk"))))
        .select_related("publisher")
        .prefetch_related(Prefetch("versions", queryset=versions, to_attr="visible_versions"))
        .order_by("name", "slug")
    )


def bundle_get(*, user, limited_to: int | None, slug: str) -> Bundle:
    bundle = bundle_list(user=user, limited_to=limited_to).filter(slug=slug).first()
    if bundle is None:
        raise Http404(f"No bundle {slug}.")
    return bundle


def latest_published(versions: list[BundleVersion]) -> BundleVersion | None:
    published = [v for v in versions if v.status == Status.PUBLISHED]
    return max(published, key=lambda v: version_key(v.version), default=None)


CONTENTS = [
    Prefetch(
        "skills",
        queryset=BundleSkill.objects.select_related("skill_version__package").order_by(
            "position", "id"
        ),
    ),
    "hosts",
    "credentials",
]


def _no_nul(value: str, message: str) -> None:
    """A URL may carry %00; PostgreSQL refuses NUL in a query, and nothing stored has one."""
    if "\x00" in value:
        raise Http404(message)


def bundle_version_get(
    *, user, limited_to: int | None, slug: str, version: str, contents: bool = True
) -> BundleVersion:
    """A version the user may see (limited_to: the workspace the request is limited to, or
    None; see visible_versions) with its bundle, publisher and signing key: one query,
    with the visibility rule inside it (one round trip, which costs more than building
    the rule's subqueries); with ``contents``, its skills, hosts and credentials
    prefetched too. 404 if there is none the user may see."""
    _no_nul(version, f"No such version of bundle {slug}.")
    _no_nul(slug, f"No bundle {slug!r}.")
    found = next(
        iter(
            visible_versions(user, limited_to=limited_to)
            .filter(bundle__slug=slug, version=version)
            .select_related("bundle__publisher", "signing_key")
            .order_by()[:1]
        ),
        None,
    )
    if found is None:
        raise Http404(f"No version {version} of bundle {slug}.")
    if contents:
        prefetch_related_objects([found], *CONTENTS)
    return found


SKILL_FILES = Prefetch("skills__skill_version__files", queryset=SkillFile.objects.order_by("path"))


def bundle_version_contents(*, bundle_version: BundleVersion) -> BundleVersion:
    """The version with its skills, their files, hosts and credentials prefetched
    (four queries, whatever the number of skills and files)."""
    prefetch_related_objects([bundle_version], *CONTENTS, SKILL_FILES)
    return bundle_version


def bundle_skill_version(*, bundle_version: BundleVersion, skill: str):
    """The skill version a bundle version holds under a skill slug (one query), or 404."""
    entry = (
        BundleSkill.objects.filter(
            bundle_version=bundle_version, skill_version__package__slug=skill
        )
        .select_related("skill_version__package")
        .first()
    )
    if entry is None:
        where = f"{bundle_version.bundle.slug} {bundle_version.version}"
        raise Http404(f"{where} has no skill {skill}.")
    return entry.skill_version


def skill_file_get(*, files: QuerySet, path: str, owner: str):
    """One file (SkillFile or RevisionFile rows) by path, with its bytes, or 404."""
    _no_nul(path, f"{owner} has no such file.")
    found = files.filter(path=path).select_related("blob").first()
    if found is None:
        raise Http404(f"{owner} has no file {path}.")
    return found


def skill_versions_files(versions) -> None:
    """Prefetch each skill version's files, by path (one query whatever their number)."""
    prefetch_related_objects(
        list(versions), Prefetch("files", queryset=SkillFile.objects.order_by("path"))
    )


def bundle_version_skills(*, bundle_version: BundleVersion) -> list[BundleSkill]:
    """The version's skills in order, each skill version with its package and files
    (two queries)."""
    return list(
        BundleSkill.objects.filter(bundle_version=bundle_version)
        .select_related("skill_version__package")
        .prefetch_related(
            Prefetch("skill_version__files", queryset=SkillFile.objects.order_by("path"))
        )
        .order_by("position", "id")
    )


def blob_texts(digests) -> dict[str, str]:
    """The stored files with these digests that are text, decoded, in one query (none
    for no digests); a file that is not UTF-8 text is left out."""
    if not digests:
        return {}
    texts = {}
    for sha256, content in FileBlob.objects.filter(sha256__in=digests).values_list(
        "sha256", "content"
    ):
        data = bytes(content)
        if is_text(data):
            texts[sha256] = data.decode("utf-8")
    return texts
