"""The workspace skills an apply writes (pixie.installer.plan_apply), in bulk: new skills
with their first revisions, new revisions of skills it changes, skills it takes back from
the archive or archives. Called inside the apply's one transaction, under the workspace's
lock; the apply records every row it wrote in its own history entry, so nothing here
opens a revision of its own. Plain data in (catalog's own shapes, not the plan's steps):
catalog knows nothing of plans."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, OuterRef, Subquery

from catalog.models import Installation, SkillRevision, SkillVersion, WorkspaceSkill

from .revision_files import revision_files_from_listing, revision_files_from_versions

# The catalog version's fields a revision copies (its body is the caller's own): what an
# apply reads of each version, not the version's body and SKILL.md twice over.
REVISION_TAKES = ("name", "description", "approvals", "frontmatter")


@dataclass(frozen=True)
class NewSkill:
    """A skill to add: its slug here, the catalog version it comes from, its body (the
    version's, its mentions following skills that land under other slugs)."""

    slug: str
    version: SkillVersion
    body: str


@dataclass(frozen=True)
class SkillChange:
    """A new revision of a skill: the catalog version's (``origin`` "catalog") or a merge
    of it with the workspace's edits (``origin`` "merge", its fields in ``merged``: name,
    description, frontmatter, approvals, body and files; ``merged_body`` alone for a
    merge computed before fields were merged)."""

    skill_id: int
    version: SkillVersion
    body: str
    origin: str = "catalog"
    merged: dict | None = None
    merged_body: str | None = None


def installed_skills_create(
    *, workspace, installation: Installation, skills: list[NewSkill], author, comment: str
) -> tuple[list[WorkspaceSkill], list[SkillRevision]]:
    """Each new skill with its first revision as its head, and the version's files."""
    created = WorkspaceSkill.objects.bulk_create(
        WorkspaceSkill(workspace=workspace, slug=new.slug, installation=installation)
        for new in skills
    )
    revisions = SkillRevision.objects.bulk_create(
        _revision(skill.pk, 1, new.version, new.body, author, comment, "catalog")
        for skill, new in zip(created, skills, strict=True)
    )
    revision_files_from_versions(
        (revision, new.version.pk) for revision, new in zip(revisions, skills, strict=True)
    )
    for skill, revision in zip(created, revisions, strict=True):
        skill.head = revision
    # Each new skill's head is its only revision: one plain UPDATE, not a CASE of 50 arms.
    only_revision = SkillRevision.objects.filter(skill=OuterRef("pk"), number=1).order_by()
    WorkspaceSkill.objects.filter(pk__in=[skill.pk for skill in created]).update(
        head=Subquery(only_revision.values("pk")[:1])
    )
    return created, revisions


def installed_skills_readopt(*, skill_ids: Iterable[int], installation: Installation) -> None:
    """Skills an earlier install archived come back under this installation instead of
    being added twice."""
    WorkspaceSkill.objects.filter(pk__in=list(skill_ids)).update(
        installation=installation, archived_at=None
    )


def installed_skills_revise(
    *, changes: list[SkillChange], author, comment: str
) -> list[SkillRevision]:
    """A new head revision for each change, numbered after the skill's last, with its files
    (the version's, or the merge's own listing)."""
    top = dict(
        SkillRevision.objects.filter(skill_id__in=[c.skill_id for c in changes])
        .values("skill_id")
        .annotate(top=Max("number"))
        .values_list("skill_id", "top")
    )
    revisions = SkillRevision.objects.bulk_create(
        _changed_revision(change, top[change.skill_id] + 1, author, comment)
        for change in changes
    )
    pairs = list(zip(revisions, changes, strict=True))
    revision_files_from_versions(
        (revision, change.version.pk)
        for revision, change in pairs
        if change.origin == "catalog" or change.merged is None
    )
    revision_files_from_listing(
        (revision, change.merged["files"])
        for revision, change in pairs
        if change.origin == "merge" and change.merged is not None
    )
    WorkspaceSkill.objects.bulk_update(
        [WorkspaceSkill(pk=r.skill_id, head_id=r.pk) for r in revisions], ["head"]
    )
    return revisions


def installed_skills_archive(*, skill_ids: list[int], now: datetime) -> None:
    """Skills an uninstall or an upgrade leaves out: archived, their history kept."""
    WorkspaceSkill.objects.filter(pk__in=skill_ids).update(archived_at=now, installation=None)


def _changed_revision(change: SkillChange, number, author, comment) -> SkillRevision:
    revision = _revision(
        change.skill_id, number, change.version, change.body, author, comment, change.origin
    )
    merged = change.merged
    if change.origin == "merge" and merged is None:
        revision.body = change.merged_body
    elif change.origin == "merge":
        revision.name = merged["name"]
        revision.short_description = merged["description"]
        revision.frontmatter = merged["frontmatter"]
        revision.approvals = merged["approvals"]
        revision.body = merged["body"]
    return revision


def _revision(skill_id, number, version, body, author, comment, origin) -> SkillRevision:
    return SkillRevision(
        skill_id=skill_id,
        number=number,
        name=version.name,
        short_description=version.description,
        body=body,
        approvals=version.approvals,
        frontmatter=version.frontmatter,
        upstream=version,
        origin=origin,
        created_by=author,
        comment=comment,
    )
