"""A workspace skill's revisions: listed, read whole, and any two compared.

Reads only, each a fixed number of queries whatever the number of revisions or files.
A comparison uses the plan's own pieces (plan_core's files_diff and line_diff, and on
the page diff_display's side-by-side diff), so a change reads the same in both places.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Prefetch, QuerySet

from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.web.whole_numbers import whole_number

from .content_diff import FileInfo, file_texts_needed, files_diff, frontmatter_text, line_diff
from .models import RevisionFile, SkillRevision, WorkspaceSkill
from .selectors import blob_texts

# PostgreSQL's integer: a revision number past it names no revision.
NUMBER_MAX = 2**31 - 1
FIELDS = [
    ("name", "Name"),
    ("short_description", "Description"),
    ("frontmatter", "Frontmatter"),
    ("body", "SKILL.md body"),
]


def skill_revisions(skill: WorkspaceSkill) -> QuerySet[SkillRevision]:
    """Every revision of a skill, newest first, with who made it and where it came from."""
    return skill.revisions.select_related("upstream__package", "created_by").order_by("-number")


def revision_summaries(skill: WorkspaceSkill) -> QuerySet[SkillRevision]:
    """skill_revisions without the texts: what a list of revisions shows (number, origin,
    name, who, when, comment), so a long history does not read every body."""
    return skill_revisions(skill).defer("body", "frontmatter", "approvals")


def revision_get(*, skill: WorkspaceSkill, number: int) -> SkillRevision:
    """One revision whole (its files too), or a refusal naming the revisions there are."""
    found = list(
        skill_revisions(skill)
        .filter(number=number)
        .prefetch_related(Prefetch("files", queryset=RevisionFile.objects.order_by("path")))
    )
    if not found:
        raise RevisionMissing(skill, [number])
    return found[0]


@dataclass(frozen=True)
class FieldChange:
    field: str
    label: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def diff(self) -> list[str]:
        return line_diff(self.before, self.after) if self.changed else []


@dataclass
class RevisionComparison:
    skill: WorkspaceSkill
    before: SkillRevision
    after: SkillRevision
    fields: list[FieldChange]
    # content_diff.files_diff entries: each file added, removed or changed
    files: list[dict] = field(default_factory=list)

    @property
    def changed_fields(self) -> list[FieldChange]:
        return [change for change in self.fields if change.changed]

    @property
    def identical(self) -> bool:
        return not self.changed_fields and not self.files


class RevisionMissing(ValidationFailed):
    code = ErrorCode.NO_SUCH_REVISION
    status = 404

    def __init__(self, skill: WorkspaceSkill, numbers: list[int]):
        head = skill.head.number if skill.head_id else 0
        there = f"its revisions are 1 to {head}" if head > 1 else "it has revision 1 only"
        super().__init__([f"@{skill.slug} has no revision {n}; {there}" for n in numbers])


def revision_number(value, name: str) -> int | None:
    """A revision number from a query string ("3"), None when absent; a refusal naming
    the parameter when it is not one."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    number = whole_number(text)
    if number is None or not 1 <= number <= NUMBER_MAX:
        raise ValidationFailed(f"'{name}' must be a revision number (1 or more), not {text!r}")
    return number


def comparison_numbers(skill: WorkspaceSkill, before: int | None, after: int | None):
    """Which two revisions to compare: `after` defaults to the latest, `before` to the
    one before `after` (itself for a first revision)."""
    head = skill.head.number if skill.head_id else 1
    after = head if after is None else after
    before = max(after - 1, 1) if before is None else before
    return before, after


def revision_compare(
    *, skill: WorkspaceSkill, before: int | None = None, after: int | None = None
) -> RevisionComparison:
    """Two revisions of one skill, field by field and file by file (three queries, four
    when a text file changed)."""
    before, after = comparison_numbers(skill, before, after)
    rows = {
        revision.number: revision
        for revision in skill_revisions(skill).filter(number__in={before, after})
    }
    missing = [n for n in dict.fromkeys([before, after]) if n not in rows]
    if missing:
        raise RevisionMissing(skill, missing)
    old, new = rows[before], rows[after]
    files: dict[int, list[FileInfo]] = {old.pk: [], new.pk: []}
    for row in RevisionFile.objects.filter(revision_id__in=files).order_by("path"):
        files[row.revision_id].append(FileInfo.of_row(row))
    old_files, new_files = files[old.pk], files[new.pk]
    texts = blob_texts(file_texts_needed(old_files, new_files))
    return RevisionComparison(
        skill=skill,
        before=old,
        after=new,
        fields=[
            FieldChange(name, label, _field_text(old, name), _field_text(new, name))
            for name, label in FIELDS
        ],
        files=files_diff(old_files, new_files, texts),
    )


def _field_text(revision: SkillRevision, name: str) -> str:
    if name == "frontmatter":
        return frontmatter_text(revision.frontmatter, revision.approvals)
    return getattr(revision, name)
