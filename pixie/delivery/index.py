"""What a delivery token serves: the Agent Skills discovery index (v0.2.0) of one agent or
of the workspace, each skill as the revision it resolves to, and what is left out and why.

An agent's index holds its enabled attachments whose skill is advertised, in its order, at
the revision each resolves to (a pin honoured; an agent's override is that agent's body,
so its archive differs from the workspace's). The workspace's holds every advertised
skill at its head. A skill the ``skills`` client would refuse or skip (its name, its size)
is left out and listed with the reason, for the pages.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from django.db import connection

from agents.models import AgentSkill
from catalog.models import Installation, RevisionFile, WorkspaceSkill
from catalog.skill_files_display import revision_skill_md_of

from .archives import ArchiveFile, SkillContent, digests_of
from .models import DeliveryToken

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
    installation_id: int | None = None  # the installed bundle that brought the skill

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


# The rows a token's index is computed from, as text: an agent's attachments and their
# skills, or the workspace's skills. Revisions, overrides and files never change once
# written, so their ids say all of them: two reads with the same state serve the same
# index (views.served keeps it by this). The rows come in no promised order: another
# order costs a miss there, never a wrong answer.
_AGENT_ROW = ("a.id", "a.position", "a.enabled", "a.pinned_revision_id", "a.override_id",
              "s.id", "s.slug", "s.head_id", "s.advertised", "s.archived_at")  # fmt: skip
_SKILL_ROW = ("s.id", "s.slug", "s.head_id", "s.advertised", "s.archived_at",
              "s.installation_id")  # fmt: skip
# A workspace's installations, for its marketplace: each bundle a plugin, at its version.
_INSTALLATION_ROW = ("i.id", "i.bundle_version_id")
_JOINED = {"postgresql": "string_agg({row}, '|')", "sqlite": "group_concat({row}, '|')"}


def _row(columns) -> str:
    return " || ':' || ".join(f"COALESCE(CAST({c} AS TEXT), '')" for c in columns)


@functools.cache
def _token_with_state(vendor: str) -> str:
    joined = _JOINED[vendor]
    tokens = DeliveryToken._meta.db_table
    attachments, skills = AgentSkill._meta.db_table, WorkspaceSkill._meta.db_table
    installations = Installation._meta.db_table
    # Table names from the models; the key hash is a parameter.
    return (
        f"SELECT t.id, t.workspace_id, t.agent_id, t.key_hash, t.last_used_at, "  # noqa: S608
        f"CASE WHEN t.agent_id IS NULL THEN "
        f"COALESCE((SELECT {joined.format(row=_row(_SKILL_ROW))} FROM {skills} s "
        f"WHERE s.workspace_id = t.workspace_id), '') || '#' || "
        f"COALESCE((SELECT {joined.format(row=_row(_INSTALLATION_ROW))} FROM {installations} i "
        f"WHERE i.workspace_id = t.workspace_id), '') "
        f"ELSE (SELECT {joined.format(row=_row(_AGENT_ROW))} FROM {attachments} a "
        f"JOIN {skills} s ON s.id = a.skill_id WHERE a.agent_id = t.agent_id) "
        f"END AS state FROM {tokens} t WHERE t.key_hash = %s AND t.revoked_at IS NULL"
    )


def token_with_state_sql() -> str:
    """The statement that reads a live token by its key hash, with its index's state."""
    return _token_with_state(connection.vendor)


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
        _add_workspace_rows(groups, workspace_ids)
    indexes = _indexes(groups)
    return {
        token.pk: indexes[
            ("agent", token.agent_id) if token.agent_id else ("workspace", token.workspace_id)
        ]
        for token in tokens
    }


def workspace_indexes(workspace_ids) -> dict[int, Index]:
    """Each workspace's index (every advertised skill at its head) by its id."""
    groups: dict[tuple[str, int], list] = {("workspace", pk): [] for pk in workspace_ids}
    _add_workspace_rows(groups, workspace_ids)
    indexes = _indexes(groups)
    return {pk: indexes[("workspace", pk)] for pk in workspace_ids}


def _add_workspace_rows(groups: dict, workspace_ids) -> None:
    skills = (
        WorkspaceSkill.objects.filter(
            workspace_id__in=workspace_ids, archived_at__isnull=True, head__isnull=False
        )
        .select_related("head__upstream__package")
        .order_by("slug")
    )
    for skill in skills:
        groups[("workspace", skill.workspace_id)].append((skill, skill.head, None))


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
        installation_id=skill.installation_id,
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
