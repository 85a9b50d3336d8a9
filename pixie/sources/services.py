"""Checking a source: its repository fetched into its mirror, the skill folders at the
ref's commit read as a bundle folder, and an upstream change turned into a draft version
an operator reviews (issue #43). Nothing from upstream is published here.

A discovery index source (Source.Kind.INDEX) differs only until its skills are a folder:
the index is read, its chosen entries' digest compared with the one last recorded (the
same: unchanged, nothing downloaded), and each entry downloaded, checked against its
digest and written out (index_read). From the folder on, both kinds take one path
(_from_folder): read, compare, choose the version, make the draft.

One worker checks a source at a time: the check holds the source's row locked
(``select_for_update(skip_locked=True)``: a second check at the same moment finds it
taken and does nothing) from before the fetch to the end of its writes. Every write (the
draft, the waiting draft it replaces, the source's state) is one transaction, recorded
in the history; a check that fails leaves words on the source and nothing half-made (the
mirror is left as it was by mirror_fetch, and a mirror that moved past a commit the
database never recorded is compared with the commit the database did record).
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import reversion
import tomli_w
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from catalog.bundle_files import MANIFEST_KEYS, BundleFileError, BundleSpec, read_bundle_folder
from catalog.manifest import Provenance
from catalog.models import Bundle, BundleVersion, Status
from catalog.services.bundle_load import bundle_load, bundle_version_holds
from catalog.services.drafts import bundle_version_draft_discard
from catalog.validators import is_credential_name, version_key
from pixie.core.audit.records import audited
from pixie.core.errors import DestinationRefused, ErrorCode, PixieError
from pixie.core.notifications.service import Kind, notify_operators

from .git_mirror import FetchFailed, FetchResult, Movement, mirror_fetch
from .index_fetch import HttpReader
from .index_format import entries_choose, index_digest
from .index_read import entries_message, entries_write, index_fetch
from .models import Source
from .tree_export import folder_tree, skill_folders_find, tree_export, tree_list
from .upstream_text import upstream_line

Result = Source.Result
# bundle.toml's keys an operator gives in a source's metadata (``skills`` and ``version``
# are the source's to say: its folder list, and the version a check chooses).
METADATA_KEYS = MANIFEST_KEYS - {"skills", "version"}
PLACEHOLDER_VERSION = "0.0.0"
MESSAGE_MAX = 2000
# An index draft's provenance: the index's URL as its repository, this as its ref, and
# the chosen entries' digest (index_format.index_digest) as its commit.
INDEX_REF = "discovery-index/0.2.0"


@dataclass(frozen=True)
class CheckOutcome:
    """What one check found, before it is written."""

    result: str
    message: str
    commit: str = ""  # the commit to record as seen ("" keeps the last one)
    spec: BundleSpec | None = None  # the draft to make
    provenance: Provenance | None = None


class SourceBusy(PixieError):
    """Another check of the source holds it."""

    code = ErrorCode.CONFLICT
    status = 409


def source_mirror(source: Source) -> Path:
    return Path(settings.DATA_DIR) / "sources" / f"{source.pk}.git"


def sources_due(*, now=None):
    """The unpaused sources whose check is due (never checked, or past next_check_at)."""
    now = now or timezone.now()
    return Source.objects.filter(paused=False).exclude(next_check_at__gt=now).order_by("pk")


def source_check(source: Source, *, actor=None) -> Source:
    """Check ``source`` now and record what was found on it (``last_result``,
    ``last_message``); returns the source as recorded. Raises SourceBusy when another
    check holds it (nothing is written)."""
    with transaction.atomic():
        locked = (
            Source.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("bundle__publisher", "waiting_draft")
            .filter(pk=source.pk)
            .first()
        )
        if locked is None:
            if Source.objects.filter(pk=source.pk).exists():
                raise SourceBusy(f"Source #{source.pk} is being checked by another worker")
            raise SourceBusy(f"Source #{source.pk} no longer exists")
        outcome = _outcome(locked)
        if outcome.spec is not None:
            try:
                with transaction.atomic():
                    _draft_make(locked, outcome, actor=actor)
                return locked
            except (BundleFileError, PixieError) as exc:
                locked.refresh_from_db()
                spec = outcome.spec
                outcome = CheckOutcome(
                    Result.FAILED,
                    f"{outcome.message}; the draft {spec.slug} {spec.version} could not be "
                    f"made: {_words(exc)}",
                )
        _record(locked, outcome, actor=actor)
    return locked


# Finding out


def _outcome(source: Source) -> CheckOutcome:
    """Fetch, read and compare: no database write."""
    if source.kind == Source.Kind.INDEX:
        return _index_outcome(source)
    if source.kind != Source.Kind.GIT:
        return CheckOutcome(Result.FAILED, f"A source of kind {source.kind!r} cannot be checked")
    if source.credential_variable and not is_credential_name(source.credential_variable):
        return CheckOutcome(
            Result.FAILED,
            f"{source.credential_variable!r} is not the name of an environment variable",
        )
    mirror = source_mirror(source)
    try:
        fetched = mirror_fetch(
            mirror,
            source.url,
            source.ref,
            since=source.last_commit or None,
            credential_variable=source.credential_variable or None,
        )
    except (FetchFailed, DestinationRefused) as exc:
        return CheckOutcome(Result.FAILED, _words(exc))
    movement = fetched.movement
    if movement == Movement.VANISHED:
        return CheckOutcome(Result.VANISHED, fetched.report)
    if movement == Movement.REWRITTEN:
        return CheckOutcome(
            Result.REWRITTEN, f"{fetched.report}; no draft is made from a rewritten history"
        )
    if movement == Movement.BACKWARDS:
        return CheckOutcome(
            Result.BACKWARDS, f"{fetched.report}; no draft is made from an earlier commit"
        )
    # Unchanged since the commit the source recorded. A mirror already at a commit the
    # source never recorded (an accepted rewrite, a changed folder or list: the record was
    # cleared to read afresh) is read and compared.
    if (
        movement == Movement.UNCHANGED
        and source.bundle_id is not None
        and fetched.commit.sha == source.last_commit
    ):
        return CheckOutcome(Result.UNCHANGED, fetched.report, commit=fetched.commit.sha)
    return _read(source, mirror, fetched)


def _read(source: Source, mirror: Path, fetched: FetchResult) -> CheckOutcome:
    commit = fetched.commit
    if gone := _listed_folders_gone(source, mirror, commit.sha):
        return CheckOutcome(
            Result.FOLDER_GONE,
            f"{fetched.report}; the skill folder{'s' if len(gone) > 1 else ''} "
            f"{', '.join(gone)} listed by the source {'are' if len(gone) > 1 else 'is'} not in "
            "the repository at this commit (moved or removed): no draft is made; change the "
            "source's list of skill folders",
        )
    with tempfile.TemporaryDirectory(prefix="pixie-source-") as work:
        into = Path(work) / "bundle"
        try:
            exported = tree_export(
                mirror=mirror,
                commit=commit.sha,
                into=into,
                folder=source.folder,
                names=list(source.skills) or None,
            )
        except BundleFileError as exc:
            return CheckOutcome(Result.FAILED, f"{fetched.report}; {_words(exc)}")
        provenance = Provenance(
            repository=source.url,
            ref=source.ref,
            commit=commit.sha,
            committed_at=commit.date,
            author=commit.author,
            message=commit.message,
        )
        upstream = Upstream(
            report=fetched.report,
            commit=commit.sha,
            provenance=provenance,
            skills=[skill.name for skill in exported.skills],
            manifest=exported.manifest is not None,
            tagged=commit.versions,
        )
        return _from_folder(source, into, upstream)


def _index_outcome(source: Source) -> CheckOutcome:
    """A discovery index: read it, and when its chosen entries' digest is not the one
    the last check recorded, download them (each checked against its digest) into a
    bundle folder."""
    if source.credential_variable:
        return CheckOutcome(
            Result.FAILED,
            "A discovery index is read without a token: clear the source's token variable",
        )
    reader = HttpReader(
        allow_private=settings.PIXIE_SOURCES_ALLOW_PRIVATE,
        seconds=settings.PIXIE_SOURCES_FETCH_SECONDS,
        budget=settings.PIXIE_SOURCES_MAX_BYTES,
    )
    try:
        found = index_fetch(reader, source.url)
    except (FetchFailed, DestinationRefused, BundleFileError) as exc:
        return CheckOutcome(Result.FAILED, _words(exc))
    entries, missing = entries_choose(found.index, list(source.skills) or None)
    digest = index_digest(entries)
    report = _index_report(source, found, entries, digest)
    if missing:
        many = len(missing) > 1
        return CheckOutcome(
            Result.FOLDER_GONE,
            f"{report}; the skill{'s' if many else ''} {', '.join(missing)} listed by the "
            f"source {'are' if many else 'is'} not in the index (removed, renamed, or of a "
            "type Pixie does not read): no draft is made; change the source's list of skills",
        )
    if not entries:
        return CheckOutcome(
            Result.FAILED, f"{report}; it lists no skill of a type Pixie reads (archive, skill-md)"
        )
    if digest == source.last_commit and source.bundle_id is not None:
        return CheckOutcome(Result.UNCHANGED, report, commit=digest)
    with tempfile.TemporaryDirectory(prefix="pixie-source-") as work:
        into = Path(work) / "bundle"
        try:
            entries_write(reader, found, entries, into)
        except (FetchFailed, DestinationRefused, BundleFileError) as exc:
            return CheckOutcome(Result.FAILED, f"{report}; {_words(exc)}")
        provenance = Provenance(
            repository=source.url,
            ref=INDEX_REF,
            commit=digest,
            message=entries_message(entries),
        )
        upstream = Upstream(
            report=report,
            commit=digest,
            provenance=provenance,
            skills=[entry.name for entry in entries],
        )
        return _from_folder(source, into, upstream)


def _index_report(source: Source, found, entries, digest: str) -> str:
    one = len(entries) == 1
    count = f"{len(entries)} skill{'' if one else 's'}"
    last = source.last_commit
    if not last:
        said = f"the index lists {count} at {digest[:12]}"
    elif last == digest:
        said = f"the index's {count} {'is' if one else 'are'} still at {digest[:12]}"
    else:
        said = f"the index's {count} moved from {last[:12]} to {digest[:12]}"
    if skipped := found.index.skipped:
        more = f" and {len(skipped) - 5:,} more" if len(skipped) > 5 else ""
        said += f" (skipped, of a type Pixie does not read: {', '.join(skipped[:5])}{more})"
    return said


# Upstream's skills as a bundle folder: the same from here on, whatever the kind.


@dataclass(frozen=True)
class Upstream:
    """What a check found upstream, once its skills are written out as a bundle folder."""

    report: str  # where upstream is, in words
    commit: str  # what the source records as seen: a commit's SHA, an index's digest
    provenance: Provenance
    skills: list[str]  # the skill folders' names, for a bundle.toml from the metadata
    manifest: bool = False  # whether the folder holds upstream's own bundle.toml
    tagged: tuple[str, ...] = ()  # semantic versions upstream gave this content


def _from_folder(source: Source, into: Path, upstream: Upstream) -> CheckOutcome:
    """Read the bundle folder ``into`` and compare it with the bundle's newest version:
    unchanged, or the draft to make (its version chosen, its provenance attached)."""
    report = upstream.report
    try:
        if not upstream.manifest:
            (into / "bundle.toml").write_text(metadata_manifest(source.metadata, upstream.skills))
        publisher = source.metadata.get("publisher") or "pixie"
        spec = read_bundle_folder(into, default_publisher=publisher)
    except BundleFileError as exc:
        return CheckOutcome(Result.FAILED, f"{report}; {_words(exc)}")
    if source.bundle_id is not None and spec.slug != source.bundle.slug:
        named_by = "the repository's bundle.toml" if upstream.manifest else "the source's metadata"
        return CheckOutcome(
            Result.FAILED,
            f"{report}; {named_by} names the bundle {spec.slug!r}, "
            f"but this source feeds {source.bundle.slug!r}",
        )
    bundle = source.bundle or Bundle.objects.filter(slug=spec.slug).first()
    compared = _compared_with(source, bundle)
    if compared is not None and bundle_version_holds(compared, spec):
        return CheckOutcome(
            Result.UNCHANGED,
            f"{report}; the skills are as in {bundle.slug} {compared.version}",
            commit=upstream.commit,
        )
    version = _version_for(source, bundle, spec, upstream.tagged, upstream.manifest)
    spec = _at_version(spec, version)
    return CheckOutcome(
        Result.DRAFT,
        report,
        commit=upstream.commit,
        spec=spec,
        provenance=upstream.provenance,
    )


def _listed_folders_gone(source: Source, mirror: Path, commit: str) -> list[str]:
    """The skill folders the source lists that are no longer at the commit."""
    if not source.skills:
        return []
    tree = folder_tree(mirror, commit, source.folder)
    if tree is None:
        return []  # the export says the folder is gone, in its words
    entries, _ = tree_list(mirror, tree)
    found = skill_folders_find(entries)
    names = {path.rpartition("/")[2] for path in found} | set(found)
    return [upstream_line(str(name), limit=100) for name in source.skills if name not in names]


def _compared_with(source: Source, bundle: Bundle | None) -> BundleVersion | None:
    """What upstream is compared with: the draft the source made and still waits, else
    the bundle's newest published version."""
    if bundle is None:
        return None
    if (waiting := _waiting(source)) is not None:
        return waiting
    published = list(bundle.versions.exclude(status=Status.DRAFT))
    return max(published, key=lambda v: version_key(v.version), default=None)


def _waiting(source: Source) -> BundleVersion | None:
    """The draft the source made that still waits (not published or discarded since)."""
    waiting = source.waiting_draft
    return waiting if waiting is not None and waiting.status == Status.DRAFT else None


def _version_for(source, bundle, spec, tagged: tuple[str, ...], has_manifest: bool) -> str:
    """A semantic-version tag on the commit (highest first), else the next patch after the
    bundle's newest version (the waiting draft it replaces aside), else the repository's
    own bundle.toml's version or 1.0.0 for a first version."""
    if tagged:
        return tagged[0]
    versions = []
    if bundle is not None:
        waiting = _waiting(source)
        others = bundle.versions.exclude(pk=waiting.pk) if waiting else bundle.versions.all()
        versions = list(others.values_list("version", flat=True))
    if not versions:
        return spec.version if has_manifest and spec.version != PLACEHOLDER_VERSION else "1.0.0"
    newest = max(versions, key=version_key)
    major, minor, patch = (int(part) for part in newest.split("+")[0].split("-")[0].split("."))
    return f"{major}.{minor}.{patch + 1}"


def _at_version(spec: BundleSpec, version: str) -> BundleSpec:
    """The spec under ``version``; a skill labelled by the bundle's version follows it."""
    skills = [
        skill if skill.version_given else replace(skill, version=version) for skill in spec.skills
    ]
    return replace(spec, version=version, skills=skills)


def metadata_manifest(metadata: dict, skills: list[str]) -> str:
    """bundle.toml for a repository that has none, from the source's metadata."""
    data = {key: value for key, value in (metadata or {}).items() if key in METADATA_KEYS}
    slug = data.get("slug", "")
    data.setdefault("name", str(slug).replace("-", " ").title() or "Unnamed")
    data["version"] = PLACEHOLDER_VERSION
    data["skills"] = skills
    return tomli_w.dumps(data, multiline_strings=True)


def metadata_problems(metadata: object) -> list[str]:
    """Why a source's metadata cannot be a bundle.toml (its keys; the values are checked
    by the folder reader at each check)."""
    if not isinstance(metadata, dict):
        return ["The metadata must be a table of bundle.toml's keys"]
    unknown = sorted(set(metadata) - METADATA_KEYS)
    return [f"The metadata's key {key!r} is not one of {sorted(METADATA_KEYS)}" for key in unknown]


# Writing


def _draft_make(source: Source, outcome: CheckOutcome, *, actor) -> None:
    """The draft, in place of the waiting one, and the source's state: one transaction."""
    spec = outcome.spec
    assert spec is not None
    replaced = _waiting(source)
    message = f"{outcome.message}; draft {spec.slug} {spec.version} made"
    if replaced is not None:
        source.waiting_draft = None
        source.save(update_fields=["waiting_draft"])
        # With the draft skill versions only it held (kept in the history, as it is).
        bundle_version_draft_discard(
            bundle_version=replaced,
            actor=actor,
            comment=f"Draft {replaced} replaced by a newer upstream change",
        )
        message += f", replacing the waiting draft {replaced.version} (kept in the history)"
    comment = f"Source #{source.pk}: draft {spec.slug} {spec.version} from {outcome.commit[:12]}"
    with audited(actor=actor, comment=comment):
        loaded = bundle_load(
            spec=spec, actor=actor, publish=False, provenance=outcome.provenance, comment=comment
        )
        if not loaded.created:
            raise BundleFileError(f"{spec.slug} {spec.version} already exists; no draft was made")
        draft = loaded.bundle_version
        source.bundle_id = draft.bundle_id
        source.waiting_draft = draft
        _state(source, replace(outcome, message=message))
        source.save()
        reversion.add_to_revision(source)
        notify_operators(
            kind=Kind.SOURCE_DRAFT_WAITING,
            event=f"source:{source.pk}:draft:{draft.pk}",
            title=f"{spec.slug} {spec.version} waits for review: {outcome.commit[:12]} upstream",
            url=reverse("admin:catalog_bundleversion_change", args=[draft.pk]),
        )


def _record(source: Source, outcome: CheckOutcome, *, actor) -> None:
    """The source's state after a check that made no draft."""
    _state(source, outcome)
    if source.waiting_draft_id is not None and (
        source.waiting_draft is None or source.waiting_draft.status != Status.DRAFT
    ):
        source.waiting_draft = None  # published or discarded since
    with audited(actor=actor, comment=f"Source #{source.pk} checked: {outcome.result}"):
        source.save()
        if outcome.result in {Result.FAILED, Result.REWRITTEN, Result.BACKWARDS,
                              Result.VANISHED, Result.FOLDER_GONE}:  # fmt: skip
            told = hashlib.sha256(f"{outcome.result}:{outcome.message}".encode()).hexdigest()
            notify_operators(
                kind=Kind.SOURCE_FAILED,
                event=f"source:{source.pk}:{told[:40]}",
                title=f"Source #{source.pk} ({source.url}): {source.last_message}",
                url=(
                    reverse("admin:catalog_bundle_change", args=[source.bundle_id])
                    if source.bundle_id
                    else ""
                ),
            )


def _state(source: Source, outcome: CheckOutcome) -> None:
    now = timezone.now()
    source.last_checked_at = now
    source.next_check_at = now + source.interval
    source.last_result = outcome.result
    source.last_message = _clip(outcome.message)
    if outcome.commit:
        source.last_commit = outcome.commit


def _clip(message: str) -> str:
    return message if len(message) <= MESSAGE_MAX else message[: MESSAGE_MAX - 1] + "…"


def _words(exc: Exception) -> str:
    return str(exc) or exc.__class__.__name__
