"""Findings of a bundle version's skills (catalog.findings), scanned when it is published
and kept with it; a version published before findings existed is scanned when first asked."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from catalog.finding_rules import guardrail_rules
from catalog.findings import REFUSE, Rule, body_line_offset, is_markdown, scan_skill
from catalog.models import BundleSkill, BundleVersion, FileBlob, SkillFile


@dataclass(frozen=True)
class SkillToScan:
    slug: str
    body: str
    body_offset: int  # body_line_offset
    markdown: tuple[tuple[str, str], ...]  # (path, sha256) of each Markdown file, sorted


@dataclass(frozen=True)
class ScanInputs:
    """Everything a version's findings depend on, the Markdown by digest: two equal
    inputs have the same findings (scan_inputs)."""

    skills: tuple[SkillToScan, ...]  # in the bundle's order
    hosts: tuple[str, ...]  # sorted
    credentials: tuple[str, ...]  # sorted
    rules: tuple[Rule, ...]


def scan_inputs_of(bundle_version: BundleVersion) -> ScanInputs:
    """The stored version's skills, files, hosts and credentials, and the rules in force
    (four queries, whatever the number of skills)."""
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
    markdown: dict[int, list[tuple[str, str]]] = {}
    for version_id, path, blob_id in SkillFile.objects.filter(
        skill_version_id__in=[e[0] for e in entries]
    ).values_list("skill_version_id", "path", "blob_id"):
        if is_markdown(path):
            markdown.setdefault(version_id, []).append((path, blob_id))
    return ScanInputs(
        skills=tuple(
            SkillToScan(
                slug=slug,
                body=body,
                body_offset=body_line_offset(skill_md, body),
                markdown=tuple(sorted(markdown.get(version_id, ()))),
            )
            for version_id, slug, body, skill_md in entries
        ),
        hosts=tuple(sorted(bundle_version.hosts.values_list("host", flat=True))),
        credentials=tuple(sorted(bundle_version.credentials.values_list("name", flat=True))),
        rules=guardrail_rules(),
    )


def markdown_texts(inputs: ScanInputs, blobs: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """The Markdown files' text by sha256: from ``blobs`` (bytes already in memory), the
    rest read from FileBlob (one query, none when ``blobs`` holds them all)."""
    wanted = {sha for skill in inputs.skills for _path, sha in skill.markdown}
    texts = _decoded(blobs or {}, wanted)
    if len(texts) < len(wanted):
        texts.update(
            (sha, bytes(content).decode("utf-8", errors="replace"))
            for sha, content in FileBlob.objects.filter(
                sha256__in=wanted - texts.keys()
            ).values_list("sha256", "content")
        )
    return texts


def _decoded(blobs: Mapping[str, bytes], wanted) -> dict[str, str]:
    return {sha: blobs[sha].decode("utf-8", errors="replace") for sha in wanted if sha in blobs}


def scan_inputs(inputs: ScanInputs, texts: Mapping[str, str]) -> list[dict]:
    """The findings of ``inputs``, the Markdown's text by sha256 (markdown_texts). Pure:
    no database, so it may run in another thread (ScanAside)."""
    return [
        finding.as_dict()
        for skill in inputs.skills
        for finding in scan_skill(
            skill=skill.slug,
            body=skill.body,
            markdown=[(path, texts.get(sha, "")) for path, sha in skill.markdown],
            hosts=inputs.hosts,
            credentials=inputs.credentials,
            rules=inputs.rules,
            body_offset=skill.body_offset,
        )
    ]


def _scan_in_memory(inputs: ScanInputs, blobs: Mapping[str, bytes]) -> list[dict]:
    wanted = {sha for skill in inputs.skills for _path, sha in skill.markdown}
    return scan_inputs(inputs, _decoded(blobs, wanted))


class ScanAside:
    """A scan of the inputs a load is about to store, run in a thread of its own once
    started (findings_scanned_aside); its findings stand for the stored version's only
    when the stored inputs equal these (findings_for)."""

    def __init__(self, inputs: ScanInputs, blobs: Mapping[str, bytes], pool: ThreadPoolExecutor):
        self.inputs, self._blobs, self._pool = inputs, blobs, pool
        self._findings: Future | None = None

    def start(self) -> None:
        """Start the scan: just before the files' bytes are stored, the longest wait on
        PostgreSQL, during which psycopg lets the thread run. Started sooner, each of the
        load's short statements would wait for the thread to hand Python back (up to
        5 ms each, sys.getswitchinterval)."""
        if self._findings is None:
            self._findings = self._pool.submit(_scan_in_memory, self.inputs, self._blobs)

    def findings_for(self, inputs: ScanInputs) -> list[dict] | None:
        """The findings of ``inputs`` if this scan was started over equal inputs, else None."""
        if self._findings is None or inputs != self.inputs:
            return None
        return self._findings.result()


@contextmanager
def findings_scanned_aside(inputs: ScanInputs, blobs: Mapping[str, bytes]):
    """A ScanAside of ``inputs``, the Markdown's bytes from ``blobs`` by sha256: the scan is
    Python over text in memory, the store mostly PostgreSQL's work. The thread touches no
    database (Django's connections are one a thread). Leaving the block waits for it."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="findings-scan") as pool:
        yield ScanAside(inputs, blobs, pool)


def bundle_version_scan(
    bundle_version: BundleVersion,
    *,
    blobs: Mapping[str, bytes] | None = None,
    aside: ScanAside | None = None,
) -> list[dict]:
    """Scan each skill's SKILL.md body and Markdown files against the bundle's hosts and
    credentials and the guardrail rules (five queries, whatever the number of skills).
    ``blobs``: file bytes already in memory by their sha256 (a load that has just stored
    them), not read back; the files scanned are still the stored version's. ``aside``: a
    scan of the same inputs made meanwhile (findings_scanned_aside), whose findings are
    taken when the stored version's inputs equal its own."""
    inputs = scan_inputs_of(bundle_version)
    found = aside.findings_for(inputs) if aside is not None else None
    return found if found is not None else scan_inputs(inputs, markdown_texts(inputs, blobs))


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
