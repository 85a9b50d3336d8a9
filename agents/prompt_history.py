"""What an agent ran, compared between two moments.

The prompt an agent ran at a moment is the one of its latest turn started by then: a turn
records exactly which revision of each skill it used, or the agent's own body, and in
what order (agents.TurnSkill), so nothing here is reconstructed or guessed. The system
prompt is the agent's as history recorded it by then. Two such prompts compare whole, as
text side by side with the changed words marked (the plan page's component), and skill
by skill: added, removed, another revision, its own body now or no longer.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Prefetch
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from reversion.models import Version

from catalog.diff_display import side_by_side
from pixie.core.errors import ErrorCode, ValidationFailed

from .models import Agent, Turn, TurnSkill


@dataclass(frozen=True)
class RanSkill:
    slug: str
    revision: int
    overridden: bool
    body: str


@dataclass
class RanPrompt:
    """The prompt an agent ran at a moment: its turn, system prompt and skills."""

    at: datetime
    turn: Turn | None
    system_prompt: str
    skills: list[RanSkill] = field(default_factory=list)

    @property
    def text(self) -> str:
        parts = [self.system_prompt.strip()]
        for skill in self.skills:
            own = ", the agent's own body" if skill.overridden else ""
            parts.append(f"## @{skill.slug} (revision {skill.revision}{own})\n\n{skill.body}")
        return "\n\n".join(part for part in parts if part) + "\n"


def _system_prompt_at(agent: Agent, at: datetime) -> str:
    """The system prompt history recorded for the agent by ``at`` (its first recorded
    one if none was by then)."""
    recorded = Version.objects.get_for_object(agent).filter(revision__date_created__lte=at)
    version = recorded.only("serialized_data", "format").first()
    return version.field_dict.get("system_prompt", "") if version else agent.system_prompt


def ran_at(agent: Agent, at: datetime) -> RanPrompt:
    """The prompt of the agent's latest turn started by ``at``: three queries."""
    skills = TurnSkill.objects.select_related("revision__skill", "override").order_by("position")
    turn = (
        Turn.objects.filter(agent=agent, started_at__lte=at)
        .order_by("-started_at", "-pk")
        .prefetch_related(Prefetch("turn_skills", queryset=skills))
        .first()
    )
    ran = RanPrompt(at=at, turn=turn, system_prompt=_system_prompt_at(agent, at))
    for used in turn.turn_skills.all() if turn else ():
        ran.skills.append(
            RanSkill(
                slug=used.revision.skill.slug,
                revision=used.revision.number,
                overridden=used.override_id is not None,
                body=used.override.body if used.override else used.revision.body,
            )
        )
    return ran


@dataclass
class PromptComparison:
    before: RanPrompt
    after: RanPrompt
    skills: list[dict]  # slug, change, before and after revision

    @property
    def identical(self) -> bool:
        return self.before.text == self.after.text

    def diff_html(self) -> str:
        return side_by_side(self.before.text, self.after.text)


def _skill_changes(before: RanPrompt, after: RanPrompt) -> list[dict]:
    old = {skill.slug: skill for skill in before.skills}
    new = {skill.slug: skill for skill in after.skills}
    rows = []
    for slug in [*new, *(s for s in old if s not in new)]:
        was, now = old.get(slug), new.get(slug)
        if was is None:
            change = "added"
        elif now is None:
            change = "removed"
        elif (was.revision, was.overridden, was.body) == (now.revision, now.overridden, now.body):
            change = "same"
        elif was.overridden != now.overridden:
            change = "its own body now" if now.overridden else "no longer its own body"
        else:
            change = "changed"
        rows.append({
            "slug": slug,
            "change": change,
            "before": was.revision if was else None,
            "after": now.revision if now else None,
        })  # fmt: skip
    return rows


def moment(value: str, name: str) -> datetime:
    """A moment a reader names: a day (its end: what ran by then) or a date and time."""
    value = (value or "").strip()
    try:  # a day first: fromisoformat would read "2026-12-01" as its midnight
        day = parse_date(value)
        found = None if day else parse_datetime(value)
    except ValueError:
        found = day = None
    if day is not None:
        found = datetime.combine(day, datetime.max.time())
    if found is None:
        shown = value[:40] or "nothing"
        raise ValidationFailed(
            f"{name}: {shown!r} is not a day (2026-12-01) or a moment (2026-12-01T14:30)"
        )
    return timezone.make_aware(found) if timezone.is_naive(found) else found


def first_turn_at(agent: Agent) -> datetime | None:
    turns = Turn.objects.filter(agent=agent).order_by("started_at")
    return turns.values_list("started_at", flat=True).first()


def prompt_compare(
    agent: Agent, *, since: datetime | None = None, until: datetime | None = None
) -> PromptComparison:
    """The prompts the agent ran at two moments, compared; refused when there is nothing
    to compare, saying why. By default from its first turn to now."""
    until = until or timezone.now()
    if since is None:
        since = first_turn_at(agent) or until
    if since > until:
        raise ValidationFailed(
            f"from ({since:%Y-%m-%d %H:%M}) is after to ({until:%Y-%m-%d %H:%M})"
        )
    before, after = ran_at(agent, since), ran_at(agent, until)
    if after.turn is None:
        raise ValidationFailed(
            f"{agent.name} ran no turn by {until:%Y-%m-%d %H:%M}: there is no prompt to compare",
            code=ErrorCode.NO_TURN,
        )
    return PromptComparison(before=before, after=after, skills=_skill_changes(before, after))
