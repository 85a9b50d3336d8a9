"""Reads of the catalog, each a bounded number of queries whatever the data size."""

from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    prefetch_related_objects,
)
from django.http import Http404

from pixie.permissions import any_membership_q, auditor_q, member_q, operator_q

from .models import Bundle, BundleSkill, BundleVersion, CatalogReview, FileBlob, SkillFile, Status
from .skill_content import is_text
from .validators import version_key

# Every workspace sees it (BundleVersion.in_catalog, as a condition).
IN_CATALOG = Q(catalog_review=CatalogReview.APPROVED) & ~Q(status=Status.DRAFT)
PUBLISHING_WORKSPACE = "bundle__publisher__workspace"


def visible_versions(user) -> QuerySet[BundleVersion]:
    """The bundle versions a user may see: the one rule every list, page, download and
    plan form asks.

    Operators and auditors see every version. Anyone else sees the versions approved for the
    catalog (yanked included), provided they belong to a workspace, and every
    version a workspace they belong to published (drafts, pending and refused ones
    included). A login of no workspace sees none. One query, with the rest of it:
    the roles are conditions inside it, not reads of their own.
    """
    versions = BundleVersion.objects.all()
    if not user.is_authenticated or not user.is_active:
        return versions.none()
    if user.is_superuser:
        return versions
    return versions.filter(
        operator_q(user)
        | auditor_q(user)
        | (IN_CATALOG & any_membership_q(user))
        | member_q(user, workspace_field=PUBLISHING_WORKSPACE)
    )


def _workspace_may_see(workspace) -> Q:
    return IN_CATALOG | Q(**{PUBLISHING_WORKSPACE: workspace})


def versions_visible_to_workspace(workspace) -> QuerySet[BundleVersion]:
    """What a workspace may plan: the catalog, and what it published itself."""
    return BundleVersion.objects.filter(_workspace_may_see(workspace))


def visible_to_workspace(workspace) -> ExpressionWrapper:
    """The same rule as a column of each row read, so a check costs no query of its own."""
    return ExpressionWrapper(_workspace_may_see(workspace), output_field=BooleanField())


def bundle_list(*, user) -> QuerySet[Bundle]:
    versions = visible_versions(user).only(
        "id",
        "bundle_id",
        "version",
        "status",
        "published_at",
        "yank_reason",
        "catalog_review",
        "catalog_review_reason",
    )
    # EXISTS rather than a join: no DISTINCT over wide rows, and a plain COUNT for the pages.
    return (
        Bundle.objects.filter(Exists(versions.filter(bundle=OuterRef("pk"))))
        .select_related("publisher")
        .prefetch_related(Prefetch("versions", queryset=versions, to_attr="visible_versions"))
        .order_by("name", "slug")
    )


def bundle_get(*, user, slug: str) -> Bundle:
    bundle = bundle_list(user=user).filter(slug=slug).first()
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


def bundle_version_get(*, user, slug: str, version: str, contents: bool = True) -> BundleVersion:
    """A version the user may see, with its skills, hosts and credentials prefetched
    (or, with contents=False, only its own row, bundle and publisher: one query)."""
    _no_nul(version, f"No such version of bundle {slug}.")
    found = (
        visible_versions(user)
        .filter(bundle__slug=slug, version=version)
        .select_related("bundle__publisher", "signing_key")
    )
    if contents:
        found = found.prefetch_related(*CONTENTS)
    bundle_version = found.first()
    if bundle_version is None:
        raise Http404(f"No version {version} of bundle {slug}.")
    return bundle_version


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
