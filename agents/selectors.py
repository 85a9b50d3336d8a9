"""Reads about agents: the composed prompt, the planner's menu, per-skill stats."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Count, F, Q
from django.utils import timezone

from catalog.models import RevisionFile, SkillRevision, Tool
from catalog.skill_content import skill_size
from pixie.core.namespace.engine import parse_mentions

from .models import AgentSkill, TurnSkill


@dataclass(frozen=True)
class PromptFile:
    """A supporting file of the skill revision a prompt uses: listed, never inlined."""

    path: str
    size: int
    executable: bool

    @property
    def about(self) -> str:
        return f"({self.size:,} bytes{', executable' if self.executable else ''})"

    def __str__(self) -> str:
        return f"{self.path} {self.about}"


@dataclass
class PromptPart:
    slug: str
    name: str
    revision: int
    pinned: bool
    overridden: bool
    body: str
    unresolved: list[str] = field(default_factory=list)
    files: list[PromptFile] = field(default_factory=list)
    latest: int = 0  # the skill's latest revision (its head)

    @property
    def behind(self) -> bool:
        """Pinned to a revision older than the skill's latest: an edit, a merged upgrade or
        a rollback since has not reached this agent (a repoint moves it)."""
        return self.pinned and self.revision < self.latest

    @property
    def pin_words(self) -> str:
        if self.behind:
            return f"pinned behind the latest (r{self.revision} of r{self.latest})"
        return f"pinned, the latest (r{self.revision})" if self.pinned else "follows the latest"

    @property
    def files_line(self) -> str:
        """The line after the body naming the skill's files, or "" when it has none."""
        if not self.files:
            return ""
        return f"Files of @{self.slug} (not inlined): " + ", ".join(map(str, self.files))

    @property
    def text(self) -> str:
        return f"{self.body}\n\n{self.files_line}" if self.files else self.body

    @property
    def tokens(self) -> int:
        """About how many tokens the part adds to the prompt (catalog.skill_content's
        estimate: shown to people, never a limit)."""
        return skill_size(self.text).tokens


@dataclass
class ComposedPrompt:
    system_prompt: str
    parts: list[PromptPart]

    @property
    def text(self) -> str:
        return "\n\n".join([self.system_prompt, *(part.text for part in self.parts)]).strip()

    @property
    def tokens(self) -> int:
        return skill_size(self.text).tokens

    @property
    def system_tokens(self) -> int:
        return skill_size(self.system_prompt).tokens

    @property
    def unresolved(self) -> list[str]:
        seen: dict[str, None] = {}
        for part in self.parts:
            seen.update(dict.fromkeys(part.unresolved))
        return list(seen)


def composed_prompt(agent) -> ComposedPrompt:
    """The agent's system prompt, then its enabled skills in order, each resolved to its
    pinned or latest revision (or this agent's override), with mentions that resolve to
    nothing for this agent flagged, and each followed by the list of its revision's
    supporting files (read for all skills in one query)."""
    attachments = list(
        AgentSkill.objects.filter(agent=agent, skill__archived_at__isnull=True)
        .select_related("skill__head", "pinned_revision", "override")
        .order_by("position", "id")
    )
    enabled = [a for a in attachments if a.enabled]
    known = {a.skill.slug for a in enabled} | set(Tool.objects.values_list("slug", flat=True))
    revisions = [attachment.pinned_revision or attachment.skill.head for attachment in enabled]
    files: dict[int, list[PromptFile]] = {}
    if revisions:
        rows = (
            RevisionFile.objects.filter(revision__in=revisions)
            .order_by("path")
            .values_list("revision_id", "path", "size", "executable")
        )
        for revision_id, path, size, executable in rows:
            files.setdefault(revision_id, []).append(PromptFile(path, size, executable))
    parts = []
    for attachment, revision in zip(enabled, revisions, strict=True):
        body = attachment.override.body if attachment.override else revision.body
        parts.append(
            PromptPart(
                slug=attachment.skill.slug,
                name=revision.name,
                revision=revision.number,
                pinned=attachment.pinned_revision_id is not None,
                overridden=attachment.override_id is not None,
                body=body,
                unresolved=[m for m in parse_mentions(body) if m not in known],
                files=files.get(revision.pk, []),
                latest=attachment.skill.head.number if attachment.skill.head else revision.number,
            )
        )
    return ComposedPrompt(system_prompt=agent.system_prompt, parts=parts)


def planner_menu(agent) -> list[dict]:
    """The one-liners of the agent's enabled, advertised skills: what steers its choices."""
    attachments = (
        AgentSkill.objects.filter(
            agent=agent, enabled=True, skill__advertised=True, skill__archived_at__isnull=True
        )
        .select_related("skill__head", "pinned_revision")
        .order_by("position", "id")
    )
    return [
        {
            "slug": a.skill.slug,
            "line": (a.pinned_revision or a.skill.head).short_description,
        }
        for a in attachments
    ]


def skill_stats(skill) -> list[dict]:
    """Turns that used each revision of the skill in the last 7 and 30 days (one query)."""
    now = timezone.now()
    rows = (
        TurnSkill.objects.filter(
            revision__skill=skill, turn__started_at__gte=now - timedelta(days=30)
        )
        .values("revision__number")
        .annotate(
            last_30_days=Count("turn", distinct=True),
            last_7_days=Count(
                "turn", distinct=True, filter=Q(turn__started_at__gte=now - timedelta(days=7))
            ),
        )
        .order_by("-revision__number")
    )
    return [
        {
            "revision": row["revision__number"],
            "last_7_days": row["last_7_days"],
            "last_30_days": row["last_30_days"],
        }
        for row in rows
    ]


def revisions_of(skill) -> list[SkillRevision]:
    return list(skill.revisions.order_by("-number"))


def pins_behind(workspace, agent_ids=None, installation=None):
    """Attachments pinned to a revision that is no longer their skill's latest: what the
    home's "Agents behind on pins", a repoint plan and an agent's page all read."""
    pins = AgentSkill.objects.filter(
        agent__workspace=workspace,
        pinned_revision__isnull=False,
        skill__archived_at__isnull=True,
    ).exclude(pinned_revision=F("skill__head"))
    if agent_ids:
        pins = pins.filter(agent_id__in=agent_ids)
    if installation is not None:
        pins = pins.filter(skill__installation=installation)
    return pins
