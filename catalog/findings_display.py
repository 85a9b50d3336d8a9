"""Findings as every page shows them: grouped by rule, refusals first.

A real bundle raises the same warning a hundred times; grouped, it reads once, with how
many times, in how many skills, and every place. The plan page, a bundle version's page,
the publish confirmation and the upload preview all draw this one block
(templates/admin/catalog/includes/findings.html).
"""

from __future__ import annotations

from .findings import SEVERITIES


def finding_rules(findings: list[dict]) -> list[dict]:
    """The findings by rule (severity, kind and message alike), each with its count, the
    number of skills it is in and its places. A finding names its skill as ``skill``
    (catalog.findings) or ``slug`` (a plan's step); ``reason`` is optional."""
    rules: dict[tuple, dict] = {}
    for finding in findings:
        key = (finding["severity"], finding["kind"], finding["message"])
        rule = rules.setdefault(
            key,
            {
                "severity": finding["severity"],
                "kind": finding["kind"],
                "message": finding["message"],
                "reason": finding.get("reason", ""),
                "places": [],
                "skills": set(),
            },
        )
        place = dict(finding)
        place.setdefault("slug", finding.get("skill", ""))
        rule["places"].append(place)
        if place["slug"]:
            rule["skills"].add(place["slug"])
    ordered = sorted(
        rules.values(), key=lambda r: (SEVERITIES.index(r["severity"]), -len(r["places"]))
    )
    for rule in ordered:
        rule["count"], rule["skills"] = len(rule["places"]), len(rule["skills"])
    return ordered


def findings_block(findings: list[dict], *, block_id: str = "findings") -> dict:
    """What the findings include needs: the rules, the count of each severity, the total."""
    rules = finding_rules(findings)
    return {
        "id": block_id,
        "rules": rules,
        "total": len(findings),
        "severities": {
            severity: sum(r["count"] for r in rules if r["severity"] == severity)
            for severity in SEVERITIES
        },
    }
