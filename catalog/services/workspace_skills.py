"""A workspace's own skills: create, edit (a new revision), rename with cascade.

The namespace rules live in pixie.core.namespace.engine; these functions load rows, call
it, and write the result in one audited transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import reversion
from django.db.models import Max

from catalog.models import SkillRevision, SkillVersion, Tool, WorkspaceSkill
from catalog.skill_history import RevisionMissing
from catalog.validators import NAME_MAX, SKILL_DESCRIPTION_MAX, body_too_large
from pixie.core.audit.records import audited
from pixie.core.errors import ValidationFailed
from pixie.core.names import name_problem
from pixie.core.namespace.engine import apply_rename, is_slug, mention_set, parse_mentions
from pixie.core.people.permissions import require_owner

from .revision_files import revision_files_from_revisions, revision_files_from_versions

KEEP = object()  # skill_edit: keep the head's upstream


def taken_slugs(*, workspace) -> set[str]:
    """Every slug a new skill in this workspace may not take: its skills and the tools."""
    skills = WorkspaceSkill.objects.filter(workspace=workspace).values_list("slug", flat=True)
    return set(skills) | set(Tool.objects.values_list("slug", flat=True))


def _check_content(name: str, short_description: str, body: str) -> None:
    problems = []
    if not isinstance(name, str) or not name.strip():
        problems.append("name must not be empty")
    elif len(name) > NAME_MAX:
        problems.append(f"name is {len(name)} characters; the limit is {NAME_MAX}")
    elif problem := name_problem(name):
        problems.append(f"name {problem}")
    if not isinstance(short_description, str) or len(short_description) > SKILL_DESCRIPTION_MAX:
        problems.append(
            f"short description must be text of at most {SKILL_DESCRIPTION_MAX} characters"
        )
    if not isinstance(body, str) or not body.strip():
        problems.append("body must not be empty")
    elif too_large := body_too_large(body):
        problems.append(f"body {too_large}")
    if any("\x00" in str(v) for v in (name, short_description, body)):
        problems.append("text must not contain NUL characters")
    if problems:
        raise ValidationFailed(problems)


@dataclass(frozen=True)
class NewSkill:
    """One skill for skills_create: its slug and first revision's content."""

    slug: str
    name: str
    short_description: str
    body: str
    upstream: SkillVersion | None = None
    approvals: list | None = None
    frontmatter: dict | None = None
    enabled: bool = True
    advertised: bool = True
    installation: object = None


def skill_create(*, workspace, slug: str, actor, origin: str = "local", comment: str = "",
                 **content) -> WorkspaceSkill:  # fmt: skip
    """One new skill (content: NewSkill's fields) with its first revision."""
    new = NewSkill(slug=slug, **content)
    comment = comment or f"Created skill @{slug}"
    return skills_create(
        workspace=workspace, skills=[new], actor=actor, origin=origin, comment=comment
    )[0]


def skills_create(
    *,
    workspace,
    skills: Sequence[NewSkill],
    actor,
    origin: str = "local",
    comment: str = "",
    refusal: str = "{problem}",
) -> list[WorkspaceSkill]:
    """New skills, each with revision 1: all checked first, then written with bulk
    inserts in one audited transaction, whatever their number.

    ``refusal`` words each problem; it may name the skill as {slug}.
    """
    problems = []
    taken = taken_slugs(workspace=workspace)
    for new in skills:
        found = []
        if not is_slug(new.slug):
            found.append(f"{new.slug!r} is not a valid slug")
        elif new.slug in taken:
            found.append(f"@{new.slug} is already taken in {workspace} (by a skill or a tool)")
        taken.add(new.slug)
        try:
            _check_content(new.name, new.short_description, new.body)
        except ValidationFailed as exc:
            found.extend(exc.problems)
        problems += [refusal.format(slug=new.slug, problem=problem) for problem in found]
    if problems:
        raise ValidationFailed(problems)
    with audited(actor=actor, comment=comment):
        made = WorkspaceSkill.objects.bulk_create(
            WorkspaceSkill(
                workspace=workspace,
                slug=new.slug,
                enabled=new.enabled,
                advertised=new.advertised,
                installation=new.installation,
            )
            for new in skills
        )
        revisions = SkillRevision.objects.bulk_create(
            SkillRevision(
                skill=skill,
                number=1,
                name=new.name,
                short_description=new.short_description.strip(),
                body=new.body,
                approvals=new.approvals or [],
                frontmatter=new.frontmatter or {},
                upstream=new.upstream,
                origin=origin,
                created_by=actor,
                comment=comment,
            )
            for skill, new in zip(made, skills, strict=True)
        )
        for skill, revision in zip(made, revisions, strict=True):
            skill.head = revision
        WorkspaceSkill.objects.bulk_update(made, ["head"])
        # Bulk writes send no signals: put the rows in the history by hand.
        for row in (*made, *revisions):
            reversion.add_to_revision(row)
    return made


def skill_edit(
    *,
    skill: WorkspaceSkill,
    actor,
    name: str | None = None,
    short_description: str | None = None,
    body: str | None = None,
    upstream: SkillVersion | None | object = KEEP,
    comment: str = "",
) -> SkillRevision:
    """A new head revision. A local edit keeps the upstream it was based on, so
    the skill becomes a fork; an upgrade passes the new catalog version.

    Editing to identical content writes nothing and returns the head.
    """
    with audited(actor=actor, comment=comment or f"Edited skill @{skill.slug}"):
        locked = _locked_with_head(skill)
        head = locked.head
        new_name = head.name if name is None else name
        new_short = head.short_description if short_description is None else short_description
        new_body = head.body if body is None else body
        _check_content(new_name, new_short, new_body)
        new_upstream = head.upstream if upstream is KEEP else upstream
        if (new_name, new_short.strip(), new_body, new_upstream) == (
            head.name,
            head.short_description,
            head.body,
            head.upstream,
        ):
            return head
        revision = _new_revision(
            locked,
            actor=actor,
            name=new_name,
            short_description=new_short.strip(),
            body=new_body,
            approvals=new_upstream.approvals
            if upstream is not KEEP and new_upstream
            else head.approvals,
            frontmatter=(
                new_upstream.frontmatter
                if upstream is not KEEP and new_upstream
                else head.frontmatter
            ),
            upstream=new_upstream,
            origin="local",
            comment=comment,
            files_of=new_upstream if upstream is not KEEP and new_upstream else head,
        )
    skill.head = revision
    return revision


def skill_restore(*, skill: WorkspaceSkill, number: int, actor) -> SkillRevision:
    """Make an earlier revision's text and files the skill's latest again: a new local
    edit on top of the head, recorded like any edit (history only grows; nothing old is
    saved back). The skill keeps the head's catalog upstream, so a later upgrade sees
    the restored text as a fork of it. Restoring what the head already holds writes
    nothing and returns the head.
    """
    comment = f"Restored @{skill.slug} revision {number}"
    with audited(actor=actor, comment=comment):
        locked = _locked_with_head(skill)
        old = locked.revisions.filter(number=number).first()
        if old is None:
            raise RevisionMissing(locked, [number])
        head = locked.head
        if _same_text(old, head) and _file_identities(old) == _file_identities(head):
            return head
        # A mention of a skill renamed or removed since would dangle: say so instead.
        gone = sorted(mention_set(old.body) - taken_slugs(workspace=locked.workspace_id))
        if gone:
            raise ValidationFailed(
                [f"revision {number} mentions @{slug}, which is no longer a skill or tool "
                 "here (renamed or removed since); edit the text instead" for slug in gone]
            )  # fmt: skip
        revision = _new_revision(
            locked,
            actor=actor,
            name=old.name,
            short_description=old.short_description,
            body=old.body,
            approvals=old.approvals,
            frontmatter=old.frontmatter,
            upstream=head.upstream,
            origin="local",
            comment=comment,
            files_of=old,
        )
    skill.head = revision
    return revision


def _locked_with_head(skill: WorkspaceSkill) -> WorkspaceSkill:
    """The skill's row, locked for a new revision, with its head."""
    locked = WorkspaceSkill.objects.select_for_update().get(pk=skill.pk)
    # The head is read after the lock, in a statement of its own. Joined to the locking
    # statement, a head another writer had just committed was not in that statement's
    # snapshot: PostgreSQL re-read the locked row but joined it to nothing (head None).
    locked.head  # noqa: B018  (loads it now, inside the lock)
    return locked


def _same_text(a: SkillRevision, b: SkillRevision) -> bool:
    fields = ("name", "short_description", "body", "approvals", "frontmatter")
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def _file_identities(revision: SkillRevision) -> set[tuple]:
    return set(revision.files.values_list("path", "blob_id", "executable"))


def _new_revision(
    skill: WorkspaceSkill, *, files_of: SkillRevision | SkillVersion | None, **fields
) -> SkillRevision:
    """The next revision, carrying the supporting files of ``files_of``."""
    number = (skill.revisions.aggregate(top=Max("number"))["top"] or 0) + 1
    revision = SkillRevision.objects.create(
        skill=skill, number=number, created_by=fields.pop("actor"), **fields
    )
    if isinstance(files_of, SkillVersion):
        revision_files_from_versions([(revision, files_of.pk)])
    elif files_of is not None:
        revision_files_from_revisions([(revision, files_of.pk)])
    WorkspaceSkill.objects.filter(pk=skill.pk).update(head=revision)
    skill.head = revision
    if reversion.is_active():  # the skill's own History shows the edit, not only its revision
        reversion.add_to_revision(skill)
    return revision


def skill_rename(*, skill: WorkspaceSkill, new_slug: str, actor) -> list[str]:
    """Rename a skill and rewrite every mention of it in the workspace's other skills.

    Each rewritten skill gets a new revision, so no reference dangles and the
    history shows why its text changed. Returns the slugs that were rewritten.
    """
    if not is_slug(new_slug):
        raise ValidationFailed(f"{new_slug!r} is not a valid slug")
    old_slug = skill.slug
    if new_slug == old_slug:
        return []
    if new_slug in taken_slugs(workspace=skill.workspace_id):
        raise ValidationFailed(f"@{new_slug} is already taken (by a skill or a tool)")
    comment = f"Renamed @{old_slug} to @{new_slug}"
    with audited(actor=actor, comment=comment):
        locked = WorkspaceSkill.objects.select_for_update().get(pk=skill.pk)
        locked.slug = new_slug
        locked.save(update_fields=["slug"])
        rewritten = []
        # Lock, then read the heads in a statement of their own (see _locked_with_head):
        # a head joined to the locking statement could read as none, and its mention
        # would be left unrewritten.
        ids = list(
            WorkspaceSkill.objects.select_for_update()
            .filter(workspace_id=locked.workspace_id)
            .exclude(pk=locked.pk)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        others = WorkspaceSkill.objects.filter(pk__in=ids).select_related("head").order_by("pk")
        for other in others:
            head = other.head
            if head is None or old_slug not in parse_mentions(head.body):
                continue
            _new_revision(
                other,
                actor=actor,
                name=head.name,
                short_description=head.short_description,
                body=apply_rename(old_slug, new_slug, head.body),
                approvals=head.approvals,
                frontmatter=head.frontmatter,
                upstream=head.upstream,
                origin="rename",
                comment=comment,
                files_of=head,
            )
            rewritten.append(other.slug)
    skill.slug = new_slug
    return rewritten


def is_fork(skill: WorkspaceSkill) -> bool:
    """A skill whose head differs from the catalog version it came from."""
    head = skill.head
    if head is None or head.upstream_id is None:
        return False
    upstream = head.upstream
    return (head.name, head.short_description, head.body) != (
        upstream.name,
        upstream.description,
        upstream.body,
    )


def skill_set_advertised(*, skill: WorkspaceSkill, advertised: bool, actor) -> WorkspaceSkill:
    """Put a skill on the planner's menu, or take it off: an owner's explicit choice."""

    require_owner(user=actor, workspace=skill.workspace)
    if skill.advertised == advertised:
        return skill
    verb = "Promoted" if advertised else "Took off the menu"
    with audited(actor=actor, comment=f"{verb} @{skill.slug}"):
        skill.advertised = advertised
        skill.save(update_fields=["advertised"])
    return skill
