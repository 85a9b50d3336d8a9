"""Skill shares on top of messages: pack a skill and its closure, review, import.

The rules are pixie.core.namespace.engine and pixie.core.skillshare; these functions load the
workspace's rows, call them, and write the result in one audited transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from catalog.finding_rules import guardrail_rules
from catalog.findings import scan_skill
from catalog.models import RevisionFile, SkillRevision, Tool, WorkspaceSkill
from catalog.services.workspace_skills import NewSkill, skills_create
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed
from pixie.core.models import Membership, Workspace
from pixie.core.namespace.engine import closure
from pixie.core.people.permissions import require_owner
from pixie.core.skillshare import (
    MAX_BODY,
    MAX_ITEMS,
    MAX_NAME,
    MAX_SHORT,
    MAX_WIRE_BYTES,
    Item,
    Outcome,
    Share,
    decode,
    encode,
    merge,
)
from pixie.core.skillshare import unresolved_mentions as find_unresolved
from pixie.sharing.models import Contact, Message, ShareImport

from .inbox import OpenedMessage, message_open
from .sending import message_send
from .triage import message_reviewed

FILES_STAY = "Supporting files never travel in a share: the recipient gets the prose only."

# What a share carries per skill, as the specification fixes it: (field, limit).
_SHARE_LIMITS = (("name", MAX_NAME), ("description", MAX_SHORT), ("body", MAX_BODY))


@dataclass
class Traveller:
    """One skill of a share as its sender sees it before sending."""

    item: Item
    files: list[str]  # paths of its supporting files, which stay behind


@dataclass
class SharePreview:
    """What a share of a skill would carry, and why it cannot be sent, if it cannot."""

    skill: WorkspaceSkill
    travellers: list[Traveller]
    problems: list[str]  # one per skill over the share's limits, or the whole share's
    body: str = ""  # the message body, when nothing is refused

    @property
    def refused(self) -> bool:
        return bool(self.problems)

    @property
    def files_stay_behind(self) -> bool:
        return any(traveller.files for traveller in self.travellers)


def _over_limits(item: Item) -> str:
    """The refusal of one skill over a share's limits, or "" when it fits."""
    sizes = {"name": len(item.name), "description": len(item.short_description),
             "body": len(item.detailed_body)}  # fmt: skip
    over = [(name, sizes[name], limit) for name, limit in _SHARE_LIMITS if sizes[name] > limit]
    if not over:
        return ""
    if len(over) == 1:
        name, size, limit = over[0]
        return (
            f"@{item.id} cannot be shared: its {name} is {size:,} characters; "
            f"a share carries at most {limit:,} per skill."
        )
    found = " and ".join(f"its {name} is {size:,} characters" for name, size, _ in over)
    limits = " and ".join(f"{limit:,} characters of {name}" for name, _, limit in over)
    return f"@{item.id} cannot be shared: {found}; a share carries at most {limits} per skill."


def share_preview(*, workspace: Workspace, skill: WorkspaceSkill) -> SharePreview:
    """The skills a share of ``skill`` carries (it and every skill it reaches by
    @-mention), the files each leaves behind, and every reason it cannot be sent.

    A closure too large to walk, or a skill that is not this workspace's current
    one, raises; a skill over a share's limits is named in ``problems``.
    """
    if skill.workspace_id != workspace.pk:
        raise ValidationFailed(f"@{skill.slug} is not a skill of {workspace.name}.")
    if skill.archived_at is not None:
        raise ValidationFailed(f"@{skill.slug} is archived; only a current skill can be shared.")
    live = WorkspaceSkill.objects.filter(workspace=workspace, archived_at__isnull=True)
    skill_slugs = set(live.values_list("slug", flat=True))
    heads: dict[str, SkillRevision] = {}

    def body_of(slug: str) -> str:
        if len(heads) == MAX_ITEMS:
            raise ValidationFailed(
                f"@{skill.slug} reaches more than {MAX_ITEMS - 1} other skills through its "
                f"mentions; a share carries at most {MAX_ITEMS} skills in all."
            )
        heads[slug] = live.select_related("head").get(slug=slug).head
        return heads[slug].body

    order = closure(skill.slug, body_of, skill_slugs.__contains__)
    files: dict[int, list[str]] = {}
    for revision_id, path in (
        RevisionFile.objects.filter(revision__in=[heads[slug] for slug in order])
        .order_by("path")
        .values_list("revision_id", "path")
    ):
        files.setdefault(revision_id, []).append(path)
    travellers = [
        Traveller(
            Item(slug, heads[slug].name, heads[slug].short_description, heads[slug].body),
            files.get(heads[slug].pk, []),
        )
        for slug in order
    ]
    preview = SharePreview(skill, travellers, problems=[])
    preview.problems = [p for p in (_over_limits(t.item) for t in travellers) if p]
    if preview.problems:
        return preview  # nothing is encoded for a share that cannot go
    items = [traveller.item for traveller in travellers]
    body = encode(items[0], items[1:])
    if len(body.encode("utf-8")) > MAX_WIRE_BYTES:
        preview.problems = [
            f"@{skill.slug} and the skills it mentions are too large to share "
            f"(at most {MAX_WIRE_BYTES // 1024} KiB in all)."
        ]
    elif decode(body) is None:
        # The recipient would see plain text, not a share; better to say so now.
        preview.problems = [f"@{skill.slug} cannot be shared: it breaks the share format."]
    else:
        preview.body = body
    return preview


def share_body(*, workspace: Workspace, skill: WorkspaceSkill) -> str:
    """The message body carrying ``skill`` and every skill it reaches by @-mention.

    Every skill is checked against the share's limits first; one over them is
    refused by name, with the field, its length and the limit, before anything
    is sealed.
    """
    preview = share_preview(workspace=workspace, skill=skill)
    if preview.refused:
        raise ValidationFailed(preview.problems, code=ErrorCode.OVER_SHARE_LIMITS)
    return preview.body


def share_send(*, workspace: Workspace, skill: WorkspaceSkill, contact: Contact, actor) -> Message:
    require_owner(user=actor, workspace=workspace)
    body = share_body(workspace=workspace, skill=skill)
    return message_send(
        workspace=workspace,
        contact=contact,
        body=body,
        actor=actor,
        comment=f"Shared skill @{skill.slug} with {contact.name}",
    )


@dataclass
class Review:
    opened: OpenedMessage
    share: Share
    unresolved: list[str]
    can_import: bool
    why_not: str  # why this user cannot import it (a clause), when they cannot
    # What an import would do now (merge run on what the workspace holds, nothing
    # written): the skills it would add, those already here, and the renames.
    preview: dict | None = None
    # What a person should weigh in the skills' text (catalog.findings).
    findings: list[dict] = field(default_factory=list)


def share_findings(share: Share) -> list[dict]:
    """Findings in a share's skills: a share declares no hosts or credentials, so every
    host and credential name its text holds is listed for the reader."""
    rules = guardrail_rules()
    return [
        finding.as_dict()
        for item in share.items
        for finding in scan_skill(skill=item.id, body=item.detailed_body, rules=rules)
    ]


def share_review(*, workspace: Workspace, message: Message, role: str | None) -> Review:
    """Everything the review page shows. Any member may read it; owners may import."""
    opened = message_open(message=message)
    if opened.share is None:
        raise ValidationFailed(
            f"Message {message.pk} carries no skill share.", code=ErrorCode.NOT_A_SHARE
        )
    local = WorkspaceSkill.objects.filter(workspace=workspace).values_list("slug", flat=True)
    unresolved = find_unresolved(opened.share, set(local), _tool_slugs())
    why_not = opened.import_refusal
    if not why_not and role != Membership.Role.OWNER:
        why_not = f"only an owner of {workspace.name} can import it"
    preview = None
    if opened.share_import is None and not opened.outgoing:
        incoming = {item.id for item in opened.share.items}
        preview = outcome_dict(
            merge(opened.share, _LocalSkills(workspace, incoming), _tool_slugs())
        )
    return Review(opened, opened.share, unresolved, not why_not, why_not, preview,
                  share_findings(opened.share))  # fmt: skip


@dataclass
class ImportResult:
    share_import: ShareImport
    repeated: bool  # True when this message had been imported before: nothing changed

    @property
    def outcome(self) -> dict:
        return self.share_import.outcome


def share_import(*, workspace: Workspace, message: Message, actor) -> ImportResult:
    """Merge the share into the workspace's skills; a second import of it is a no-op."""
    require_owner(user=actor, workspace=workspace)
    with audited(actor=actor, comment=f"Imported the skill share in message {message.pk}"):
        # One import or rename at a time per workspace: the merge reads the
        # whole namespace and must write against the namespace it read.
        Workspace.objects.select_for_update().get(pk=workspace.pk)
        locked = Message.objects.select_for_update().get(pk=message.pk, workspace=workspace)
        previous = ShareImport.objects.filter(message=locked).first()
        if previous is not None:
            return ImportResult(previous, repeated=True)
        opened = message_open(message=locked)
        if not opened.can_import:
            raise StateError(f"Message {message.pk} cannot be imported: {opened.import_refusal}.")
        incoming = {item.id for item in opened.share.items}
        outcome = merge(opened.share, _LocalSkills(workspace, incoming), _tool_slugs())
        skills_create(
            workspace=workspace,
            skills=[
                NewSkill(
                    slug=item.id,
                    name=item.name,
                    short_description=item.short_description,
                    body=item.detailed_body,
                    advertised=False,
                )
                for item in outcome.imported
            ],
            actor=actor,
            origin=SkillRevision.Origin.IMPORT,
            comment=f"Imported from {opened.contact.name}",
            refusal="@{slug} cannot be imported: {problem}",
        )
        record = ShareImport.objects.create(
            message=locked, workspace=workspace, imported_by=actor, outcome=outcome_dict(outcome)
        )
        message_reviewed(message=locked)
    return ImportResult(record, repeated=False)


def outcome_dict(outcome: Outcome) -> dict:
    return {
        "imported": [
            {"id": item.id, "name": item.name, "short_description": item.short_description}
            for item in outcome.imported
        ],
        "skipped_identical": list(outcome.skipped_identical),
        "renames": [{"from": old, "to": new} for old, new in outcome.renames],
    }


def outcome_lines(outcome: dict) -> list[str]:
    """The summary in words, as the summary page and the API give it."""
    lines = [
        f"@{rename['from']} was taken — imported as @{rename['to']}."
        for rename in outcome["renames"]
    ]
    if not outcome["imported"]:
        lines.insert(0, "Nothing new — you already had all of this.")
    return lines


def _tool_slugs() -> set[str]:
    return set(Tool.objects.values_list("slug", flat=True))


class _LocalSkills(Mapping):
    """slug -> (name, body) of the workspace's skills, read lazily.

    merge asks whether every candidate slug is taken (a set of slugs answers)
    but needs the content only of the few incoming slugs that collide, so only
    those heads are loaded, not thousands of bodies.
    """

    def __init__(self, workspace: Workspace, incoming: set[str]):
        self._skills = WorkspaceSkill.objects.filter(workspace=workspace).order_by()  # no sort
        self._slugs = set(self._skills.values_list("slug", flat=True))
        # The share's own slugs are the ones whose content merge compares: one query.
        self._content: dict[str, tuple[str, str]] = {
            skill.slug: (skill.head.name, skill.head.body) if skill.head else ("", "")
            for skill in self._skills.filter(slug__in=incoming & self._slugs).select_related("head")
        }

    def __contains__(self, slug: object) -> bool:
        return slug in self._slugs

    def __getitem__(self, slug: str) -> tuple[str, str]:
        if slug not in self._slugs:
            raise KeyError(slug)
        if slug not in self._content:
            head = self._skills.select_related("head").get(slug=slug).head
            self._content[slug] = (head.name, head.body) if head else ("", "")
        return self._content[slug]

    def __iter__(self) -> Iterator[str]:
        return iter(self._slugs)

    def __len__(self) -> int:
        return len(self._slugs)
