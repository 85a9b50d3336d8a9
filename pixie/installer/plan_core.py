"""Plan computation as a pure function over plain data (no database).

The service reads the workspace into these dataclasses, calls `compute_plan`,
and stores the steps. Every step is one of the types in `steps` (a TypedDict, so a
plain dict stored as JSON): a `type`, the facts, and a `reason` a person can read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from catalog import text_merge
from catalog.content_diff import (
    DiffBudget,
    FileInfo,
    file_texts_needed,
    files_diff,
    files_differ,
    frontmatter_text,
    line_diff,
)
from catalog.findings import count_words, scan_skill
from catalog.skill_content import GUIDANCE_LINES, GUIDANCE_TOKENS, skill_size
from pixie.core.namespace.engine import apply_rename, make_slug, parse_mentions

from .steps import (
    AgentAttach,
    AgentFollows,
    AgentGains,
    AgentHas,
    AgentLeftOut,
    AgentOverride,
    AgentPinned,
    AgentUnresolved,
    ApprovalRule,
    BundleSize,
    FindingStep,
    SkillFork,
    SkillRemove,
    SkillReslug,
    SkillReuse,
    Step,
)

FORK_CHOICES = ("keep", "take", "merge")
@dataclass(frozen=True)
class CatalogSkill:
    slug: str
    version_id: int
    version: str
    name: str
    description: str
    body: str
    approvals: tuple = ()
    frontmatter: dict = field(default_factory=dict)
    files: tuple[FileInfo, ...] = ()
    digest: str = ""


@dataclass(frozen=True)
class BundleState:
    bundle_version_id: int
    bundle: str
    version: str
    skills: tuple[CatalogSkill, ...]
    hosts: tuple[tuple[str, int, str], ...]  # host, port, purpose
    credentials: tuple[tuple[str, str, str], ...]  # name, host, purpose
    # What its skills' text holds for a person to weigh (catalog.findings, as dicts).
    findings: tuple[dict, ...] = ()


@dataclass(frozen=True)
class InstalledSkill:
    """A workspace skill that came from this installation, with the version it came from."""

    slug: str
    skill_id: int
    head_id: int
    revision_number: int
    name: str
    description: str
    body: str
    frontmatter: dict
    upstream: CatalogSkill | None
    approvals: tuple = ()
    files: tuple[FileInfo, ...] = ()
    origin: str = "local"  # of its latest revision: a local edit, a merge Pixie made, ...


@dataclass(frozen=True)
class PlanInputs:
    kind: str  # install | upgrade | uninstall: each PlanKind's ``planner``
    target: BundleState | None
    current: BundleState | None
    installed: dict[str, InstalledSkill]  # by catalog (package) slug
    occupied: dict[str, str]  # slug -> "skill" | "tool", held by something else
    egress: dict[tuple[str, int], bool]  # (host, port) -> added by a plan (not hand-written)
    needed_by_others: frozenset  # (host, port) and credential names other installs need
    credentials: dict[str, bool]  # name -> confirmed
    agents: tuple[tuple[int, str], ...] = ()  # agents to attach the skills to (install)
    pins: tuple[tuple[str, str, int], ...] = ()  # (agent, skill slug, pinned revision number)
    follows: tuple[tuple[str, str], ...] = ()  # (agent, skill slug) following the latest
    overrides: tuple[tuple[str, str, int], ...] = ()  # (agent, skill slug, override number)
    # Heads of other skills holding incoming slugs:
    # slug -> (skill id, name, description, body, sorted (path, executable, sha256) of files)
    occupants: dict[str, tuple] = field(default_factory=dict)
    fork_choices: dict[str, str] = field(default_factory=dict)
    # The skill ids each chosen agent already has: agent id -> skill ids
    attached: dict[int, frozenset[int]] = field(default_factory=dict)
    # Agents holding this installation's skills (an upgrade adds its new skills to them):
    # (agent id, name, whether it follows the latest of every one it has), by name
    holders: tuple[tuple[int, str, bool], ...] = ()
    left_out: frozenset[int] = frozenset()  # holders the owner left out
    # The chosen agents (install) whose new skills follow the latest revision instead of
    # being pinned to the new ones: the owner's choice, agent by agent.
    following: frozenset[int] = frozenset()
    # "" : a fork with no choice is kept (the rule: a local edit stays unless the owner
    # chooses). "take" or "merge" (merge where it is offered, else take): a fork with no
    # choice waits for one, with that recommended (a rollback; a plan after a yank).
    recommend: str = ""
    # What each agent the plan touches runs now: agent id -> (name, ((skill slug,
    # follows the latest, runs its own override), ...)), its enabled, live skills
    runs: dict[int, tuple[str, tuple[tuple[str, bool, bool], ...]]] = field(
        default_factory=dict
    )
    # The text of the changed text files the plan diffs (see `texts_needed`): sha256 -> text
    texts: dict[str, str] = field(default_factory=dict)
    # The bodies those agents run, as they are, that mention a skill the plan removes:
    # agent id -> ((skill slug, the body it runs, runs the head), ...)
    mentions_removed: dict[int, tuple[tuple[str, str, bool], ...]] = field(default_factory=dict)
    # The guardrail rules a merge's new text is scanned with (catalog.findings.Rule).
    rules: tuple = ()
    # For the context budget: agent id -> skill slug -> (characters of the body it runs,
    # characters of its menu line, 0 when not advertised); and the budget in tokens.
    run_sizes: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)
    context_budget: int = 0
    # The slugs whose holders ``occupied`` answers for (the bundle's, and the re-slug
    # candidates of its skills' names); None: the whole namespace was read.
    known: frozenset[str] | None = None


class SlugsUnread(Exception):
    """The plan would probe a slug its inputs did not read (a long run of re-slugs): read
    more of the candidates for ``name`` and compute again."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


@dataclass
class PlanDraft:
    steps: list[Step]
    summary: str
    expands_reach: bool


def three_way(base: str, mine: str, new: str) -> tuple[str | None, str]:
    """(merged text, or None on conflict; the text with conflict markers either way)."""

    def lines(text):
        return [line + "\n" for line in text.split("\n")]

    merger = text_merge.merger(lines(base), lines(mine), lines(new))
    conflicted = any(group[0] == "conflict" for group in merger.merge_groups())
    text = "".join(
        merger.merge_lines(name_a="yours", name_b="new", name_base="base", base_marker="|||||||")
    )
    text = text[:-1] if text.endswith("\n") else text
    return (None if conflicted else text), text


def size_facts(body: str) -> dict:
    """A body's lines and estimated tokens, with a warning past the format's guidance."""
    size = skill_size(body)
    return {**size.as_dict(), "warning": size.warning}


def texts_needed(inputs: PlanInputs) -> set[str]:
    """The digests of the text files a plan diffs: changed (or added) text files only,
    each within TEXT_DIFF_MAX_BYTES. The service reads exactly these, in one query."""
    needed: set[str] = set()
    for skill in inputs.target.skills if inputs.target and inputs.kind != "uninstall" else ():
        installed = inputs.installed.get(skill.slug)
        if installed is None or _same_content(installed.upstream, skill):
            continue
        needed |= file_texts_needed(installed.files, skill.files)
    return needed


def _same_content(upstream: CatalogSkill | None, skill: CatalogSkill) -> bool:
    """The installed version is the incoming one, or has the same content digest."""
    if upstream is None:
        return False
    if upstream.version_id == skill.version_id:
        return True
    return bool(upstream.digest) and upstream.digest == skill.digest


_ABSENT = object()  # a frontmatter key or a file one side does not have


def _pick(base, mine, new) -> tuple[object, str]:
    """A three-way choice for one field: (value, where it came from)."""
    if mine == new:
        return mine, "same"
    if mine == base:
        return new, "new"
    if new == base:
        return mine, "yours"
    return None, "conflict"


def _shown(value) -> str | None:
    if value is _ABSENT:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def merge_fields(base: dict, mine: dict, new: dict) -> tuple[dict, list[dict], list[str]]:
    """Three-way merge of a skill's fields other than the body and files: name,
    description, each frontmatter key (compared as JSON values) and the approvals.

    Each argument is {"name", "description", "frontmatter", "approvals"}. Returns the
    merged fields, one row per field that differs anywhere (base, yours, new and the
    outcome), and the names of the fields that conflict."""
    rows, conflicts = [], []
    merged: dict = {"frontmatter": {}}
    keys = sorted(set().union(*(side["frontmatter"] for side in (base, mine, new))))
    fields = [("name", "name"), ("description", "description")]
    fields += [(f"frontmatter.{key}", key) for key in keys]
    fields.append(("approvals", "approvals"))
    for label, key in fields:
        if label.startswith("frontmatter."):
            values = [side["frontmatter"].get(key, _ABSENT) for side in (base, mine, new)]
        else:
            values = [side.get(key, _ABSENT) for side in (base, mine, new)]
        value, outcome = _pick(*values)
        if outcome == "conflict":
            conflicts.append(key)
        elif label.startswith("frontmatter."):
            if value is not _ABSENT:
                merged["frontmatter"][key] = value
        else:
            merged[key] = value
        if not (values[0] == values[1] == values[2]):
            rows.append(
                {
                    "field": key,
                    "base": _shown(values[0]),
                    "yours": _shown(values[1]),
                    "new": _shown(values[2]),
                    "outcome": outcome,
                }
            )
    return merged, rows, conflicts


def merge_files(base, mine, new) -> tuple[list[FileInfo], list[dict], list[str]]:
    """Three-way merge of the supporting files, each by path (its bytes and mode)."""
    sides = [{f.path: f for f in files} for files in (base, mine, new)]
    merged, rows, conflicts = [], [], []
    for path in sorted(set().union(*sides)):
        found = [side.get(path) for side in sides]
        ids = [f.identity if f else _ABSENT for f in found]
        _value, outcome = _pick(*ids)
        if outcome == "conflict":
            conflicts.append(path)
        else:
            chosen = found[2] if outcome == "new" else found[1]
            if chosen is not None:
                merged.append(chosen)
        if not (ids[0] == ids[1] == ids[2]):
            rows.append(
                {
                    "path": path,
                    "base": found[0].as_dict() if found[0] else None,
                    "yours": found[1].as_dict() if found[1] else None,
                    "new": found[2].as_dict() if found[2] else None,
                    "outcome": outcome,
                }
            )
    return merged, rows, conflicts


def _slug_map(inputs: PlanInputs) -> tuple[dict[str, str], list[SkillReuse | SkillReslug]]:
    """Where each incoming catalog slug lands in this workspace, and the re-slugs."""
    assert inputs.target is not None
    landing: dict[str, str] = {}
    renames: list[SkillReuse | SkillReslug] = []
    incoming = {skill.slug for skill in inputs.target.skills}
    taken = set(inputs.occupied) | {s.slug for s in inputs.installed.values()}
    for skill in inputs.target.skills:
        if skill.slug in inputs.installed:
            landing[skill.slug] = inputs.installed[skill.slug].slug
            continue
        holder = inputs.occupied.get(skill.slug)
        if holder is None and skill.slug not in taken:
            landing[skill.slug] = skill.slug
            taken.add(skill.slug)
            continue
        occupant = inputs.occupants.get(skill.slug)
        files = tuple(sorted((f.path, f.executable, f.sha256) for f in skill.files))
        if occupant and occupant[1:] == (skill.name, skill.description, skill.body, files):
            landing[skill.slug] = skill.slug
            renames.append(
                {
                    "type": "skill.reuse",
                    "slug": skill.slug,
                    "catalog_slug": skill.slug,
                    "skill_id": occupant[0],
                    "reason": "an identical skill is already in this workspace; it is used as it "
                    "is, not copied",
                }
            )
            continue
        # Probe the workspace and every incoming slug, so a re-slug cannot
        # collide with a bundle-mate that lands later.
        def is_taken(slug: str, name: str = skill.name) -> bool:
            if slug in taken or slug in incoming:
                return True
            if inputs.known is not None and slug not in inputs.known:
                raise SlugsUnread(name)  # unread is not free: read it first
            return False

        new_slug = make_slug(skill.name, is_taken)
        taken.add(new_slug)
        landing[skill.slug] = new_slug
        held_by = "a tool" if holder == "tool" else "a skill from elsewhere"
        renames.append(
            {
                "type": "skill.reslug",
                "from": skill.slug,
                "to": new_slug,
                "reason": f"@{skill.slug} is already held in this workspace by {held_by}; "
                f"the incoming skill arrives as @{new_slug} and the bundle's mentions follow it",
            }
        )
    return landing, renames


def cascade(body: str, landing: dict[str, str]) -> str:
    """The body with its mentions of each catalog slug rewritten to where it lands here."""
    for old, new in landing.items():
        if old != new and old in parse_mentions(body):
            body = apply_rename(old, new, body)
    return body


def _skill_steps(inputs: PlanInputs) -> list[Step]:
    target = inputs.target
    assert target is not None
    landing, steps = _slug_map(inputs)
    budget = DiffBudget()  # one budget for the whole plan's file diffs
    for position, skill in enumerate(target.skills, start=1):
        body = cascade(skill.body, landing)
        slug = landing[skill.slug]
        installed = inputs.installed.get(skill.slug)
        if installed is None and any(
            r["type"] == "skill.reuse" and r["catalog_slug"] == skill.slug for r in steps
        ):
            continue
        common = {"slug": slug, "catalog_slug": skill.slug, "position": position}
        if installed is not None:
            common["skill_id"] = installed.skill_id
        if installed is None:
            steps.append(
                {
                    "type": "skill.create",
                    **common,
                    "name": skill.name,
                    "version": skill.version,
                    "skill_version_id": skill.version_id,
                    "body": body,
                    "size": size_facts(body),
                    "files": [f.as_dict() for f in skill.files],
                    "reason": f"{target.bundle} {target.version} includes it",
                }
            )
            continue
        upstream = installed.upstream
        base_body = cascade(upstream.body, landing) if upstream else ""
        edited = upstream is None or (
            (installed.name, installed.description, installed.body, installed.frontmatter)
            != (upstream.name, upstream.description, base_body, upstream.frontmatter)
            or tuple(installed.approvals) != tuple(upstream.approvals)
            or files_differ(installed.files, upstream.files)
        )
        if _same_content(upstream, skill):
            steps.append(
                {
                    "type": "skill.unchanged",
                    **common,
                    "version": skill.version,
                    "forked": edited,
                    "reason": "your edits are kept; the bundle did not change this skill"
                    if edited
                    else "the same version is already installed"
                    if upstream.version_id == skill.version_id
                    else f"{skill.version} has the same content as {upstream.version}",
                }
            )
            continue
        facts = {
            **common,
            "head_id": installed.head_id,
            "from_version": upstream.version if upstream else None,
            "to_version": skill.version,
            "skill_version_id": skill.version_id,
            "name": skill.name,
            "body": body,
            "size": size_facts(body),
            "files": files_diff(installed.files, skill.files, inputs.texts, budget),
        }
        if edited:
            steps.append(_fork_step(inputs, installed, skill, body, base_body, facts))
        else:
            steps.append(
                {
                    "type": "skill.update",
                    **facts,
                    "old_body": installed.body,
                    "body_diff": line_diff(installed.body, body),
                    "frontmatter_diff": line_diff(
                        _fields_text(installed.name, installed.description, upstream),
                        _fields_text(skill.name, skill.description, skill),
                    ),
                    "reason": f"{target.bundle} {target.version} names version {skill.version}",
                }
            )
    for catalog_slug, installed in inputs.installed.items():
        if catalog_slug not in landing:
            steps.append(_remove_step(installed, f"{target.bundle} {target.version} drops it"))
    return steps


def _fields_text(name: str, description: str, skill: CatalogSkill) -> str:
    """The frontmatter as a reader compares it: name, description, every other key and the
    approval rules."""
    data = {"name": name, "description": description, **skill.frontmatter}
    return frontmatter_text(data, skill.approvals)


def _sides(skill) -> dict:
    return {
        "name": skill.name,
        "description": skill.description,
        "frontmatter": dict(skill.frontmatter),
        "approvals": list(skill.approvals),
    }


# What a fork's reason says of the choice the plan was computed with.
FORK_OUTCOME = {
    "keep": "your version is kept unless you choose otherwise",
    "take": "the new version replaces yours, which stays in the skill's history",
    "merge": "your edits and the new version's are merged, yours staying in the skill's history",
}


FORK_WAITS = "the plan waits for your choice (recommended: {})"


def _fork_step(inputs, installed, skill, body, base_body, facts) -> SkillFork:
    """Base (the version the fork came from), yours and new, merged field by field:
    changed on one side only, that side wins; changed alike, that; changed apart, a
    conflict, and then merge is not offered."""
    upstream = installed.upstream
    base = (
        _sides(upstream)
        if upstream
        else {"name": _ABSENT, "description": _ABSENT, "frontmatter": {}, "approvals": _ABSENT}
    )
    merged_fields, field_rows, conflicts = merge_fields(base, _sides(installed), _sides(skill))
    merged_files, file_rows, file_conflicts = merge_files(
        upstream.files if upstream else (), installed.files, skill.files
    )
    merged_body, merge_text = three_way(base_body, installed.body, body)
    if merged_body is None:
        conflicts.append("body")
    conflicts += [f"file {path}" for path in file_conflicts]
    offered = ["keep", "take"] + ([] if conflicts else ["merge"])
    choice = inputs.fork_choices.get(installed.slug)
    decided = choice in offered or not inputs.recommend
    if choice not in offered:
        choice = "keep"
    recommended = None
    if inputs.recommend:
        recommended = "merge" if inputs.recommend == "merge" and "merge" in offered else "take"
    merged = None
    if not conflicts:
        merged = {
            **merged_fields,
            "body": merged_body,
            "files": [f.as_dict() for f in merged_files],
        }
    return {
        "type": "skill.fork",
        **facts,
        "base_body": base_body,
        "mine_body": installed.body,
        "mine_revision": installed.revision_number,
        "mine_origin": installed.origin,
        "merged_body": merged_body,
        "merge_text": merge_text,
        "fields": field_rows,
        "file_merge": file_rows,
        "conflicts": conflicts,
        "conflict": bool(conflicts),
        "merged": merged,
        "merged_size": size_facts(merged_body) if merged_body is not None else None,
        "choices": offered,
        "choice": choice,
        "decided": decided,
        "recommended": recommended,
        "reason": "you edited this skill since it came from the bundle; "
        + (FORK_OUTCOME[choice] if decided else FORK_WAITS.format(recommended))
        + (
            f"; merge is not offered: {', '.join(conflicts)} changed both here and in the "
            "catalog"
            if conflicts
            else ""
        ),
    }


def _remove_step(installed: InstalledSkill, reason: str) -> SkillRemove:
    return {
        "type": "skill.remove",
        "slug": installed.slug,
        "skill_id": installed.skill_id,
        "reason": f"{reason}; it is archived and its revisions stay in history",
    }


def _reach_steps(inputs: PlanInputs) -> list[Step]:
    steps = []
    wanted = inputs.target.hosts if inputs.target else ()
    credential_for = {
        host: name for name, host, _ in (inputs.target.credentials if inputs.target else ())
    }
    wanted_keys = {(host, port) for host, port, _ in wanted}
    for host, port, purpose in wanted:
        if (host, port) in inputs.egress:
            continue
        steps.append(
            {
                "type": "egress.add",
                "host": host,
                "port": port,
                "purpose": purpose,
                "credential_name": credential_for.get(host, ""),
                "reason": "a skill in the bundle reaches it; your agents cannot reach it today",
            }
        )
    for host, port, _ in inputs.current.hosts if inputs.current else ():
        if (host, port) in wanted_keys or not inputs.egress.get((host, port)):
            continue
        if (host, port) in inputs.needed_by_others:
            continue
        steps.append(
            {
                "type": "egress.remove",
                "host": host,
                "port": port,
                "reason": "no installed bundle needs it any more and it was not written by hand",
            }
        )
    wanted_credentials = set()
    for name, host, purpose in inputs.target.credentials if inputs.target else ():
        wanted_credentials.add(name)
        present = name in inputs.credentials
        steps.append(
            {
                "type": "credential.require",
                "name": name,
                "host": host,
                "purpose": purpose,
                "new": not present,
                "confirmed": inputs.credentials.get(name, False),
                "reason": "supply it to the agents' environment outside Pixie, then confirm it",
            }
        )
    for name, _host, _purpose in inputs.current.credentials if inputs.current else ():
        if name not in wanted_credentials and name not in inputs.needed_by_others:
            steps.append(
                {
                    "type": "credential.remove",
                    "name": name,
                    "reason": "no installed bundle needs it any more",
                }
            )
    return steps


def compute_plan(inputs: PlanInputs) -> PlanDraft:
    steps: list[Step] = []
    if inputs.kind == "uninstall":
        steps.extend(
            _remove_step(installed, "uninstalling the bundle")
            for installed in inputs.installed.values()
        )
    else:
        steps.extend(_skill_steps(inputs))
        steps.append(_bundle_size(inputs))
    steps.extend(_reach_steps(inputs))
    steps.extend(_approval_steps(inputs, steps))
    steps.extend(_attach_steps(inputs, steps))
    steps.extend(_holder_steps(inputs, steps))
    steps.extend(_agent_steps(inputs, steps))
    steps.extend(_unresolved_steps(inputs, steps))
    steps.extend(_context_steps(inputs, steps))
    steps.extend(_finding_steps(inputs, steps))
    return PlanDraft(steps=steps, summary=summarize(steps), expands_reach=expands_reach(steps))


def _latest_bodies(steps: list[Step]) -> dict[str, str]:
    """slug -> the body the plan makes a skill's latest (created, updated, a fork taken
    or merged)."""
    latest: dict[str, str] = {}
    for step in steps:
        if step["type"] in ("skill.create", "skill.update"):
            latest[step["slug"]] = step["body"]
        elif step["type"] == "skill.fork" and step["choice"] != "keep":
            merged = step["merged_body"] if step["choice"] == "merge" else None
            latest[step["slug"]] = merged if merged is not None else step["body"]
    return latest


def _tokens(chars: int) -> int:
    return (chars + 3) // 4  # catalog.skill_content.skill_size's estimate


def _context_steps(inputs: PlanInputs, steps: list[Step]) -> list[Step]:
    """For each agent the plan touches, what it will load after the plan (its menu lines
    and the skill bodies it runs) against the budget: a figure, and a finding when over.
    Read from the sizes of what it runs now, changed by what the plan brings."""
    if not inputs.context_budget:
        return []
    removed = {s["slug"] for s in steps if s["type"] == "skill.remove"}
    latest = _latest_bodies(steps)
    catalog = {s.slug: s for s in inputs.target.skills} if inputs.target else {}
    menus = {
        step["slug"]: len(catalog[step["catalog_slug"]].name)
        + len(catalog[step["catalog_slug"]].description)
        for step in steps
        if step["type"] == "skill.create" and step["catalog_slug"] in catalog
    }
    names = {agent_id: name for agent_id, (name, _running) in inputs.runs.items()}
    added: dict[int, list[str]] = {}
    for step in steps:
        if step["type"] in ("agent.attach", "agent.gains"):
            added.setdefault(step["agent_id"], []).extend(step["skills"])
            names.setdefault(step["agent_id"], step["agent"])
    found: list[Step] = []
    for agent_id in sorted(names, key=lambda a: names[a]):
        running = inputs.runs.get(agent_id, ("", ()))[1]
        sizes = inputs.run_sizes.get(agent_id, {})
        menu = body = 0
        for slug, follows, overridden in running:
            if slug in removed:
                continue
            chars, line = sizes.get(slug, (0, 0))
            if follows and not overridden and slug in latest:
                chars = len(latest[slug])
            body, menu = body + chars, menu + line
        for slug in added.get(agent_id, ()):
            body += len(latest.get(slug, ""))
            menu += menus.get(slug, 0)
        total = _tokens(menu) + _tokens(body)
        over = total > inputs.context_budget
        found.append({
            "type": "agent.context",
            "agent_id": agent_id,
            "agent": names[agent_id],
            "menu_tokens": _tokens(menu),
            "skills_tokens": _tokens(body),
            "tokens": total,
            "budget": inputs.context_budget,
            "over": over,
            "reason": "estimated at about 4 characters a token, from the menu lines and skill "
            "bodies it will load once the plan is applied",
        })  # fmt: skip
        if over:
            found.append({
                "type": "finding",
                "kind": "context_budget",
                "severity": "warning",
                "slug": "",
                "file": "",
                "line": 0,
                "excerpt": f"{names[agent_id]}: about {total:,} tokens (menu {_tokens(menu):,}, "
                f"skills {_tokens(body):,}) against a budget of {inputs.context_budget:,}",
                "message": f"{names[agent_id]} would load more than its context budget",
                "reason": "PIXIE_AGENT_CONTEXT_BUDGET_TOKENS; a long prompt crowds out the "
                "conversation and costs every turn",
            })  # fmt: skip
    return found


def _finding_steps(inputs: PlanInputs, steps: list[Step]) -> list[FindingStep]:
    """The findings in the text the plan brings: a skill it creates, updates or takes, as
    the catalog version's scan found them; for a merge, its body scanned afresh (the merge
    is new text) and the catalog's Markdown files' findings; nothing for a fork kept."""
    if inputs.target is None:
        return []
    by_skill: dict[str, list[dict]] = {}
    for finding in inputs.target.findings:
        by_skill.setdefault(finding["skill"], []).append(finding)
    found: list[FindingStep] = []
    for step in steps:
        choice = step.get("choice", "take")
        if step["type"] not in ("skill.create", "skill.update", "skill.fork") or choice == "keep":
            continue
        catalog = by_skill.get(step["catalog_slug"], [])
        if choice == "merge" and step.get("merged_body") is not None:
            merged = scan_skill(
                skill=step["catalog_slug"],
                body=step["merged_body"],
                hosts=(h for h, _port, _purpose in inputs.target.hosts),
                credentials=(name for name, _host, _purpose in inputs.target.credentials),
                rules=inputs.rules,
            )
            files = [f for f in catalog if f["file"] != "SKILL.md"]
            catalog = [f.as_dict() for f in merged] + files
        found += [_finding_step(finding, step["slug"]) for finding in catalog]
    return found


def _finding_step(finding: dict, slug: str) -> FindingStep:
    return {
        "type": "finding",
        "kind": finding["kind"],
        "severity": finding["severity"],
        "slug": slug,
        "file": finding["file"],
        "line": finding["line"],
        "excerpt": finding["excerpt"],
        "message": finding["message"],
        "reason": "found in the text this plan brings; a reader's aid, not a verdict",
    }


def _approval_steps(inputs: PlanInputs, steps: list[Step]) -> list[ApprovalRule]:
    """The incoming skills' approval rules, each marked new if no installed skill has it."""
    if not inputs.target:
        return []
    current_operations = {
        a["operation"]
        for s in (inputs.current.skills if inputs.current else ())
        for a in s.approvals
    }
    landing = {s["catalog_slug"]: s["slug"] for s in steps if "catalog_slug" in s}
    return [
        {
            "type": "approval.rule",
            "skill": landing.get(skill.slug, skill.slug),
            "operation": approval["operation"],
            "rule": approval["rule"],
            "new": approval["operation"] not in current_operations,
            "reason": "declared in the skill's frontmatter",
        }
        for skill in inputs.target.skills
        for approval in skill.approvals
    ]


def _attach_steps(inputs: PlanInputs, steps: list[Step]) -> list[AgentAttach | AgentHas]:
    """An install's chosen agents get its skills in bundle order, except those they have."""
    attach = [s["slug"] for s in steps if s["type"] in ("skill.create", "skill.reuse")]
    if inputs.target:
        order = {skill.slug: i for i, skill in enumerate(inputs.target.skills)}
        by_slug = {s["slug"]: s["catalog_slug"] for s in steps if "catalog_slug" in s}
        attach.sort(key=lambda slug: order.get(by_slug.get(slug, slug), 0))
    # Only a reused skill can be on an agent already (a created one does not exist yet).
    reused = {s["slug"]: s["skill_id"] for s in steps if s["type"] == "skill.reuse"}
    found: list[AgentAttach | AgentHas] = []
    for agent_id, agent_name in inputs.agents if inputs.kind == "install" else ():
        has = inputs.attached.get(agent_id, frozenset())
        already = [slug for slug in attach if reused.get(slug) in has]
        if len(already) < len(attach):
            follows = agent_id in inputs.following
            found.append(
                {
                    "type": "agent.attach",
                    "agent_id": agent_id,
                    "agent": agent_name,
                    "skills": [slug for slug in attach if slug not in already],
                    "follows": follows,
                    "reason": "you chose this agent; the skills are added in bundle order, "
                    + (
                        "following the latest: your edits and later upgrades reach it at once"
                        if follows
                        else "pinned to the new revisions: later changes reach it when you "
                        "repoint it"
                    ),
                }
            )
        if already:
            found.append(
                {
                    "type": "agent.has",
                    "agent_id": agent_id,
                    "agent": agent_name,
                    "skills": already,
                    "reason": "this agent already has these skills; they are left as they are "
                    "(position, pin, overrides), not attached again",
                }
            )
    return found


def _holder_steps(inputs: PlanInputs, steps: list[Step]) -> list[AgentGains | AgentLeftOut]:
    """An upgrade (or rollback) that brings skills the installation lacks adds them to
    every agent that has its other skills, as each holds those: following the latest if
    it follows them all, else pinned to the new revisions. An agent the owner left out
    is named, and gets nothing."""
    new = [s["slug"] for s in steps if s["type"] == "skill.create"]
    if inputs.kind != "upgrade" or not new:  # a rollback is planned as one
        return []
    found: list[AgentGains | AgentLeftOut] = []
    for agent_id, name, follows in inputs.holders:
        if agent_id in inputs.left_out:
            found.append({
                "type": "agent.left_out", "agent_id": agent_id, "agent": name, "skills": new,
                "reason": "you left it out: it keeps only the skills it has",
            })  # fmt: skip
            continue
        how = "following the latest, as it follows the others" if follows else (
            "pinned to the new revisions, as it pins the others")
        found.append({
            "type": "agent.gains", "agent_id": agent_id, "agent": name, "skills": new,
            "follows": follows,
            "reason": f"it has this bundle's other skills; the new ones are added {how}",
        })  # fmt: skip
    return found


AGENTS_NAMED = 20


def _unresolved_steps(inputs: PlanInputs, steps: list[Step]) -> list[AgentUnresolved]:
    """Warnings: each mention that, once the plan is applied, a skill an agent it touches
    runs would make of a skill or tool that agent does not have. Only the agents the plan
    touches are read, and of their bodies only those the plan adds or changes, and those
    that mention a skill it removes, so the cost follows the plan."""
    if not inputs.runs:
        return []
    removed = {s["slug"] for s in steps if s["type"] == "skill.remove"}
    latest = _latest_bodies(steps)
    added: dict[int, list[str]] = {}
    for step in steps:
        if step["type"] in ("agent.attach", "agent.gains"):
            added.setdefault(step["agent_id"], []).extend(step["skills"])
    tools = {slug for slug, holder in inputs.occupied.items() if holder == "tool"}
    found: dict[tuple[str, str], list[str]] = {}
    for agent_id, (name, running) in sorted(inputs.runs.items(), key=lambda r: r[1][0]):
        has = {slug for slug, _f, _o in running if slug not in removed}
        has |= set(added.get(agent_id, ()))
        # (skill, body, the mentions that count there): every mention in a body the plan
        # adds or changes, ...
        bodies = [(slug, latest[slug], None) for slug in added.get(agent_id, ()) if slug in latest]
        bodies += [
            (slug, latest[slug], None)
            for slug, follows, overridden in running
            if follows and not overridden and slug in latest and slug not in removed
        ]
        # ... and, in a body the plan leaves as it is (pinned, overridden, or unchanged),
        # the mentions of a skill it removes: they resolved before, and will not.
        bodies += [
            (slug, body, removed)
            for slug, body, follows in inputs.mentions_removed.get(agent_id, ())
            if not (follows and slug in latest)
        ]
        for slug, body, counted in bodies:
            for mention in parse_mentions(body):
                if counted is not None and mention not in counted:
                    continue
                if mention not in has and mention not in tools:
                    found.setdefault((slug, mention), []).append(name)
    return [
        {
            "type": "agent.unresolved",
            "slug": slug,
            "mention": mention,
            "agents": sorted(set(names))[:AGENTS_NAMED],
            "count": len(set(names)),
            "reason": f"once applied, @{slug} mentions @{mention}, which these agents do not "
            f"have: it would resolve to nothing in their prompt; attach @{mention} to them, "
            "or edit the skill",
        }
        for (slug, mention), names in sorted(found.items())
    ]


def _agent_steps(
    inputs: PlanInputs, steps: list[Step]
) -> list[AgentOverride | AgentFollows | AgentPinned]:
    """What the plan means for agents already using a skill it replaces: an override
    stays, a follower moves, a pin stays put."""
    replaced = {
        s["slug"]
        for s in steps
        if s["type"] == "skill.update" or (s["type"] == "skill.fork" and s["choice"] != "keep")
    }
    found: list[AgentOverride | AgentFollows | AgentPinned] = []
    for agent_name, slug, number in inputs.overrides:
        if slug in replaced or inputs.kind == "uninstall":
            found.append(
                {
                    "type": "agent.override",
                    "agent": agent_name,
                    "slug": slug,
                    "override": number,
                    "reason": "this agent runs its own body for the skill (override "
                    f"r{number}); the plan changes the skill, never the override: compare them",
                }
            )
    for agent_name, slug in inputs.follows:
        if slug in replaced:
            found.append(
                {
                    "type": "agent.follows",
                    "agent": agent_name,
                    "slug": slug,
                    "reason": "it follows the latest revision, so it uses the new one as soon as "
                    "the plan is applied; no repoint is needed",
                }
            )
    for agent_name, slug, number in inputs.pins:
        if slug in replaced:
            found.append(
                {
                    "type": "agent.pinned",
                    "agent": agent_name,
                    "slug": slug,
                    "revision": number,
                    "reason": "it keeps its pinned revision; repointing it is a separate decision",
                }
            )
    return found


def _bundle_size(inputs: PlanInputs) -> BundleSize:
    """The bundle's total against the format's guidance, skill by skill summed."""
    sizes = [(skill.slug, skill_size(skill.body)) for skill in inputs.target.skills]
    over = [slug for slug, size in sizes if size.over_guidance]
    return {
        "type": "bundle.size",
        "skills": len(sizes),
        "lines": sum(size.lines for _, size in sizes),
        "estimated_tokens": sum(size.tokens for _, size in sizes),
        "over_guidance": over,
        "reason": "estimated from each SKILL.md body (about 4 characters a token); "
        + ("past" if over else "every skill is within")
        + f" the Agent Skills guidance ({GUIDANCE_LINES} lines, {GUIDANCE_TOKENS:,} tokens)"
        + (": " + ", ".join("@" + slug for slug in over) if over else ""),
    }


def expands_reach(steps: list[Step]) -> bool:
    return any(
        (s["type"] == "egress.add")
        or (s["type"] == "credential.require" and s["new"])
        or (s["type"] == "approval.rule" and s["new"])
        for s in steps
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _new_executables(steps: list[Step]) -> int:
    """Executable files the plan brings: in skills it creates, and added, changed or newly
    executable in skills it updates or takes (a fork kept brings none)."""
    count = 0
    for step in steps:
        if step["type"] == "skill.create":
            count += sum(1 for f in step["files"] if f["executable"])
        elif step["type"] == "skill.update" or (
            step["type"] == "skill.fork" and step["choice"] != "keep"
        ):
            count += sum(
                1 for f in step["files"]
                if f["new"] and f["new"]["executable"]
                and (f["old"] is None or f["content"] != "same" or not f["old"]["executable"])
            )  # fmt: skip
    return count


def summarize(steps: list[Step]) -> str:
    by_type: dict[str, int] = {}
    for step in steps:
        by_type[step["type"]] = by_type.get(step["type"], 0) + 1
    hosts = by_type.get("egress.add", 0)
    credentials = sum(1 for s in steps if s["type"] == "credential.require" and s["new"])
    operations = sum(1 for s in steps if s["type"] == "approval.rule" and s["new"])
    if hosts or credentials or operations:
        parts = []
        if hosts:
            parts.append(_count(hosts, "host"))
        if credentials:
            parts.append(_count(credentials, "credential"))
        if operations:
            parts.append(_count(operations, "operation") + " needing approval")
        reach = "Expands reach: adds " + " and ".join(parts)
    else:
        reach = "Adds no hosts, credentials or approvals"
    if scripts := _new_executables(steps):
        # Not reach the workspace grants, but code an agent may run: said, never hidden.
        reach += f"; {_count(scripts, 'executable file')} new or changed"
    changes = []
    created = by_type.get("skill.create", 0)
    updated = by_type.get("skill.update", 0) + sum(
        1 for s in steps if s["type"] == "skill.fork" and s["choice"] != "keep"
    )
    waiting = sum(1 for s in steps if s["type"] == "skill.fork" and not s["decided"])
    kept = sum(1 for s in steps if s["type"] == "skill.fork" and s["choice"] == "keep") - waiting
    removed = by_type.get("skill.remove", 0)
    if created:
        changes.append(f"creates {_count(created, 'skill')}")
    if updated:
        changes.append(f"changes {_count(updated, 'skill')}")
    if removed:
        changes.append(f"archives {_count(removed, 'skill')}")
    if kept:
        changes.append(f"keeps {_count(kept, 'fork')}")
    if waiting:
        changes.append(f"waits for your choice for {_count(waiting, 'fork')}")
    if by_type.get("egress.remove"):
        changes.append(f"removes {_count(by_type['egress.remove'], 'host')}")
    findings = count_words([s for s in steps if s["type"] == "finding"])
    return f"{reach}; {', '.join(changes) or 'changes no skills'}" + (
        f"; {findings}." if findings else "."
    )
