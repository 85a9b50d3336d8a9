"""A bundle version read like a pull request: what changed against the version before it,
the text, the findings, the hosts and credentials, then the decision.

Reads only, for whoever may see the version (selectors.visible_versions); the page that
draws it is catalog.admin.version_page. The version compared against is the newest
published one below it (review_base): for a draft, what publishing would change; for a
version awaiting review, what approving it would add to the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.bundle_files import skill_md_text
from catalog.bundle_history import BundleComparison, bundle_compare
from catalog.diff_display import file_views, side_by_side
from catalog.findings import visible
from catalog.models import BundleSkill, BundleVersion, CatalogReview, Status
from catalog.selectors import visible_versions
from catalog.services.bundle_load import skill_spec_of
from catalog.services.findings import bundle_version_findings
from catalog.validators import version_key

# Findings of these kinds name what the text reaches that the bundle does not declare.
UNDECLARED = ("undeclared_host", "undeclared_credential")


@dataclass
class VersionReview:
    version: BundleVersion
    base: BundleVersion | None  # the version compared against; None for a first version
    comparison: BundleComparison | None
    skills: list[dict] = field(default_factory=list)  # each skill's change and text
    findings: list[dict] = field(default_factory=list)
    undeclared: list[dict] = field(default_factory=list)
    notes_html: str = ""

    @property
    def counts(self) -> dict:
        changes = [s["change"] for s in self.skills]
        return {kind: changes.count(kind) for kind in ("added", "changed", "removed", "unchanged")}

    @property
    def stage(self) -> str:
        """Where the version stands: draft, awaiting (catalog review), refused, published,
        yanked: the page's pill and its decision."""
        v = self.version
        if v.status == Status.DRAFT:
            return "draft"
        if v.status == Status.YANKED:
            return "yanked"
        return {CatalogReview.PENDING: "awaiting", CatalogReview.REFUSED: "refused"}.get(
            v.catalog_review, "published"
        )


def review_base(bundle_version: BundleVersion, user) -> BundleVersion | None:
    """The newest published version of the bundle below this one that the user may see."""
    key = version_key(bundle_version.version)
    earlier = [
        v
        for v in visible_versions(user)
        .filter(bundle_id=bundle_version.bundle_id)
        .exclude(status=Status.DRAFT)
        .exclude(pk=bundle_version.pk)
        .only("pk", "version", "status")
        if version_key(v.version) < key
    ]
    return max(earlier, key=lambda v: version_key(v.version), default=None)


def version_review(bundle_version: BundleVersion, user) -> VersionReview:
    """Everything the page shows, in a bounded number of queries whatever the size."""
    base = review_base(bundle_version, user)
    slug = bundle_version.bundle.slug
    if base is not None:
        comparison = bundle_compare(
            user=user, slug=slug, before=base.version, after=bundle_version.version
        )
    else:
        # A first version: everything in it is new; compared with nothing.
        comparison = None
    review = VersionReview(version=bundle_version, base=base, comparison=comparison)
    texts = skill_texts(bundle_version)
    if comparison is not None:
        for change in comparison.skills:
            review.skills.append(
                {
                    "slug": change.slug,
                    "change": change.change,
                    "before": change.before,
                    "after": change.after,
                    "moved": change.moved,
                    "diffs": [
                        {
                            "label": f.label,
                            "diff_html": side_by_side(visible(f.before), visible(f.after)),
                        }
                        for f in change.changed_fields
                    ]
                    if change.change == "changed"
                    else [],
                    "files": file_views(change.files) if change.change == "changed" else [],
                    "text": texts.get(change.slug),
                }
            )
        review.notes_html = (
            side_by_side(comparison.notes.before, comparison.notes.after)
            if comparison.notes.changed
            else ""
        )
    else:
        for slug, text in texts.items():
            review.skills.append(
                {
                    "slug": slug,
                    "change": "added",
                    "before": None,
                    "after": text["version"],
                    "moved": False,
                    "diffs": [],
                    "files": [],
                    "text": text,
                }  # fmt: skip
            )
    review.findings = bundle_version_findings(bundle_version)
    review.undeclared = [f for f in review.findings if f["kind"] in UNDECLARED]
    return review


def skill_texts(bundle_version: BundleVersion) -> dict[str, dict]:
    """Each skill's SKILL.md as a reader sees it, hidden characters written out, in the
    bundle's order (one query; one more when a skill version was never a file and its
    SKILL.md is rendered from its fields)."""
    entries = list(
        BundleSkill.objects.filter(bundle_version=bundle_version)
        .order_by("position", "id")
        .select_related("skill_version__package")
    )
    texts = {}
    for entry in entries:
        version = entry.skill_version
        skill_md = version.skill_md or skill_md_text(skill_spec_of(version))
        texts[version.package.slug] = {
            "position": entry.position,
            "version": version.version,
            "name": version.name,
            "skill_md": visible(skill_md),
            "lines": skill_md.count("\n") + 1 if skill_md else 0,
        }
    return texts
