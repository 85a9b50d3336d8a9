"""Findings of a bundle version's skills (catalog.findings), scanned when it is published
and kept with it; a version published before findings existed is scanned when first asked."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.finding_rules import guardrail_rules
from catalog.findings import REFUSE, body_line_offset, is_markdown, scan_skill
from catalog.models import BundleSkill, BundleVersion, FileBlob, SkillFile


def bundle_version_scan(
    bundle_version: BundleVersion, *, blobs: Mapping[str, bytes] | None = None
) -> list[dict]:
    """Scan each skill's SKILL.md body and Markdown files against the bundle's hosts and
    credentials and the guardrail rules (five queries, whatever the number of skills).
    ``blobs``: file bytes already in memory by their sha256 (a load that has just stored
    them), not read back; the files scanned are still the stored version's."""
    entries = list(
        BundleSkill.objects.filter(bundle_version=bundle_version)
        .order_by("position", "id")
        .values_list(
            "skill_version_id",
            "skill_version__package__slug",
            "skill_version__body",
            "skill_version__skill_md",
        )
    )
    files = [
        (version_id, path, blob_id)
        for version_id, path, blob_id in SkillFile.objects.filter(
            skill_version_id__in=[e[0] for e in entries]
        ).values_list("skill_version_id", "path", "blob_id")
        if is_markdown(path)
    ]
    known = blobs or {}
    wanted = {f[2] for f in files}
    texts = {sha: known[sha].decode("utf-8", errors="replace") for sha in wanted if sha in known}
    if len(texts) < len(wanted):
        texts.update(
            (sha, bytes(content).decode("utf-8", errors="replace"))
            for sha, content in FileBlob.objects.filter(
                sha256__in=wanted - texts.keys()
            ).values_list("sha256", "content")
        )
    markdown: dict[int, list[tuple[str, str]]] = {}
    for version_id, path, sha in files:
        markdown.setdefault(version_id, []).append((path, texts.get(sha, "")))
    hosts = list(bundle_version.hosts.values_list("host", flat=True))
    credentials = list(bundle_version.credentials.values_list("name", flat=True))
    rules = guardrail_rules()
    return [
        finding.as_dict()
        for version_id, slug, body, skill_md in entries
        for finding in scan_skill(
            skill=slug,
            body=body,
            markdown=markdown.get(version_id, ()),
            hosts=hosts,
            credentials=credentials,
            rules=rules,
            body_offset=body_line_offset(skill_md, body),
        )
    ]


def bundle_version_findings(bundle_version: BundleVersion) -> list[dict]:
    """The version's findings: those kept since it was published, or (a draft, or a version
    published before findings existed) scanned now, and kept if it is published."""
    if bundle_version.findings is not None:
        return bundle_version.findings
    findings = bundle_version_scan(bundle_version)
    if not bundle_version.is_draft:
        # Findings are not content: a published version's may be written (guard allows).
        BundleVersion.objects.filter(pk=bundle_version.pk).update(findings=findings)
        bundle_version.findings = findings
    return findings


def refusing(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["severity"] == REFUSE]


def finding_line(finding: dict) -> str:
    """One finding in a sentence: where, what, and the text around it."""
    line = f" line {finding['line']}" if finding["line"] else ""
    return (
        f"@{finding['skill']} {finding['file']}{line}: {finding['message']}: “{finding['excerpt']}”"
    )
