"""What changed between two versions of a bundle: its skills (each field and file), the
hosts it reaches, the credential names it needs, its notes.

Reads only, for whoever may see both versions (selectors.visible_versions): seven
queries whatever the number of skills, files, hosts or credentials. A skill's changes
use the same pieces as a workspace revision's comparison (skill_history.FieldChange,
content_diff.files_diff).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import prefetch_related_objects

from pixie.errors import ValidationFailed

from .content_diff import DiffBudget, FileInfo, file_texts_needed, files_diff, frontmatter_text
from .models import Bundle, BundleVersion
from .selectors import CONTENTS, SKILL_FILES, blob_texts, visible_versions
from .skill_history import FieldChange
from .validators import version_key

SKILL_FIELDS = [
    ("name", "Name"),
    ("description", "Description"),
    ("frontmatter", "Frontmatter"),
    ("body", "SKILL.md body"),
]
# A refusal names at most this many of the versions there are.
NAMED_MAX = 20


@dataclass
class SkillChange:
    slug: str
    change: str  # added, removed, changed, unchanged
    before: str | None  # the skill version's label ("2.1.0"), None when added
    after: str | None
    fields: list[FieldChange] = field(default_factory=list)
    files: list[dict] = field(default_factory=list)
    moved: bool = False  # its place in the bundle's order changed

    @property
    def changed_fields(self) -> list[FieldChange]:
        return [change for change in self.fields if change.changed]


@dataclass
class BundleComparison:
    bundle: Bundle
    before: BundleVersion
    after: BundleVersion
    skills: list[SkillChange]
    hosts: list[dict]  # {host, port, change, before, after}: purposes
    credentials: list[dict]  # {name, change, before, after}: {host, purpose}
    notes: FieldChange

    @property
    def identical(self) -> bool:
        changed = [s for s in self.skills if s.change != "unchanged" or s.moved]
        return not (changed or self.hosts or self.credentials or self.notes.changed)


class VersionMissing(ValidationFailed):
    code = "no_such_version"
    status = 404

    def __init__(self, slug: str, wanted: list[str], there: list[str]):
        shown = ", ".join(there[-NAMED_MAX:])
        more = f" (and {len(there) - NAMED_MAX} earlier)" if len(there) > NAMED_MAX else ""
        super().__init__(
            [
                f"Bundle {slug} has no version {v!r} you can see; its versions are {shown}{more}"
                for v in wanted
            ]  # fmt: skip
        )


def bundle_compare(
    *, user, slug: str, before: str | None = None, after: str | None = None
) -> BundleComparison:
    """Two versions of one bundle the user may see. `after` defaults to the newest,
    `before` to the version just before `after` (itself when there is none)."""
    for name, value in (("from", before), ("to", after)):
        if value is not None and ("\x00" in value or len(value) > 64):
            raise ValidationFailed(f"'{name}' must be a version of the bundle, like 2.1.0")
    versions = sorted(
        visible_versions(user).filter(bundle__slug=slug).select_related("bundle__publisher"),
        key=lambda v: version_key(v.version),
    )
    if not versions:
        raise VersionMissing(slug, [after or before or "any"], [])
    by_label = {v.version: v for v in versions}
    labels = [v.version for v in versions]
    after = labels[-1] if after in (None, "") else after
    if before in (None, "") and after in by_label:
        index = labels.index(after)
        before = labels[max(index - 1, 0)]
    missing = [v for v in dict.fromkeys([before, after]) if v not in by_label]
    if missing:
        raise VersionMissing(slug, missing, labels)
    old, new = by_label[before], by_label[after]
    prefetch_related_objects([old, new], *CONTENTS, SKILL_FILES)
    return BundleComparison(
        bundle=new.bundle,
        before=old,
        after=new,
        skills=_skill_changes(old, new),
        hosts=_host_changes(old, new),
        credentials=_credential_changes(old, new),
        notes=FieldChange("notes", "Notes", old.notes, new.notes),
    )


def _skill_changes(old: BundleVersion, new: BundleVersion) -> list[SkillChange]:
    def entries(version):
        ordered = sorted(version.skills.all(), key=lambda e: (e.position, e.id))
        return {e.skill_version.package.slug: (n, e.skill_version) for n, e in enumerate(ordered)}

    before, after = entries(old), entries(new)
    # Moved: its place among the skills both versions hold changed (a skill added or
    # removed around it moves nothing).
    both = [slug for slug in before if slug in after]
    rank_before = {slug: n for n, slug in enumerate(both)}
    rank_after = {slug: n for n, slug in enumerate(sorted(both, key=lambda s: after[s][0]))}
    pairs = []
    for slug in [*after, *(s for s in before if s not in after)]:
        a, b = before.get(slug, (None, None))[1], after.get(slug, (None, None))[1]
        pairs.append((slug, a, b))
    files = {
        version.pk: [FileInfo.of_row(f) for f in version.files.all()]
        for _, a, b in pairs
        for version in (a, b)
        if version is not None
    }
    needed = set()
    for _, a, b in pairs:
        if a is not None and b is not None and a.pk != b.pk:
            needed |= file_texts_needed(files[a.pk], files[b.pk])
    texts = blob_texts(needed)
    budget = DiffBudget()  # one budget for the whole comparison's file diffs
    changes = []
    for slug, a, b in pairs:
        if a is None or b is None:
            present = a or b
            changes.append(
                SkillChange(
                    slug,
                    "added" if a is None else "removed",
                    a.version if a else None,
                    b.version if b else None,
                    fields=[
                        FieldChange(n, label, "", _text(present, n)) for n, label in SKILL_FIELDS
                    ]
                    if b
                    else [],  # fmt: skip
                    files=files_diff([], files[b.pk], {}) if b else [],
                )
            )
            continue
        moved = rank_before[slug] != rank_after[slug]
        if a.pk == b.pk:
            changes.append(SkillChange(slug, "unchanged", a.version, b.version, moved=moved))
            continue
        changes.append(
            SkillChange(
                slug,
                "changed",
                a.version,
                b.version,
                fields=[
                    FieldChange(n, label, _text(a, n), _text(b, n)) for n, label in SKILL_FIELDS
                ],  # fmt: skip
                files=files_diff(files[a.pk], files[b.pk], texts, budget),
                moved=moved,
            )
        )
    return changes


def _host_changes(old: BundleVersion, new: BundleVersion) -> list[dict]:
    before = {(h.host, h.port): h.purpose for h in old.hosts.all()}
    after = {(h.host, h.port): h.purpose for h in new.hosts.all()}
    return [
        {
            "host": host,
            "port": port,
            "change": change,
            "before": before.get((host, port)),
            "after": after.get((host, port)),
        }  # fmt: skip
        for (host, port) in sorted(before.keys() | after.keys())
        if (change := _change(before.get((host, port)), after.get((host, port))))
    ]


def _credential_changes(old: BundleVersion, new: BundleVersion) -> list[dict]:
    def facts(version):
        return {c.name: {"host": c.host, "purpose": c.purpose} for c in version.credentials.all()}

    before, after = facts(old), facts(new)
    return [
        {"name": name, "change": change, "before": before.get(name), "after": after.get(name)}
        for name in sorted(before.keys() | after.keys())
        if (change := _change(before.get(name), after.get(name)))
    ]


def _change(before, after) -> str | None:
    if before is None:
        return "added"
    if after is None:
        return "removed"
    return "changed" if before != after else None


def _text(skill_version, name: str) -> str:
    if name == "frontmatter":
        return frontmatter_text(skill_version.frontmatter, skill_version.approvals)
    return getattr(skill_version, name)
