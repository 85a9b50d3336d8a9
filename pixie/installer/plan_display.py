"""Turn a plan's steps into the groups and diffs the plan page shows."""

from __future__ import annotations

from catalog.diff_display import aligned_three, file_views, side_by_side
from catalog.findings import visible

from .plan_core import size_facts
from .steps import Step

GROUPS = [
    ("findings", "Findings: read these before approving", ("finding",)),
    (
        "skills",
        "Skills",
        ("skill.create", "skill.update", "skill.unchanged", "skill.remove", "bundle.size"),
    ),
    ("renames", "Renamed or reused on arrival", ("skill.reslug", "skill.reuse")),
    ("forks", "Forks and overrides: text changed here", ("skill.fork", "agent.override")),
    ("network", "Network", ("egress.add", "egress.remove")),
    ("credentials", "Credentials", ("credential.require", "credential.remove")),
    ("approvals", "Approval rules", ("approval.rule",)),
    (
        "agents",
        "Agents",
        ("agent.unresolved", "agent.context", "agent.attach", "agent.gains", "agent.left_out",
         "agent.has", "agent.pinned", "agent.follows"),
    ),
    ("repoint", "Pins to move", ("repoint.move", "repoint.stay")),
]


def grouped_steps(steps: list[Step], links: dict | None = None) -> list[dict]:
    """The steps by group, each with what the page shows of it; ``links`` (from
    plan_links) adds the address of each skill, agent and credential it names."""
    links = links or {}
    groups = []
    for key, title, types in GROUPS:
        members = [dict(step) for step in steps if step["type"] in types]
        for step in members:
            if step["type"] == "skill.update":
                # Hidden characters written out, so a change made of them shows.
                step["diff_html"] = side_by_side(visible(step["old_body"]), visible(step["body"]))
            if step["type"] in ("skill.update", "skill.fork"):
                step["file_views"] = file_views(step.get("files", []))
            if step["type"] == "skill.fork":
                step.update(fork_views(step))
            slug = step.get("slug") or step.get("to")
            step["skill_url"] = links.get("skills", {}).get(slug, "")
            step["after_url"] = links.get("after", {}).get(slug, "")
            step["agent_url"] = links.get("agents", {}).get(step.get("agent"), "")
            step["credential_url"] = links.get("credentials", {}).get(step.get("name"), "")
        if members:
            group = {"key": key, "title": title, "steps": members}
            groups.append(group)
    return groups


def fork_views(step: dict) -> dict:
    """A fork's three texts aligned: base, yours and new, each region marked by who
    changed it (a conflict where both did differently), changed words marked."""
    base, mine, new = (visible(step.get(k) or "") for k in ("base_body", "mine_body", "body"))
    headings = fork_headings(step)
    merged = step.get("merged_body")
    chosen = {"keep": step.get("mine_body") or "", "merge": merged}.get(step.get("choice"))
    return {
        "three_html": aligned_three(base, mine, new, headings=headings),
        "headings": headings,
        # The merge as a change of the text here (what merging would do to it).
        "merge_diff_html": side_by_side(mine, visible(merged)) if merged is not None else "",
        # The size of the text the choice leaves, not always the catalog's.
        "chosen_size": size_facts(chosen) if chosen is not None else step.get("size"),
    }


# How the skill's latest revision here was made, as a fork's column says it.
MADE_BY = {"merge": "a merge Pixie made", "local": "an edit here", "rename": "a rename here",
           "import": "imported from a share", "catalog": "from the catalog"}  # fmt: skip


def fork_headings(step: dict) -> tuple[str, str, str]:
    """A fork's three columns, each saying what it is: the version the skill came from,
    the skill now (its revision and how it was made) and what the plan brings."""
    base = f"Base ({step['from_version']})" if step.get("from_version") else "Base"
    now = "Now"
    if step.get("mine_revision"):
        made = MADE_BY.get(step.get("mine_origin", ""), "")
        now = f"Now, r{step['mine_revision']}" + (f" ({made})" if made else "")
    return base, now, f"Incoming ({step['to_version']})"


# The steps after which a skill says something the plan chose: its page shows that text.
SKILL_TEXT_STEPS = ("skill.create", "skill.update", "skill.fork")


def skill_after(step: dict) -> dict:
    """Whose text a skill the plan creates, updates or forks will have once applied, and
    its body: the catalog's (created, updated, or a fork taken), the merge, or the owner's
    own (a fork kept). A merge also carries its merged fields and files."""
    choice = step.get("choice") if step["type"] == "skill.fork" else "take"
    if choice == "merge" and step.get("merged"):
        return {"source": "merge", "body": step["merged"]["body"], "merged": step["merged"]}
    if choice == "keep":
        return {"source": "yours", "body": step["mine_body"]}
    return {"source": "catalog", "body": step["body"]}


def plan_timeline(plan) -> list[dict]:
    """What happened to the plan, oldest first, each with who and when: proposed, then
    approved or rejected, applying, and how it ended."""
    State = type(plan).State
    # A plan Pixie prepared itself (after a yank) has no asker.
    asker = plan.created_by or ("Pixie" if plan.prepared_because else None)
    moments = [{"state": "proposed", "label": "Proposed", "who": asker,
                "when": plan.created_at}]  # fmt: skip
    if plan.status == State.REJECTED:
        moments.append({"state": "rejected", "label": "Rejected", "who": plan.decided_by,
                        "when": plan.decided_at, "note": plan.reject_reason})  # fmt: skip
        return moments
    if plan.decided_at:
        moments.append({"state": "approved", "label": "Approved", "who": plan.decided_by,
                        "when": plan.decided_at})  # fmt: skip
    if plan.started_at:
        moments.append({"state": "applying", "label": "Applying", "who": None,
                        "when": plan.started_at})  # fmt: skip
    ended = {State.APPLIED: "Applied", State.FAILED: "Failed", State.STALE: "Stale",
             State.SUPERSEDED: "Superseded"}  # fmt: skip
    if plan.status in ended:
        moments.append({"state": plan.status, "label": ended[plan.status], "who": None,
                        "when": plan.finished_at, "note": plan.error})  # fmt: skip
    return moments
