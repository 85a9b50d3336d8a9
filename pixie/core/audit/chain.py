"""Tamper evidence: every audit entry carries a digest chained to the one before it.

A change joins the chain of the workspace it changed, or the catalog's chain when it
changed the catalog (a promote, which publishes from a workspace, joins the catalog's;
so does a change to several workspaces). Its digest is SHA-256 over the previous digest
and everything the entry stands for: the revision's who, when and comment, the entry's
scope, path, plan and count, and each recorded object's kind, id, name and serialized
fields. Change any of those rows behind Pixie's back, delete one, or cut the chain's end,
and ``chain_verify`` names the first entry that no longer matches: auditors run it with
*Verify now* on the audit log, operators with ``manage.py audit_verify`` (a cron, say);
pixie.core.audit.checks keeps each walk's result.

Chains never fork. The chain's head row (AuditChain) is its lock: a writer takes it as
the last thing it does before it commits and takes nothing after it, so no two writers
wait on each other through it, whatever else they locked first (an apply locks its
workspace, then skills; an owner's edit locks the skill). The unique (chain, sequence)
constraint refuses a second entry at the same place even where the database has no row
locks (SQLite serializes its writers instead).

Three things the database alone cannot forge, since each is signed with the server's key
(SECRET_KEY, through Django's salted_hmac; its fallbacks are accepted while a key is
rotated): each chain's head, its length and last digest (``seal``), so entries cut from
the end with the head set back are found; the anchor, the list of chains (AuditAnchor),
so a chain deleted whole is found; and, from form 2, each entry's workspace is in its
digest, so an entry moved to another workspace no longer matches. A history row that no
entry covers (a revision written outside Pixie) is counted by the check and left out of
every History page. What still escapes: someone holding the server's key as well as the
database, and a whole database put back from an older copy. The page shows each chain's
head digest: a copy kept elsewhere settles those too.
"""

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import connections, router
from django.utils.crypto import constant_time_compare, salted_hmac
from reversion.models import Revision, Version

from pixie.core.models import AuditAnchor, AuditChain, AuditEntry, Workspace

CATALOG_CHAIN = "catalog"
VERIFY_CHUNK = 2000


def chain_key(scope: str, workspace_id: int | None) -> str:
    if scope == AuditEntry.Scope.WORKSPACE and workspace_id is not None:
        return f"workspace:{workspace_id}"
    return CATALOG_CHAIN


def _when(moment) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def entry_digest(*, previous: str, chain: str, sequence: int, revision: dict, entry: dict,
                 objects: list[tuple], form: int = 1) -> str:  # fmt: skip
    """The digest of one entry: plain values in, hex out (the writer, the checker and
    the migration that chained earlier entries all call this). Each form is fixed:
    changing one would break every chain already written; form 2 adds the workspace."""
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
    if form >= 2:
        payload["workspace"] = entry["workspace_key"]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# The entry's own fields in its digest; from form 2 its workspace_key too (not the
# workspace column, which deleting a workspace empties).
ENTRY_FIELDS = ("scope", "channel", "plan_id", "object_count")
FORM = 2  # the form entries are written in now

# Named for the module as it was when the first seals were made (pixie/audit_chain.py):
# a seal made under another salt would not open, so the name stays whatever moves.
SEAL_SALT = "pixie.audit_chain.seal"


def _seal(text: str, secret=None) -> str:
    return salted_hmac(SEAL_SALT, text, secret=secret, algorithm="sha256").hexdigest()


def head_text(key: str, length: int, head: str) -> str:
    return f"head|{key}|{length}|{head}"


def anchor_text(chains: str) -> str:
    return f"anchor|{chains}"


def seal(text: str) -> str:
    """``text`` signed with the server's key (SECRET_KEY)."""
    return _seal(text)


def sealed(text: str, signature: str) -> bool:
    """Whether ``signature`` is ``text``'s under the server's key or one of its fallbacks."""
    keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return any(constant_time_compare(_seal(text, key), signature) for key in keys)


def _object(label: str, version) -> tuple:
    return (label, version.object_id, version.db, version.format,
            version.serialized_data, version.object_repr)  # fmt: skip


def chain_extend(entry: AuditEntry, revision: Revision, versions) -> None:
    """Give the unsaved entry its place in its chain and its digest, under the chain's
    lock, and save it (in the revision's transaction)."""
    key = chain_key(entry.scope, entry.workspace_id)
    head = _lock_head(key)
    if head.length == 0:  # a new chain: the anchor names it from now on
        _anchor_include(key)
    entry.chain, entry.sequence = key, head.length + 1
    entry.workspace_key, entry.form = entry.workspace_id, FORM
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
        entry={name: getattr(entry, name) for name in (*ENTRY_FIELDS, "workspace_key")},
        objects=[_object(_label(v.content_type_id), v) for v in versions],
        form=FORM,
    )
    entry.save()
    AuditChain.objects.filter(pk=head.pk).update(
        length=entry.sequence,
        head=entry.digest,
        seal=seal(head_text(key, entry.sequence, entry.digest)),
    )


def _anchor_include(key: str) -> None:
    """Add a new chain to the anchor, resealed. Taken after a head's lock, only by a
    chain's first entry (a workspace's first change): rare, and never before a head."""
    connection = connections[router.db_for_write(AuditAnchor)]
    table = connection.ops.quote_name(AuditAnchor._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(  # only the model's own table name is formatted in
            f'INSERT INTO {table} ("id", "chains", "seal") VALUES (1, %s, %s) '  # noqa: S608
            f'ON CONFLICT ("id") DO UPDATE SET "seal" = {table}."seal" RETURNING "chains"',
            ["", ""],
        )
        (chains,) = cursor.fetchone()
    keys = sorted(set(chains.split()) | {key})
    text = "\n".join(keys)
    AuditAnchor.objects.filter(pk=1).update(chains=text, seal=seal(anchor_text(text)))


def _lock_head(key: str) -> AuditChain:
    """The chain's head row, locked; started if this is its first entry (a racing writer's
    start wins). One statement either way: an upsert that changes nothing takes the row's
    lock as SELECT ... FOR UPDATE would, and returns the row as it stands."""
    connection = connections[router.db_for_write(AuditChain)]
    table = connection.ops.quote_name(AuditChain._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(  # only the model's own table name is formatted in
            f'INSERT INTO {table} ("key", "length", "head", "seal") VALUES (%s, 0, %s, %s) '  # noqa: S608
            f'ON CONFLICT ("key") DO UPDATE SET "length" = {table}."length" '
            'RETURNING "id", "length", "head"',
            [key, "", ""],
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


def _workspace_problem(head: AuditChain, row: dict, existing: set[int]) -> str | None:
    """Whether the entry shows in a workspace's history other than the one it was written
    for (or was taken out of its own while that workspace still exists)."""
    written_for = row["workspace_key"]
    if head.key.startswith("workspace:") and written_for != int(head.key.split(":")[1]):
        return f"Chain {head.key}: {_entry_name(row)} names another workspace than its chain's."
    if row["workspace_id"] == written_for:
        return None
    if row["workspace_id"] is None and written_for not in existing:
        return None  # its workspace was deleted
    return (
        f"Chain {head.key}: {_entry_name(row)} was written for workspace #{written_for} and "
        f"now shows in {'no' if row['workspace_id'] is None else 'another'} workspace's "
        "history: it was moved outside Pixie."
    )


def _chain_problem(head: AuditChain, rows, revisions: dict, objects: dict, state: dict,
                   existing: set[int]):  # fmt: skip
    """The first problem in this chunk of a chain's rows, or None; ``state`` carries the
    previous digest and place across chunks; ``existing``: the workspaces the rows name
    that still exist."""
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
            form=row["form"],
        )
        if digest != row["digest"]:
            return (
                f"Chain {head.key}: {_entry_name(row)} no longer matches its digest: what it "
                "recorded (its revision, its objects or the entry) was changed after it was "
                "written."
            )
        moved = _workspace_problem(head, row, existing)
        if moved:
            return moved
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
                .values("revision_id", "sequence", "digest", "form", "workspace_id",
                        "workspace_key", *ENTRY_FIELDS)[:VERIFY_CHUNK]
            )  # fmt: skip
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
            existing = set(
                Workspace.objects.filter(
                    id__in={row["workspace_key"] for row in rows} - {None}
                ).values_list("id", flat=True)
            )
            report.entries += len(rows)
            problem = _chain_problem(head, rows, revisions, objects, state, existing)
        if problem is None and not sealed(head_text(head.key, head.length, head.head), head.seal):
            problem = (
                f"Chain {head.key}: its head ({head.length} entries) does not carry this "
                "server's seal: it was rewritten outside Pixie, as when entries are cut from "
                "its end and the head set back."
            )
        if problem is None and (state["sequence"], state["digest"]) != (head.length, head.head):
            problem = (
                f"Chain {head.key}: its head records {head.length} entries, but the last "
                f"found is place {state['sequence']}: entries were removed from its end."
            )
        if problem:
            report.problems.append(problem)
    report.problems += _anchor_problems(set(AuditChain.objects.values_list("key", flat=True)))
    report.problems += _uncovered_problems()
    report.unchained = AuditEntry.objects.filter(sequence__isnull=True).count()
    return report


def _anchor_problems(keys: set[str]) -> list[str]:
    """Chains deleted whole, or started, outside Pixie: the anchor against the heads."""
    anchor = AuditAnchor.objects.filter(pk=1).first()
    if anchor is None:
        return (
            ["The anchor of the chains is missing: it was deleted outside Pixie."] if keys else []
        )
    if not sealed(anchor_text(anchor.chains), anchor.seal):
        return ["The anchor of the chains does not carry this server's seal: it was "
                "rewritten outside Pixie."]  # fmt: skip
    anchored = set(anchor.chains.split())
    return [
        f"Chain {key} is gone: the anchor names it, and its head and entries were deleted "
        "outside Pixie."
        for key in sorted(anchored - keys)
    ] + [
        f"Chain {key} is not in the anchor: it was started outside Pixie."
        for key in sorted(keys - anchored)
    ]


SHOWN_UNCOVERED = 5


def _uncovered_problems() -> list[str]:
    """History rows (revisions) no audit entry covers: written outside Pixie. The History
    pages leave them out (pixie.core.audit.admin_history)."""
    uncovered = Revision.objects.filter(audit__isnull=True)
    count = uncovered.count()
    if not count:
        return []
    ids = ", ".join(
        f"#{pk}" for pk in uncovered.order_by("pk").values_list("pk", flat=True)[:SHOWN_UNCOVERED]
    )
    more = ", …" if count > SHOWN_UNCOVERED else ""
    return [
        f"{count} history row(s) no audit entry covers (revision {ids}{more}): written "
        "outside Pixie; the History pages do not show them."
    ]
