"""What changed between two versions of a bundle: its skills (each field and file), the
hosts it reaches, the credential names it needs, its notes.

Reads only, for whoever may see both versions (selectors.visible_versions): seven
queries whatever the number of skills, files, hosts or credentials. A skill's changes
use the same pieces as a workspace revision's comparison (skill_history.FieldChange,
content_diff.files_diff).

upgrade_summaries says the same in one line for each (installed, newer) pair, from the
same rules (_content_key, _change, _host_diff, _credential_diff) over keys only: three
queries whatever the number of pairs, skills, hosts or credentials.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import prefetch_related_objects

from pixie.core.errors import ErrorCode, ValidationFailed

from .content_diff import DiffBudget, FileInfo, file_texts_needed, files_diff, frontmatter_text
from .models import Bundle, BundleCredential, BundleHost, BundleSkill, BundleVersion
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
    code = ErrorCode.NO_SUCH_VERSION
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
    *,
    user,
    slug: str,
    before: str | None = None,
    after: str | None = None,
    limited_to: int | None = None,
) -> BundleComparison:
    """Two versions of one bundle the user may see (limited_to: the workspace the request
    is limited to, see selectors.visible_versions). `after` defaults to the newest,
    `before` to the version just before `after` (itself when there is none)."""
    for name, value in (("from", before), ("to", after)):
        if value is not None and ("\x00" in value or len(value) > 64):
            raise ValidationFailed(f"'{name}' must be a version of the bundle, like 2.1.0")
    versions = sorted(
        visible_versions(user, limited_to=limited_to)
        .filter(bundle__slug=slug)
        .select_related("bundle__publisher"),
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
        if _change(_content_key(a.pk, a.digest), _content_key(b.pk, b.digest)) is None:
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
    return _host_diff(
        {(h.host, h.port): h.purpose for h in old.hosts.all()},
        {(h.host, h.port): h.purpose for h in new.hosts.all()},
    )


def _host_diff(before: dict, after: dict) -> list[dict]:
    """before, after: {(host, port): purpose}."""
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

    return _credential_diff(facts(old), facts(new))


def _credential_diff(before: dict, after: dict) -> list[dict]:
    """before, after: {name: {"host": ..., "purpose": ...}}."""
    return [
        {"name": name, "change": change, "before": before.get(name), "after": after.get(name)}
        for name in sorted(before.keys() | after.keys())
        if (change := _change(before.get(name), after.get(name)))
    ]


def _content_key(skill_version_id: int, digest: str) -> str:
    """A skill version's identity: its content digest (the same content is the same skill,
    whatever its label), its row when it has none."""
    return digest or f"#{skill_version_id}"


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


# --- one line per upgrade, for the workspace home -------------------------------------

# A list in a line names at most this many, then says how many more.
LINE_NAMED = 3


@dataclass
class UpgradeSummary:
    """What a newer version changes against an installed one, by content only."""

    version: str  # the newer version's label
    added: list[str]  # skill slugs, in the newer version's order
    removed: list[str]  # in the installed version's order
    changed: list[str]
    hosts: list[dict]  # as BundleComparison.hosts (purposes included)
    credentials: list[dict]  # as BundleComparison.credentials

    @property
    def line(self) -> str:
        """ "2.2.0: adds @payment-plan, changes 1 skill, adds 1 host (payments.example.com)
        and 1 credential (PAYMENTS_API_KEY)"; "1.1.0: changes 1 skill; no new hosts or
        credentials"."""
        parts = []
        for verb, slugs in (("adds", self.added), ("removes", self.removed)):
            if len(slugs) == 1:
                parts.append(f"{verb} @{slugs[0]}")
            elif slugs:
                parts.append(f"{verb} {_counted(slugs, 'skill', '@')}")
        if self.changed:
            parts.append(f"changes {_count(len(self.changed), 'skill')}")
        for verb, change in (("adds", "added"), ("removes", "removed"), ("changes", "changed")):
            hosts = [_host_label(h) for h in self.hosts if h["change"] == change]
            names = [c["name"] for c in self.credentials if c["change"] == change]
            items = [
                _counted(listed, noun)
                for listed, noun in ((hosts, "host"), (names, "credential"))
                if listed
            ]
            if items:
                parts.append(f"{verb} {' and '.join(items)}")
        if not parts:
            return f"{self.version}: the same skills, hosts and credentials"
        line = f"{self.version}: {', '.join(parts)}"
        new = [x for x in (*self.hosts, *self.credentials) if x["change"] == "added"]
        return line if new else f"{line}; no new hosts or credentials"


def upgrade_summaries(
    pairs: Iterable[tuple[int, int, str]],
) -> dict[tuple[int, int], UpgradeSummary]:
    """For each (installed version id, newer version id, newer label), what the newer
    version changes, keyed by the two ids. Workspace-independent: the caller says which
    versions the reader may see. Three queries whatever the number of pairs, skills, hosts
    or credentials (keys and purposes only, no skill body); none without a pair."""
    pairs = list(pairs)
    if not pairs:
        return {}
    ids = {pk for old, new, _ in pairs for pk in (old, new)}
    skills: dict[int, dict[str, str]] = defaultdict(dict)
    for version_id, slug, skill_version_id, digest in (
        BundleSkill.objects.filter(bundle_version_id__in=ids)
        .order_by("bundle_version_id", "position", "id")
        .values_list(
            "bundle_version_id",
            "skill_version__package__slug",
            "skill_version_id",
            "skill_version__digest",
        )  # fmt: skip
    ):
        skills[version_id][slug] = _content_key(skill_version_id, digest)
    hosts: dict[int, dict] = defaultdict(dict)
    for version_id, host, port, purpose in BundleHost.objects.filter(
        bundle_version_id__in=ids
    ).values_list("bundle_version_id", "host", "port", "purpose"):
        hosts[version_id][(host, port)] = purpose
    credentials: dict[int, dict] = defaultdict(dict)
    for version_id, name, host, purpose in BundleCredential.objects.filter(
        bundle_version_id__in=ids
    ).values_list("bundle_version_id", "name", "host", "purpose"):
        credentials[version_id][name] = {"host": host, "purpose": purpose}
    summaries = {}
    for old, new, label in pairs:
        before, after = skills[old], skills[new]
        changes: dict[str, list[str]] = {"added": [], "removed": [], "changed": []}
        for slug in [*after, *(s for s in before if s not in after)]:
            change = _change(before.get(slug), after.get(slug))
            if change:
                changes[change].append(slug)
        summaries[(old, new)] = UpgradeSummary(
            version=label,
            **changes,
            hosts=_host_diff(hosts[old], hosts[new]),
            credentials=_credential_diff(credentials[old], credentials[new]),
        )
    return summaries


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _counted(names: list[str], noun: str, prefix: str = "") -> str:
    """ "2 hosts (a.example.com, b.example.com)", "5 skills (@a, @b, @c, …)"."""
    shown = ", ".join(f"{prefix}{name}" for name in names[:LINE_NAMED])
    more = ", …" if len(names) > LINE_NAMED else ""
    return f"{_count(len(names), noun)} ({shown}{more})"


def _host_label(host: dict) -> str:
    return host["host"] if host["port"] == 443 else f"{host['host']}:{host['port']}"
