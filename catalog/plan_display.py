"""Turn a plan's steps into the groups and diffs the plan page shows."""

from __future__ import annotations

import difflib

from django.utils.safestring import mark_safe

GROUPS = [
    ("skills", "Skills", ("skill.create", "skill.update", "skill.unchanged", "skill.remove")),
    ("renames", "Renamed or reused on arrival", ("skill.reslug", "skill.reuse")),
    ("forks", "Forks: skills you edited", ("skill.fork",)),
    ("network", "Network", ("egress.add", "egress.remove")),
    ("credentials", "Credentials", ("credential.require", "credential.remove")),
    ("approvals", "Approval rules", ("approval.rule",)),
    ("agents", "Agents", ("agent.attach", "agent.pinned", "agent.follows")),
    ("repoint", "Pins to move", ("repoint.move", "repoint.stay")),
]


def side_by_side(old: str, new: str) -> str:
    """A side-by-side diff table with changed words highlighted (difflib escapes the text)."""
    table = difflib.HtmlDiff(wrapcolumn=72).make_table(
        old.splitlines(), new.splitlines(), "before", "after", context=True, numlines=2
    )
    return mark_safe(table)  # noqa: S308 - HtmlDiff escapes every line it renders


def grouped_steps(steps: list[dict]) -> list[dict]:
    groups = []
    for key, title, types in GROUPS:
        members = [dict(step) for step in steps if step["type"] in types]
        for step in members:
            if step["type"] == "skill.update":
                step["diff_html"] = side_by_side(step["old_body"], step["body"])
        if members:
            groups.append({"key": key, "title": title, "steps": members})
    return groups
