"""Repoint: moving agents' pins to newer revisions, a decision of its own.

An upgrade leaves pinned agents where they were. A repoint plan lists which
attachments move from which revision to which, and which stay (a pin to a
local edit or a fork never moves). Once approved, a task applies it in chunks
under the workspace's lock; each chunk's update only touches rows still on
the old revision, so a rerun after a crash resumes and nothing moves twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import reversion
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from agents.models import AgentSkill
from agents.selectors import pins_behind
from catalog.models import Installation, Plan, SkillRevision
from pixie.core.audit.records import audited
from pixie.core.errors import ValidationFailed
from pixie.core.faults import checkpoint
from pixie.core.models import Workspace
from pixie.core.people.permissions import require_owner

from .plan_notices import notify_plan_waiting
from .plan_state import TRANSIENT_ERRORS, plan_mark_failed
from .steps import RepointMove, RepointStay

CHUNK = 2000  # rows per transaction: a commit per chunk is most of its fixed cost
# Old revisions one pass maps at once (a CASE of as many branches, three times as many
# parameters); a plan that moves more skills takes a pass per this many.
MOVES_PER_SWEEP = 500
MOVABLE_ORIGINS = {SkillRevision.Origin.CATALOG}


def repoint_backlog(*, workspace, installation=None) -> dict:
    """How many attachments (on how many agents) a repoint would move."""
    movable = pins_behind(workspace, installation=installation).filter(
        pinned_revision__origin__in=MOVABLE_ORIGINS
    )
    counts = movable.aggregate(attachments=Count("id"), agents=Count("agent", distinct=True))
    return {"attachments": counts["attachments"] or 0, "agents": counts["agents"] or 0}


def repoint_steps(workspace, agent_ids=None, installation=None) -> list[RepointMove | RepointStay]:
    groups = (
        pins_behind(workspace, agent_ids, installation)
        .values(
            "skill_id",
            "skill__slug",
            "skill__head_id",
            "skill__head__number",
            "pinned_revision_id",
            "pinned_revision__number",
            "pinned_revision__origin",
        )
        .annotate(count=Count("id"), agents=Count("agent", distinct=True))
        .order_by("skill__slug", "pinned_revision__number")
    )
    steps: list[RepointMove | RepointStay] = []
    for group in groups:
        common = {
            "slug": group["skill__slug"],
            "skill_id": group["skill_id"],
            "count": group["count"],
            "agents": group["agents"],
        }
        if group["pinned_revision__origin"] in MOVABLE_ORIGINS:
            steps.append(
                {
                    "type": "repoint.move",
                    **common,
                    "from": group["pinned_revision__number"],
                    "from_revision_id": group["pinned_revision_id"],
                    "to": group["skill__head__number"],
                    "to_revision_id": group["skill__head_id"],
                    "reason": "pinned to a catalog revision an upgrade or a rollback replaced",
                }
            )
        else:
            steps.append(
                {
                    "type": "repoint.stay",
                    **common,
                    "revision": group["pinned_revision__number"],
                    "reason": "pinned to a local edit or a fork; a repoint never moves it",
                }
            )
    return steps


def repoint_create(
    *, workspace, actor, agents=(), installation: Installation | None = None
) -> Plan:
    """A plan to move pins to the latest revisions: all agents, or the chosen ones."""
    require_owner(user=actor, workspace=workspace)
    agent_ids = [getattr(agent, "pk", agent) for agent in agents]
    steps = repoint_steps(workspace, agent_ids, installation)
    moves = [s for s in steps if s["type"] == "repoint.move"]
    if not moves:
        raise ValidationFailed("No pinned attachment is behind; there is nothing to repoint")
    total = sum(s["count"] for s in moves)
    kept = sum(s["count"] for s in steps if s["type"] == "repoint.stay")
    chosen = len(set(agent_ids))
    whose = f"{chosen} chosen agent{'s' if chosen != 1 else ''}" if agent_ids else "all agents"
    summary = (
        f"Changes prose only: moves {total} pinned attachment{'s' if total != 1 else ''} "
        f"to the latest revisions ({whose})"
        + (f"; keeps {kept} pinned to local edits." if kept else ".")
    )
    with audited(actor=actor, comment="Planned a repoint"):
        Plan.objects.filter(
            workspace=workspace, kind=Plan.Kind.REPOINT, status=Plan.State.PROPOSED
        ).update(status=Plan.State.SUPERSEDED, finished_at=timezone.now())
        plan = Plan.objects.create(
            workspace=workspace,
            kind=Plan.Kind.REPOINT,
            installation=installation,
            summary=summary,
            expands_reach=False,
            steps=steps,
            options={"agents": agent_ids},
            progress_total=total,
            created_by=actor,
            second_owner_asked=Workspace.objects.values_list(
                "policy_second_owner", flat=True
            ).get(pk=workspace.pk),
        )
        notify_plan_waiting(plan, asker=actor)
        return plan


def repoint_apply(*, plan_id: int) -> str:
    """Apply the approved repoint chunk by chunk; safe to run again after a crash."""
    Plan.objects.filter(pk=plan_id, status=Plan.State.APPROVED).update(
        status=Plan.State.APPLYING, started_at=timezone.now()
    )
    plan = Plan.objects.select_related("decided_by").get(pk=plan_id)
    if plan.status != Plan.State.APPLYING:
        return plan.status
    agent_ids = plan.options.get("agents") or []
    chunks_moved = 0
    try:
        for sweep in _sweeps([s for s in plan.steps if s["type"] == "repoint.move"]):
            statements = _Statements.of(sweep, agent_ids)
            after = 0  # every row of the sweep up to this id has moved
            while after is not None:
                checkpoint(f"repoint.chunk.{chunks_moved + 1}")
                after, moved = _move_chunk(plan, sweep, statements, chunks_moved + 1, after)
                chunks_moved += bool(moved)
    except TRANSIENT_ERRORS:
        raise  # the task retries; finished chunks stay done
    except Exception as exc:
        plan_mark_failed(plan_id=plan_id, error=str(exc))
        return Plan.State.FAILED
    with transaction.atomic():
        Plan.objects.filter(pk=plan_id, status=Plan.State.APPLYING).update(
            status=Plan.State.APPLIED, finished_at=timezone.now()
        )
    return Plan.State.APPLIED


def _sweeps(moves: list[dict]) -> list[list[dict]]:
    """The moves in groups of at most MOVES_PER_SWEEP, each moved in one pass over the
    attachments in id order, whatever skill a row is of. A pass per skill would visit
    every page of the table and of its indexes once per skill (a fleet's attachments
    interleave skills by id); one pass visits them once, as a plain UPDATE does."""
    return [moves[i : i + MOVES_PER_SWEEP] for i in range(0, len(moves), MOVES_PER_SWEEP)]


@dataclass(frozen=True)
class _Statements:
    """One pass's SQL, written once for all its chunks: the next chunk's id range, its
    move, the progress. Not through the ORM: compiling a When for every move cost more
    than the UPDATE it built (8 ms a chunk for 10 moves, and more with more moves)."""

    next_range: str  # params: behind + [after, CHUNK]
    move: str  # params: to + behind + [after, last]
    progress: str  # params: [moved, plan id]
    to: list
    behind: list

    @classmethod
    def of(cls, sweep: list[dict], agent_ids: list[int]) -> _Statements:
        name = connection.ops.quote_name
        table, pin, pk = name(AgentSkill._meta.db_table), name("pinned_revision_id"), name("id")
        behind = [move["from_revision_id"] for move in sweep] + list(agent_ids)
        where = f"{pin} IN ({', '.join(['%s'] * len(sweep))})"
        if agent_ids:
            where += f" AND {name('agent_id')} IN ({', '.join(['%s'] * len(agent_ids))})"
        if len(sweep) == 1:
            new, to = "%s", [sweep[0]["to_revision_id"]]
        else:
            new = f"CASE {pin} {' '.join(['WHEN %s THEN %s'] * len(sweep))} END"
            to = [i for move in sweep for i in (move["from_revision_id"], move["to_revision_id"])]
        done = name("progress_done")
        # Only names of our own tables and columns, and placeholders, are formatted in.
        return cls(
            next_range=f"SELECT MAX({pk}), COUNT(*) FROM (SELECT {pk} FROM {table} "  # noqa: S608
            f"WHERE {where} AND {pk} > %s ORDER BY {pk} LIMIT %s) AS chunk",
            move=f"UPDATE {table} SET {pin} = {new} WHERE {where} AND {pk} > %s AND {pk} <= %s",  # noqa: S608
            progress=f"UPDATE {name(Plan._meta.db_table)} SET {done} = {done} + %s "  # noqa: S608
            f"WHERE {pk} = %s RETURNING *",
            to=to,
            behind=behind,
        )


def _move_chunk(
    plan: Plan, sweep: list[dict], sql: _Statements, chunk_number: int, after: int
) -> tuple[int | None, int]:
    """Move the next CHUNK attachments (by id, after ``after``) still on the sweep's old
    revisions; return the id to go on after (None once the sweep is done) and how many
    moved."""
    with transaction.atomic():
        Workspace.objects.select_for_update().get(pk=plan.workspace_id)
        with connection.cursor() as cursor:
            # Keyset, not OFFSET or a rescan: each chunk starts where the last one ended,
            # so the hundredth chunk costs what the first did. The chunk is the id range
            # up to its CHUNK-th row; a shorter one holds every row left, and ends the pass.
            cursor.execute(sql.next_range, [*sql.behind, after, CHUNK])
            last, size = cursor.fetchone()
            if last is None:
                return None, 0
            # Only rows still behind move (a rerun after a crash finds the rest moved).
            cursor.execute(sql.move, [*sql.to, *sql.behind, after, last])
            moved = cursor.rowcount
        checkpoint(f"repoint.chunk.{chunk_number}.moved")  # rows moved, progress not yet
        # The progress and the plan as it now stands for its history, in one statement.
        (progressed,) = Plan.objects.raw(sql.progress, [moved, plan.pk])
        # One history entry per chunk, naming the plan, rather than one per row.
        with reversion.create_revision(atomic=False):
            reversion.set_user(plan.decided_by)
            reversion.set_comment(
                f"Repoint plan #{plan.pk}: moved {moved} attachments of {_what(sweep)} "
                f"(chunk {chunk_number})"
            )
            reversion.add_to_revision(progressed)
        return (last if size == CHUNK else None), moved


def _what(batch: list[dict]) -> str:
    if len(batch) == 1:
        return f"@{batch[0]['slug']} r{batch[0]['from']} → r{batch[0]['to']}"
    return f"{len(batch)} skills (@{batch[0]['slug']} … @{batch[-1]['slug']})"


def progress_of(plan: Plan) -> dict:
    """done / total, the rate so far and the time left, for the page and the API."""
    done, total = plan.progress_done, plan.progress_total
    rate = None
    eta = None
    if plan.started_at and done:
        end = plan.finished_at or timezone.now()
        elapsed = max((end - plan.started_at).total_seconds(), 0.001)
        rate = round(done / elapsed, 1)
        eta = round((total - done) / rate, 1) if rate and total > done else 0
    return {"done": done, "total": total, "rate_per_second": rate, "seconds_left": eta}
