"""Tamper evidence: every audit entry carries a digest chained to the one before it.

A change joins the chain of the workspace it changed, or the catalog's chain when it
changed the catalog (a promote, which publishes from a workspace, joins the catalog's;
so does a change to several workspaces). Its digest is SHA-256 over the previous digest
and everything the entry stands for: the revision's who, when and comment, the entry's
scope, path, plan and count, and each recorded object's kind, id, name and serialized
fields. Change any of those rows behind Pixie's back, delete one, or cut the chain's end,
and ``chain_verify`` (manage.py audit_verify) names the first entry that no longer
matches.

Chains never fork. The chain's head row (AuditChain) is its lock: a writer takes it as
the last thing it does before it commits and takes nothing after it, so no two writers
wait on each other through it, whatever else they locked first (an apply locks its
workspace, then skills; an owner's edit locks the skill). The unique (chain, sequence)
constraint refuses a second entry at the same place even where the database has no row
locks (SQLite serializes its writers instead).

The chain shows what changed after it was written; it cannot stop someone who can run
Pixie's own code against the database from rewriting a chain whole. The page shows each
chain's head digest: a copy kept elsewhere settles that too.
"""

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC

from django.contrib.contenttypes.models import ContentType
from django.db import connections, router
from reversion.models import Revision, Version

from .models import AuditChain, AuditCheck, AuditEntry

CATALOG_CHAIN = "catalog"
VERIFY_CHUNK = 2000


def chain_key(scope: str, workspace_id: int | None) -> str:
    if scope == AuditEntry.Scope.WORKSPACE and workspace_id is not None:
        return f"workspace:{workspace_id}"
    return CATALOG_CHAIN


def _when(moment) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def entry_digest(*, previous: str, chain: str, sequence: int, revision: dict, entry: dict,
                 objects: list[tuple]) -> str:  # fmt: skip
    """The digest of one entry: plain values in, hex out (the writer, the checker and
    the migration that chained earlier entries all call this). Its format is fixed:
    changing it would break every chain already written."""
    payload = {
        "previous": previous,
        "chain": chain,
        "sequence": sequence,
        "revision": {
            "id": revision["id"],
            "at": _when(revision["date_created"]),
            "user": revision["user_id"],
            "comment": revision["comment"],
        },
        "entry": {key: entry[key] for key in sorted(ENTRY_FIELDS)},
        "objects": sorted(objects),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# The entry's own fields in its digest. Not its workspace: deleting a workspace empties
# that column (the chain's key and the recorded objects still name it).
ENTRY_FIELDS = ("scope", "channel", "plan_id", "object_count")


def _object(label: str, version) -> tuple:
    return (label, version.object_id, version.db, version.format,
            version.serialized_data, version.object_repr)  # fmt: skip


def chain_extend(entry: AuditEntry, revision: Revision, versions) -> None:
    """Give the unsaved entry its place in its chain and its digest, under the chain's
    lock, and save it (in the revision's transaction)."""
    key = chain_key(entry.scope, entry.workspace_id)
    head = _lock_head(key)
    entry.chain, entry.sequence = key, head.length + 1
    entry.digest = entry_digest(
        previous=head.head,
        chain=key,
        sequence=entry.sequence,
        revision={
            "id": revision.pk,
            "date_created": revision.date_created,
            "user_id": revision.user_id,
            "comment": revision.comment,
        },
        entry={name: getattr(entry, name) for name in ENTRY_FIELDS},
        objects=[_object(_label(v.content_type_id), v) for v in versions],
    )
    entry.save()
    AuditChain.objects.filter(pk=head.pk).update(length=entry.sequence, head=entry.digest)


def _lock_head(key: str) -> AuditChain:
    """The chain's head row, locked; started if this is its first entry (a racing writer's
    start wins). One statement either way: an upsert that changes nothing takes the row's
    lock as SELECT ... FOR UPDATE would, and returns the row as it stands."""
    connection = connections[router.db_for_write(AuditChain)]
    table = connection.ops.quote_name(AuditChain._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(  # only the model's own table name is formatted in
            f'INSERT INTO {table} ("key", "length", "head") VALUES (%s, 0, %s) '  # noqa: S608
            f'ON CONFLICT ("key") DO UPDATE SET "length" = {table}."length" '
            'RETURNING "id", "length", "head"',
            [key, ""],
        )
        pk, length, head = cursor.fetchone()
    return AuditChain(pk=pk, key=key, length=length, head=head)


def _label(content_type_id: int) -> str:
    kind = ContentType.objects.get_for_id(content_type_id)  # cached for the process
    return f"{kind.app_label}.{kind.model}"


# --- checking ------------------------------------------------------------------------


@dataclass
class ChainReport:
    entries: int = 0
    chains: int = 0
    unchained: int = 0
    problems: list[str] = field(default_factory=list)


def _entry_name(row: dict) -> str:
    return f"the entry of revision #{row['revision_id']} (place {row['sequence']})"


def _chain_problem(head: AuditChain, rows, revisions: dict, objects: dict, state: dict):
    """The first problem in this chunk of a chain's rows, or None; ``state`` carries the
    previous digest and place across chunks."""
    for row in rows:
        expected = state["sequence"] + 1
        if row["sequence"] != expected:
            return (
                f"Chain {head.key}: place {expected} is missing before {_entry_name(row)}: "
                "an entry was deleted."
            )
        revision = revisions.get(row["revision_id"])
        if revision is None:  # unreachable while entries cascade with revisions
            return f"Chain {head.key}: {_entry_name(row)} has lost its revision."
        digest = entry_digest(
            previous=state["digest"],
            chain=head.key,
            sequence=row["sequence"],
            revision=revision,
            entry=row,
            objects=objects.get(row["revision_id"], []),
        )
        if digest != row["digest"]:
            return (
                f"Chain {head.key}: {_entry_name(row)} no longer matches its digest: what it "
                "recorded (its revision, its objects or the entry) was changed after it was "
                "written."
            )
        state["sequence"], state["digest"] = row["sequence"], row["digest"]
    return None


def chain_verify() -> ChainReport:
    """Walk every chain from its start; name the first entry of each that no longer
    matches. Reads a chunk of entries, their revisions and objects, a few queries a
    chunk."""
    report = ChainReport()
    for head in AuditChain.objects.order_by("key"):
        report.chains += 1
        state = {"sequence": 0, "digest": ""}
        problem = None
        while problem is None:
            rows = list(
                AuditEntry.objects.filter(chain=head.key, sequence__gt=state["sequence"])
                .order_by("sequence")
                .values("revision_id", "sequence", "digest", *ENTRY_FIELDS)[:VERIFY_CHUNK]
            )
            if not rows:
                break
            ids = [row["revision_id"] for row in rows]
            revisions = {
                r["id"]: r
                for r in Revision.objects.filter(pk__in=ids).values(
                    "id", "date_created", "user_id", "comment"
                )
            }
            objects: dict[int, list] = {}
            for version in Version.objects.filter(revision_id__in=ids).only(
                "revision_id", "content_type_id", "object_id", "db", "format",
                "serialized_data", "object_repr",
            ):  # fmt: skip
                objects.setdefault(version.revision_id, []).append(
                    _object(_label(version.content_type_id), version)
                )
            report.entries += len(rows)
            problem = _chain_problem(head, rows, revisions, objects, state)
        if problem is None and (state["sequence"], state["digest"]) != (head.length, head.head):
            problem = (
                f"Chain {head.key}: its head records {head.length} entries, but the last "
                f"found is place {state['sequence']}: entries were removed from its end."
            )
        if problem:
            report.problems.append(problem)
    report.unchained = AuditEntry.objects.filter(sequence__isnull=True).count()
    return report


def chain_check() -> AuditCheck:
    """Verify every chain and keep what was found, for the audit page."""
    report = chain_verify()
    return AuditCheck.objects.create(
        entries=report.entries,
        chains=report.chains,
        problems=report.problems,
        unchained=report.unchained,
    )
