"""What a delivery token serves: the Agent Skills discovery index (v0.2.0) of one agent or
of the workspace, each skill as the revision it resolves to, and what is left out and why.

An agent's index holds its enabled attachments whose skill is advertised, in its order, at
the revision each resolves to (a pin honoured; an agent's override is that agent's body,
so its archive differs from the workspace's). The workspace's holds every advertised
skill at its head. A skill the ``skills`` client would refuse or skip (its name, its size)
is left out and listed with the reason, for the pages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agents.models import AgentSkill
from catalog.models import RevisionFile, WorkspaceSkill
from catalog.skill_files_display import revision_skill_md_of

from .archives import ArchiveFile, SkillContent, digests_of

SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
NOT_ADVERTISED = "not advertised (promote it to deliver it)"


@dataclass
class Entry:
    """One skill as a token serves it (``refusal`` "" when it is served)."""

    skill_id: int
    slug: str
    revision_id: int
    revision_number: int
    override_id: int | None
    content: SkillContent | None
    digest: str = ""
    refusal: str = ""

    @property
    def served(self) -> bool:
        return not self.refusal

    @property
    def archive_path(self) -> str:
        """The archive's address under the delivery base URL."""
        return f"archives/{self.slug}/{self.digest}.zip"


@dataclass
class Index:
    entries: list[Entry]

    @property
    def served(self) -> list[Entry]:
        return [entry for entry in self.entries if entry.served]

    @property
    def left_out(self) -> list[Entry]:
        return [entry for entry in self.entries if not entry.served]

    def document(self, archive_prefix: str) -> dict:
        """The index as JSON; each ``url`` is ``archive_prefix`` + the archive's path,
        which the client resolves against the index's own URL."""
        return {
            "$schema": SCHEMA,
            "skills": [
                {
                    "name": entry.slug,
                    "type": "archive",
                    "description": entry.content.description,
                    "url": archive_prefix + entry.archive_path,
                    "digest": f"sha256:{entry.digest}",
                }
                for entry in self.served
            ],
        }

    def body(self, archive_prefix: str) -> bytes:
        return json.dumps(self.document(archive_prefix), indent=1, ensure_ascii=False).encode()

    def find(self, slug: str, digest: str) -> Entry | None:
        for entry in self.served:
            if entry.slug == slug and entry.digest == digest:
                return entry
        return None


def token_index(token) -> Index:
    """What ``token`` serves now (a bounded number of queries, whatever the skills)."""
    return tokens_indexes([token])[token.pk]


def tokens_indexes(tokens) -> dict[int, Index]:
    """Each token's index by its id, for many tokens at once (the clients page): one
    query for the agents' attachments, one for the workspaces' skills, one for every
    revision's files and one for the archives' digests, whatever the number of tokens."""
    agent_ids = {token.agent_id for token in tokens if token.agent_id is not None}
    workspace_ids = {token.workspace_id for token in tokens if token.agent_id is None}
    groups: dict[tuple[str, int], list] = {("agent", pk): [] for pk in agent_ids}
    groups.update({("workspace", pk): [] for pk in workspace_ids})
    if agent_ids:
        attachments = (
            AgentSkill.objects.filter(
                agent_id__in=agent_ids, enabled=True, skill__archived_at__isnull=True
            )
            .select_related(
                "skill__head__upstream__package", "pinned_revision__upstream__package", "override"
            )
            .order_by("agent_id", "position", "id")
        )
        for attachment in attachments:
            revision = attachment.pinned_revision or attachment.skill.head
            if revision is not None:
                row = (attachment.skill, revision, attachment.override)
                groups[("agent", attachment.agent_id)].append(row)
    if workspace_ids:
        skills = (
            WorkspaceSkill.objects.filter(
                workspace_id__in=workspace_ids, archived_at__isnull=True, head__isnull=False
            )
            .select_related("head__upstream__package")
            .order_by("slug")
        )
        for skill in skills:
            groups[("workspace", skill.workspace_id)].append((skill, skill.head, None))
    indexes = _indexes(groups)
    return {
        token.pk: indexes[
            ("agent", token.agent_id) if token.agent_id else ("workspace", token.workspace_id)
        ]
        for token in tokens
    }


def _indexes(groups: dict) -> dict:
    """An Index for each group of (skill, revision, override) rows, in the rows' order."""
    every = [row for rows in groups.values() for row in rows]
    files: dict[int, list[ArchiveFile]] = {}
    revision_ids = {revision.pk for skill, revision, _ in every if skill.advertised}
    if revision_ids:
        found = (
            RevisionFile.objects.filter(revision_id__in=revision_ids)
            .order_by("path")
            .values_list("revision_id", "path", "blob_id", "size", "executable")
        )
        for revision_id, path, sha256, size, executable in found:
            files.setdefault(revision_id, []).append(ArchiveFile(path, sha256, size, executable))
    indexes = {key: Index([_entry(row, files) for row in rows]) for key, rows in groups.items()}
    served = [entry for index in indexes.values() for entry in index.served]
    digests = digests_of([entry.content for entry in served])
    for entry in served:
        entry.digest = digests[entry.content.content_key]
    return indexes


def _entry(row, files) -> Entry:
    skill, revision, override = row
    entry = Entry(
        skill_id=skill.pk,
        slug=skill.slug,
        revision_id=revision.pk,
        revision_number=revision.number,
        override_id=override.pk if override else None,
        content=None,
    )
    if not skill.advertised:
        entry.refusal = NOT_ADVERTISED
        return entry
    entry.content = SkillContent(
        slug=skill.slug,
        description=revision.short_description,
        skill_md=revision_skill_md_of(skill.slug, revision, override.body if override else None),
        files=files.get(revision.pk, []),
    )
    entry.refusal = entry.content.refusal()
    return entry
