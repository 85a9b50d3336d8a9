"""Turn a plan's steps into the groups and diffs the plan page shows."""

from __future__ import annotations

from catalog.diff_display import file_views, side_by_side

from .steps import Step

GROUPS = [
    (
        "skills",
        "Skills",
        ("skill.create", "skill.update", "skill.unchanged", "skill.remove", "bundle.size"),
    ),
    ("renames", "Renamed or reused on arrival", ("skill.reslug", "skill.reuse")),
    ("forks", "Forks and overrides: text you wrote", ("skill.fork", "agent.override")),
    ("network", "Network", ("egress.add", "egress.remove")),
    ("credentials", "Credentials", ("credential.require", "credential.remove")),
    ("approvals", "Approval rules", ("approval.rule",)),
    ("agents", "Agents", ("agent.attach", "agent.has", "agent.pinned", "agent.follows")),
    ("repoint", "Pins to move", ("repoint.move", "repoint.stay")),
]


def grouped_steps(steps: list[Step]) -> list[dict]:
    groups = []
    for key, title, types in GROUPS:
        members = [dict(step) for step in steps if step["type"] in types]
        for step in members:
            if step["type"] == "skill.update":
                step["diff_html"] = side_by_side(step["old_body"], step["body"])
            if step["type"] in ("skill.update", "skill.fork"):
                step["file_views"] = file_views(step.get("files", []))
        if members:
            groups.append({"key": key, "title": title, "steps": members})
    return groups
