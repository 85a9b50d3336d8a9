"""An agent's skills and turns. Every change is owner-only and audited."""

from __future__ import annotations

from dataclasses import dataclass

import reversion
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from catalog.models import SkillRevision, WorkspaceSkill
from catalog.validators import NAME_MAX, body_too_large
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed
from pixie.core.names import name_problem
from pixie.core.namespace.engine import is_slug
from pixie.core.people.permissions import require_owner

from .models import Agent, AgentSkill, AgentSkillOverride, Turn, TurnSkill


def _owner(actor, agent: Agent) -> None:
    require_owner(user=actor, workspace=agent.workspace)


PROMPT_MAX = 8000  # the system prompt's limit (Agent.system_prompt)


def _agent_problems(*, name: str, system_prompt: str) -> list[str]:
    problems = []
    if not name.strip():
        problems.append("Give the agent a name")
    elif len(name) > NAME_MAX:
        problems.append(f"The name is {len(name)} characters; at most {NAME_MAX}")
    elif problem := name_problem(name):
        problems.append(f"The name {problem}")
    if len(system_prompt) > PROMPT_MAX:
        problems.append(
            f"The system prompt is {len(system_prompt):,} characters; at most {PROMPT_MAX:,}"
        )
    return problems


def agent_create(*, workspace, slug: str, name: str, actor, system_prompt: str = "") -> Agent:
    """A new agent of the workspace, with no skills yet (an install, or its page, gives
    it some). Owners only; nothing is made unless everything given is valid."""
    require_owner(user=actor, workspace=workspace)
    problems = _agent_problems(name=name, system_prompt=system_prompt)
    if not is_slug(slug):
        problems.insert(
            0,
            f"The slug {slug[:70]!r} is not one: lowercase letters, digits and hyphens, "
            "starting with a letter or digit, at most 64",
        )
    if problems:
        raise ValidationFailed(problems)
    taken = ValidationFailed(
        f"{workspace.name} already has an agent {slug!r}; choose another slug",
        code=ErrorCode.AGENT_TAKEN,
    )
    if Agent.objects.filter(workspace=workspace, slug=slug).exists():
        raise taken
    try:
        with audited(actor=actor, comment=f"Created agent {name.strip()} ({slug})"):
            return Agent.objects.create(
                workspace=workspace, slug=slug, name=name.strip(), system_prompt=system_prompt
            )
    except IntegrityError:  # another request made it in the meantime
        raise taken from None


def agent_update(
    *, agent: Agent, actor, name: str | None = None, system_prompt: str | None = None
) -> Agent:
    """Rename the agent or change its system prompt (its slug, which clients use, stays)."""
    _owner(actor, agent)
    name = agent.name if name is None else name
    system_prompt = agent.system_prompt if system_prompt is None else system_prompt
    problems = _agent_problems(name=name, system_prompt=system_prompt)
    if problems:
        raise ValidationFailed(problems)
    said = [
        words
        for words, changed in (
            (f"renamed {agent.name} to {name.strip()}", name.strip() != agent.name),
            ("changed its system prompt", system_prompt != agent.system_prompt),
        )
        if changed
    ]
    if not said:
        return agent
    with audited(actor=actor, comment=f"Agent {agent.slug}: {'; '.join(said)}"):
        agent.name, agent.system_prompt = name.strip(), system_prompt
        agent.save(update_fields=["name", "system_prompt"])
    return agent


def agent_skill_attach(
    *, agent: Agent, skill: WorkspaceSkill, actor, pinned: bool = True
) -> AgentSkill:
    """Add a skill at the end of the agent's list, pinned to its head or following it."""
    _owner(actor, agent)
    if skill.workspace_id != agent.workspace_id:
        raise ValidationFailed(f"@{skill.slug} is not a skill of {agent.workspace.name}")
    if skill.archived_at is not None:
        raise ValidationFailed(f"@{skill.slug} is archived; install or restore it first")
    if AgentSkill.objects.filter(agent=agent, skill=skill).exists():
        raise ValidationFailed(
            f"{agent.name} already has @{skill.slug}", code=ErrorCode.ALREADY_ATTACHED
        )
    with audited(actor=actor, comment=f"Attached @{skill.slug} to {agent.name}"):
        last = AgentSkill.objects.filter(agent=agent).aggregate(top=Max("position"))["top"] or 0
        return AgentSkill.objects.create(
            agent=agent,
            skill=skill,
            position=last + 1,
            pinned_revision_id=skill.head_id if pinned else None,
        )


def agent_skill_detach(*, attachment: AgentSkill, actor) -> None:
    """Take the skill off the agent, with the agent's own bodies for it unless a turn ran
    one (a turn keeps exactly what it ran: then disable the skill instead)."""
    _owner(actor, attachment.agent)
    slug = attachment.skill.slug
    if TurnSkill.objects.filter(override__agent_skill=attachment).exists():
        raise ValidationFailed(
            f"Turns of {attachment.agent.name} ran with its own body for @{slug}, and a turn "
            "keeps exactly what it ran: disable the skill instead of detaching it",
            code=ErrorCode.OVERRIDE_IN_USE,
        )
    with audited(actor=actor, comment=f"Detached @{slug} from {attachment.agent}"):
        # The attachment names its latest override, which it takes with it.
        AgentSkill.objects.filter(pk=attachment.pk).update(override=None)
        attachment.delete()
        # The ones after it move up one: the agent's skills stay numbered 1, 2, 3, ...
        AgentSkill.objects.filter(
            agent_id=attachment.agent_id, position__gt=attachment.position
        ).update(position=F("position") - 1)
        # A deleted row has no version of its own: the agent's history records the detach.
        reversion.add_to_revision(attachment.agent)


def agent_skills_reorder(*, agent: Agent, slugs: list[str], actor) -> list[AgentSkill]:
    """Put the agent's skills in exactly this order (every attached slug, once)."""
    _owner(actor, agent)
    with audited(actor=actor, comment=f"Reordered the skills of {agent.name}"):
        attachments = list(
            AgentSkill.objects.select_for_update(of=("self",))
            .filter(agent=agent)
            .select_related("skill")
        )
        by_slug = {a.skill.slug: a for a in attachments}
        if sorted(slugs) != sorted(by_slug) or len(set(slugs)) != len(slugs):
            raise ValidationFailed(
                "Give every attached skill exactly once: " + ", ".join(sorted(by_slug)),
                code=ErrorCode.BAD_ORDER,
            )
        for position, slug in enumerate(slugs, start=1):
            by_slug[slug].position = position
        AgentSkill.objects.bulk_update(attachments, ["position"])
        for moved in attachments:  # bulk_update saves no versions: history records each
            moved.agent = agent  # named in its history, read once
            reversion.add_to_revision(moved)
        return [by_slug[slug] for slug in slugs]


def agent_skill_move(*, attachment: AgentSkill, direction: str, actor) -> None:
    """Swap with the neighbour above ('up') or below ('down')."""
    ordered = list(
        AgentSkill.objects.filter(agent_id=attachment.agent_id)
        .order_by("position", "id")
        .values_list("skill__slug", flat=True)
    )
    index = ordered.index(attachment.skill.slug)
    other = index - 1 if direction == "up" else index + 1
    if direction not in ("up", "down"):
        raise ValidationFailed("direction must be up or down")
    if 0 <= other < len(ordered):
        ordered[index], ordered[other] = ordered[other], ordered[index]
    agent_skills_reorder(agent=attachment.agent, slugs=ordered, actor=actor)


def agent_skill_update(
    *,
    attachment: AgentSkill,
    actor,
    enabled: bool | None = None,
    pin: int | bool | None = None,
) -> AgentSkill:
    """Switch an attachment on or off; pin it (True: the head, or a revision number)
    or let it follow the latest (False)."""
    _owner(actor, attachment.agent)
    fields = []
    if enabled is not None:
        attachment.enabled = bool(enabled)
        fields.append("enabled")
    if pin is not None:
        if pin is False:
            attachment.pinned_revision = None
        else:
            number = attachment.skill.head.number if pin is True else pin
            revision = SkillRevision.objects.filter(skill=attachment.skill, number=number).first()
            if revision is None:
                raise ValidationFailed(f"@{attachment.skill.slug} has no revision {number}")
            attachment.pinned_revision = revision
        fields.append("pinned_revision")
    if fields:
        comment = f"Changed @{attachment.skill.slug} on {attachment.agent.name}"
        with audited(actor=actor, comment=comment):
            attachment.save(update_fields=fields)
    return attachment


def agent_skill_override(*, attachment: AgentSkill, body: str | None, actor) -> AgentSkill:
    """Give this agent its own body for the skill (a new override revision), or clear it."""
    _owner(actor, attachment.agent)
    slug = attachment.skill.slug
    if body is None:
        with audited(actor=actor, comment=f"Cleared the override of @{slug} on {attachment.agent}"):
            attachment.override = None
            attachment.save(update_fields=["override"])
        return attachment
    if not isinstance(body, str) or not body.strip():
        raise ValidationFailed("An override needs a body; clear it instead to use the skill's")
    if too_large := body_too_large(body):
        raise ValidationFailed(f"The override {too_large}")
    with audited(actor=actor, comment=f"Overrode @{slug} for {attachment.agent.name}"):
        top = attachment.override_revisions.aggregate(top=Max("number"))["top"] or 0
        attachment.override = AgentSkillOverride.objects.create(
            agent_skill=attachment, number=top + 1, body=body, created_by=actor
        )
        attachment.save(update_fields=["override"])
    return attachment


def turn_start(*, agent: Agent) -> Turn:
    """Record the exact revisions every enabled attachment resolves to right now."""
    attachments = (
        AgentSkill.objects.filter(agent=agent, enabled=True, skill__archived_at__isnull=True)
        .select_related("skill")
        .order_by("position", "id")
    )
    with transaction.atomic():
        turn = Turn.objects.create(agent=agent)
        TurnSkill.objects.bulk_create(
            TurnSkill(
                turn=turn,
                revision_id=a.pinned_revision_id or a.skill.head_id,
                override_id=a.override_id,
                position=position,
            )
            for position, a in enumerate(attachments, start=1)
        )
    return turn


def turn_finish(*, turn: Turn, outcome: str) -> Turn:
    if outcome not in (Turn.Outcome.SUCCEEDED, Turn.Outcome.FAILED):
        raise ValidationFailed("outcome must be succeeded or failed")
    moved = Turn.objects.filter(pk=turn.pk, outcome=Turn.Outcome.RUNNING).update(
        outcome=outcome, finished_at=timezone.now()
    )
    if moved != 1:
        raise StateError(f"Turn #{turn.pk} has already finished", code=ErrorCode.ALREADY_FINISHED)
    turn.refresh_from_db()
    return turn


# --- what an apply writes (pixie.installer.plan_apply) -----------------------------------
# In bulk, inside the apply's one transaction under the workspace's lock; the apply
# records the rows in its own history entry.


@dataclass(frozen=True)
class Attachment:
    """Skills to add at the end of an agent's list, in order, each pinned to its head or
    following it (``follows``)."""

    agent_id: int
    slugs: tuple[str, ...]
    follows: bool = False


def agent_skills_attach_bulk(*, workspace, attachments: list[Attachment]) -> list[AgentSkill]:
    """Add each attachment's skills after the agent's last, in one INSERT. A skill an agent
    already has is refused in words (StateError), before anything is written."""
    if not attachments:
        return []
    slugs = {slug for a in attachments for slug in a.slugs}
    skills = {
        slug: (skill_id, head_id)
        for skill_id, slug, head_id in WorkspaceSkill.objects.filter(
            workspace=workspace, slug__in=slugs
        ).values_list("id", "slug", "head_id")
    }
    agent_ids = [a.agent_id for a in attachments]
    wanted = {(a.agent_id, skills[slug][0]) for a in attachments for slug in a.slugs}
    for agent_id, skill_id, agent, slug in AgentSkill.objects.filter(
        agent_id__in=agent_ids, skill_id__in={skill_id for _, skill_id in wanted}
    ).values_list("agent_id", "skill_id", "agent__name", "skill__slug"):
        if (agent_id, skill_id) in wanted:
            raise StateError(
                f"@{slug} is already attached to {agent}", code=ErrorCode.ALREADY_ATTACHED
            )
    last = dict(
        AgentSkill.objects.filter(agent_id__in=agent_ids)
        .order_by()  # else the default ordering joins every agent into the GROUP BY
        .values("agent_id")
        .annotate(top=Max("position"))
        .values_list("agent_id", "top")
    )
    rows = []
    for a in attachments:
        start = (last.get(a.agent_id) or 0) + 1
        for offset, slug in enumerate(a.slugs):
            skill_id, head_id = skills[slug]
            rows.append(
                AgentSkill(
                    agent_id=a.agent_id,
                    skill_id=skill_id,
                    position=start + offset,
                    pinned_revision_id=None if a.follows else head_id,
                )
            )
    return AgentSkill.objects.bulk_create(rows)


def agent_skills_detach_everywhere(*, skill_ids: list[int]) -> None:
    """Skills leaving the workspace leave every agent that held them."""
    AgentSkill.objects.filter(skill_id__in=skill_ids).delete()
