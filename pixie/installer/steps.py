"""The steps of a plan, one type each: what the planner writes, the apply reads, the plan
page shows and the API answers (its schema describes each one from these types).

A step is stored as JSON in ``Plan.steps``, so each type is a TypedDict: a plain dict at
run time, with its keys named here. Every step has a ``type`` and a ``reason`` a person
can read.
"""

from types import UnionType
from typing import Literal, TypedDict, Union, get_args, get_origin, get_type_hints, is_typeddict


class SizeFacts(TypedDict):
    """A SKILL.md body's size against the Agent Skills guidance (an estimate)."""

    lines: int
    estimated_tokens: int
    over_guidance: bool
    warning: str


class FileFacts(TypedDict):
    """A supporting file, by its bytes' digest."""

    path: str
    sha256: str
    size: int
    executable: bool
    media_type: str


class FileChange(TypedDict):
    """A file added, removed or changed between two versions (catalog.content_diff)."""

    path: str
    change: Literal["added", "removed", "moved", "changed"]
    from_path: str | None  # where a moved file was (the same bytes, another path)
    old: FileFacts | None
    new: FileFacts | None
    mode: str
    # not_shown: a text diff past the page's budget (content_diff.PAGE_FILE_DIFF_LINES)
    content: Literal["", "removed", "same", "binary", "too_long", "text", "not_shown"]
    diff: list[str]
    # False: too many lines changed to align (catalog.line_diff); absent in older plans
    aligned: bool


class SkillCreate(TypedDict):
    type: Literal["skill.create"]
    slug: str
    catalog_slug: str
    position: int
    name: str
    version: str
    skill_version_id: int
    body: str
    size: SizeFacts
    files: list[FileFacts]
    reason: str


class SkillUnchanged(TypedDict):
    type: Literal["skill.unchanged"]
    slug: str
    catalog_slug: str
    position: int
    skill_id: int
    version: str
    forked: bool
    reason: str


class _SkillChange(TypedDict):
    """What an update and a fork both say: the installed skill, the incoming version."""

    slug: str
    catalog_slug: str
    position: int
    skill_id: int
    head_id: int
    from_version: str | None
    to_version: str
    skill_version_id: int
    name: str
    body: str
    size: SizeFacts
    files: list[FileChange]
    reason: str


class SkillUpdate(_SkillChange):
    type: Literal["skill.update"]
    old_body: str
    body_diff: list[str]
    frontmatter_diff: list[str]


class SkillFork(_SkillChange):
    """A skill edited here since it came from the bundle: base, yours and new, the merge
    where there is no conflict, and the owner's choice (keep, take or merge)."""

    type: Literal["skill.fork"]
    base_body: str
    mine_body: str
    mine_revision: int  # the skill's latest revision here, and how it was made
    mine_origin: str
    merged_body: str | None
    merge_text: str
    fields: list[dict]
    file_merge: list[dict]
    conflicts: list[str]
    conflict: bool
    merged: dict | None
    merged_size: SizeFacts | None
    choices: list[Literal["keep", "take", "merge"]]
    # What the plan was computed with; while ``decided`` is false (a fork no one chose for,
    # in a plan that does not keep forks by default) it is "keep" and approving waits.
    choice: Literal["keep", "take", "merge"]
    decided: bool
    recommended: Literal["take", "merge"] | None


class AgentContext(TypedDict):
    """What an agent the plan touches will load once it is applied, against the budget."""

    type: Literal["agent.context"]
    agent_id: int
    agent: str
    menu_tokens: int
    skills_tokens: int
    tokens: int
    budget: int
    over: bool
    reason: str


class FindingStep(TypedDict):
    """Something a person should weigh in the text the plan brings (catalog.findings)."""

    type: Literal["finding"]
    kind: Literal[
        "hidden_text", "undeclared_host", "undeclared_credential", "guardrail", "context_budget"
    ]
    severity: Literal["refuse", "warning", "info"]
    slug: str  # the skill as it lands here ("" for an agent's context budget)
    file: str
    line: int
    excerpt: str  # the text around it, hidden characters written out
    message: str
    reason: str


class SkillRemove(TypedDict):
    type: Literal["skill.remove"]
    slug: str
    skill_id: int
    reason: str


class SkillReuse(TypedDict):
    type: Literal["skill.reuse"]
    slug: str
    catalog_slug: str
    skill_id: int
    reason: str


# "from" is a keyword: the functional form names it.
SkillReslug = TypedDict(
    "SkillReslug",
    {"type": Literal["skill.reslug"], "from": str, "to": str, "reason": str},
)


class BundleSize(TypedDict):
    type: Literal["bundle.size"]
    skills: int
    lines: int
    estimated_tokens: int
    over_guidance: list[str]
    reason: str


class EgressAdd(TypedDict):
    type: Literal["egress.add"]
    host: str
    port: int
    purpose: str
    credential_name: str
    reason: str


class EgressRemove(TypedDict):
    type: Literal["egress.remove"]
    host: str
    port: int
    reason: str


class CredentialRequire(TypedDict):
    type: Literal["credential.require"]
    name: str
    host: str
    purpose: str
    new: bool
    confirmed: bool
    reason: str


class CredentialRemove(TypedDict):
    type: Literal["credential.remove"]
    name: str
    reason: str


class ApprovalRule(TypedDict):
    type: Literal["approval.rule"]
    skill: str
    operation: str
    rule: str
    new: bool
    reason: str


class AgentAttach(TypedDict):
    """An install's skills added to an agent the owner chose: pinned to the new revisions,
    or following the latest where the owner chose that (plans made before the choice
    existed have no ``follows``: pinned)."""

    type: Literal["agent.attach"]
    agent_id: int
    agent: str
    skills: list[str]
    follows: bool
    reason: str


class AgentGains(TypedDict):
    """An upgrade's new skills, added to an agent that has the installation's others:
    following the latest if it follows them, else pinned to the new revisions."""

    type: Literal["agent.gains"]
    agent_id: int
    agent: str
    skills: list[str]
    follows: bool
    reason: str


class AgentLeftOut(TypedDict):
    """An agent the owner left out of an upgrade's new skills."""

    type: Literal["agent.left_out"]
    agent_id: int
    agent: str
    skills: list[str]
    reason: str


class AgentUnresolved(TypedDict):
    """A warning: once applied, a skill an agent runs would mention one that resolves to
    nothing for it (the agents named: the first 20 of ``count``)."""

    type: Literal["agent.unresolved"]
    slug: str
    mention: str
    agents: list[str]
    count: int
    reason: str


class AgentHas(TypedDict):
    type: Literal["agent.has"]
    agent_id: int
    agent: str
    skills: list[str]
    reason: str


class AgentOverride(TypedDict):
    type: Literal["agent.override"]
    agent: str
    slug: str
    override: int
    reason: str


class AgentFollows(TypedDict):
    type: Literal["agent.follows"]
    agent: str
    slug: str
    reason: str


class AgentPinned(TypedDict):
    type: Literal["agent.pinned"]
    agent: str
    slug: str
    revision: int
    reason: str


RepointMove = TypedDict(
    "RepointMove",
    {
        "type": Literal["repoint.move"],
        "slug": str,
        "skill_id": int,
        "count": int,
        "agents": int,
        "from": int,
        "from_revision_id": int,
        "to": int,
        "to_revision_id": int,
        "reason": str,
    },
)


class RepointStay(TypedDict):
    type: Literal["repoint.stay"]
    slug: str
    skill_id: int
    count: int
    agents: int
    revision: int
    reason: str


Step = (
    SkillCreate
    | SkillUnchanged
    | SkillUpdate
    | SkillFork
    | SkillRemove
    | SkillReuse
    | SkillReslug
    | BundleSize
    | EgressAdd
    | EgressRemove
    | CredentialRequire
    | CredentialRemove
    | ApprovalRule
    | AgentAttach
    | AgentGains
    | AgentLeftOut
    | AgentUnresolved
    | AgentHas
    | AgentOverride
    | AgentFollows
    | AgentPinned
    | RepointMove
    | RepointStay
    | FindingStep
    | AgentContext
)
STEP_TYPES: dict[str, type] = {
    step.__annotations__["type"].__args__[0]: step for step in Step.__args__
}


def step_problems(step: dict) -> list[str]:
    """What is wrong with a step against its type: a missing or unknown key, a value of
    the wrong kind. [] for a step as the planner writes it (the test suite checks every
    plan it makes)."""
    kind = STEP_TYPES.get(step.get("type"))
    if kind is None:
        return [f"unknown step type {step.get('type')!r}"]
    return _problems(step, kind, step["type"])


def _problems(value, hint, where: str) -> list[str]:
    origin = get_origin(hint)
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = get_type_hints(hint)
        problems = [f"{where}: no {key!r}" for key in hints if key not in value]
        problems += [f"{where}: unknown key {key!r}" for key in value if key not in hints]
        for key, key_hint in hints.items():
            if key in value:
                problems += _problems(value[key], key_hint, f"{where}.{key}")
        return problems
    if origin in (Union, UnionType):
        if any(not _problems(value, option, where) for option in get_args(hint)):
            return []
        return [f"{where}: {value!r} is none of {hint}"]
    if origin is Literal:
        allowed = get_args(hint)
        return [] if value in allowed else [f"{where}: {value!r} not one of {allowed}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = get_args(hint)
        return [p for i, v in enumerate(value) for p in _problems(v, item, f"{where}[{i}]")]
    if hint is type(None):
        return [] if value is None else [f"{where}: not null"]
    if hint is int and isinstance(value, bool):
        return [f"{where}: a boolean, not a number"]
    return [] if isinstance(value, hint) else [f"{where}: {type(value).__name__}, not {hint}"]
