"""An operator's changes to sources: add, change, pause, resume, delete, accept a
rewritten history, ask for a check. Everything is checked before anything is saved
(every problem named, by field), and each change is one recorded transaction.

The admin pages and the API both come here, so the two accept and refuse the same.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import reversion
from django.conf import settings
from django.db import OperationalError, transaction
from django.utils import timezone

from catalog.bundle_files import BundleFileError, read_bundle_folder
from catalog.models import Bundle
from catalog.services.bundle_upload import entry_name_problem
from catalog.validators import is_credential_name
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, PixieError, StateError, ValidationFailed

from .destinations import SETTING, source_url_problems
from .git_mirror import ref_problem
from .index_fetch import index_url_problems
from .models import Source
from .services import SourceBusy, metadata_manifest, metadata_problems, source_mirror
from .tasks import check_source
from .tree_export import folder_problem

SKILLS_MAX = 500  # skill folders a source may list
INTERVAL_MIN = timedelta(minutes=1)
INTERVAL_MAX = timedelta(days=30)
# Changing these makes the next check read the repository afresh (the commit last seen
# is forgotten): a different repository, ref or selection is not a move of the old one.
READ_AFRESH = {"kind", "url", "ref", "folder", "skills", "metadata"}
FIELDS = ["kind", "url", "ref", "folder", "skills", "metadata", "credential_variable",
          "interval", "paused", "bundle"]  # fmt: skip


class SourceInvalid(ValidationFailed):
    """Every problem with a source's fields; ``by_field`` names the field of each."""

    def __init__(self, by_field: dict[str, list[str]]):
        self.by_field = by_field
        super().__init__([problem for problems in by_field.values() for problem in problems])


class SourceGone(PixieError):
    code = ErrorCode.NOT_FOUND
    status = 404


@dataclass
class Checked:
    fields: dict
    problems: dict[str, list[str]]


def source_fields_check(fields: dict, *, current: Source | None = None) -> Checked:
    """The fields as they will be saved, and every problem by field (no lookup but the
    bundle's)."""
    values = {name: getattr(current, name) for name in FIELDS} if current else {}
    values.update({name: value for name, value in fields.items() if name in FIELDS})
    values.setdefault("kind", Source.Kind.GIT)
    values.setdefault("ref", "main")
    problems: dict[str, list[str]] = {}

    def problem(field: str, text: str) -> None:
        problems.setdefault(field, []).append(text)

    if values["kind"] not in Source.Kind.values:
        kinds = ", ".join(Source.Kind.values)
        problem("kind", f"{str(values['kind'])[:40]!r} is not a kind of source ({kinds})")
    allow_private = getattr(settings, SETTING, False)
    url = values.get("url", "")
    if values["kind"] == Source.Kind.INDEX:
        for text in index_url_problems(url, allow_private=allow_private):
            problem("url", text)
        values["ref"] = ""  # an index has no ref: each check reads it as it is
    else:
        for text in source_url_problems(url, allow_private=allow_private):
            problem("url", text)
        if why := ref_problem(values["ref"]):
            problem("ref", why)
    folder = values.get("folder") or ""
    if not isinstance(folder, str):
        problem("folder", "The folder is a path such as skills")
    elif folder := folder.strip("/"):
        values["folder"] = folder
        if why := folder_problem(folder):
            problem("folder", why)
    _skills_check(values, problem)
    metadata = values.get("metadata") or {}
    values["metadata"] = metadata
    for text in metadata_problems(metadata) or _metadata_values(metadata, values["skills"]):
        problem("metadata", text)
    variable = values.get("credential_variable") or ""
    values["credential_variable"] = variable
    if variable and not is_credential_name(variable):
        problem(
            "credential_variable",
            # Not echoed: what was given here may be the token itself.
            "This is not the name of an environment variable: upper-case letters, digits "
            "and underscores, starting with a letter (e.g. SKILLS_DEPLOY_TOKEN). Give the "
            "variable's name, never the token.",
        )
    interval = values.get("interval")
    if interval is None:  # not given (0 is given, and out of range)
        interval = Source._meta.get_field("interval").default
    values["interval"] = interval
    if not isinstance(interval, timedelta) or not INTERVAL_MIN <= interval <= INTERVAL_MAX:
        problem("interval", "The interval between checks is between 1 minute and 30 days")
    _bundle_check(values, problem)
    return Checked(values, problems)


def _skills_check(values: dict, problem) -> None:
    skills = values.get("skills") or []
    if isinstance(skills, str):
        skills = [line.strip() for line in skills.replace(",", "\n").splitlines() if line.strip()]
    values["skills"] = skills
    if not isinstance(skills, list) or not all(isinstance(name, str) for name in skills):
        problem("skills", "The skill folders are a list of folder names")
        values["skills"] = []
        return
    if len(skills) > SKILLS_MAX:
        problem("skills", f"A source lists at most {SKILLS_MAX} skill folders; {len(skills)} given")
        return
    seen = set()
    for name in skills:
        if why := entry_name_problem(name) or ("/" in name and "it holds '/'"):
            problem("skills", f"The skill folder {name[:80]!r} cannot be read: {why}")
        elif name in seen:
            problem("skills", f"The skill folder {name!r} is listed twice")
        seen.add(name)


def _metadata_values(metadata: dict, skills: list[str]) -> list[str]:
    """The metadata's values read as a bundle.toml is at a check (with stand-in skills), so
    a mistake is named now rather than at every check."""
    if not metadata:
        return []  # the repository's own bundle.toml, which the check reads
    named = {a.get("skill") for a in metadata.get("approvals") or [] if isinstance(a, dict)}
    stand_ins = [name for name in [*skills, *named] if isinstance(name, str) and name] or ["probe"]
    with tempfile.TemporaryDirectory(prefix="pixie-source-metadata-") as work:
        folder = Path(work)
        for name in dict.fromkeys(stand_ins):
            if entry_name_problem(name):
                continue
            (folder / "skills" / name).mkdir(parents=True)
            (folder / "skills" / name / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: A stand-in.\n---\nStand-in.\n"
            )
        try:
            (folder / "bundle.toml").write_text(metadata_manifest(metadata, list(stand_ins)))
            read_bundle_folder(folder, default_publisher=metadata.get("publisher") or "pixie")
        except (BundleFileError, TypeError, ValueError) as exc:
            lines = getattr(exc, "problems", None) or [str(exc)]
            return [f"The metadata: {line.removeprefix('bundle.toml: ')}" for line in lines]
    return []


def _bundle_check(values: dict, problem) -> None:
    bundle = values.get("bundle")
    if bundle is None:
        return
    if not isinstance(bundle, Bundle):
        bundle = Bundle.objects.filter(pk=bundle).first()
        if bundle is None:
            problem("bundle", f"There is no bundle #{values['bundle']}")
            return
        values["bundle"] = bundle
    slug = values["metadata"].get("slug")
    if slug and slug != bundle.slug:
        problem(
            "bundle",
            f"The metadata names the bundle {slug!r}, but the source feeds {bundle.slug!r}",
        )


def source_create(*, actor, **fields) -> Source:
    """A new source, due for its first check at once. Raises SourceInvalid."""
    checked = source_fields_check(fields)
    if checked.problems:
        raise SourceInvalid(checked.problems)
    with audited(actor=actor, comment=f"Added the source {checked.fields['url']}"):
        source = Source(**checked.fields, next_check_at=timezone.now())
        source.save()
        reversion.add_to_revision(source)
    return source


def source_update(source: Source, *, actor, **fields) -> Source:
    """Change a source; a different repository, ref or selection is read afresh at the
    next check, which is due at once. Raises SourceInvalid (nothing changes)."""
    with audited(actor=actor, comment=f"Changed the source #{source.pk}"):
        locked = _locked(source)
        checked = source_fields_check(fields, current=locked)
        if checked.problems:
            raise SourceInvalid(checked.problems)
        changed = [name for name in FIELDS if checked.fields[name] != getattr(locked, name)]
        if not changed:
            return locked
        afresh = READ_AFRESH.intersection(changed)
        for name in changed:
            setattr(locked, name, checked.fields[name])
        if afresh:
            locked.last_commit = ""
            locked.next_check_at = timezone.now()
        if {"url", "kind"} & afresh:
            transaction.on_commit(lambda: shutil.rmtree(source_mirror(locked), ignore_errors=True))
        reversion.set_comment(f"Changed the source #{locked.pk}: {', '.join(changed)}")
        locked.save()
        reversion.add_to_revision(locked)
    return locked


def source_pause(source: Source, *, actor, paused: bool) -> Source:
    words = "Paused" if paused else "Resumed"
    with audited(actor=actor, comment=f"{words} the source #{source.pk}"):
        locked = _locked(source)
        locked.paused = paused
        if not paused and (locked.next_check_at is None or locked.next_check_at < timezone.now()):
            locked.next_check_at = timezone.now()
        locked.save(update_fields=["paused", "next_check_at"])
        reversion.add_to_revision(locked)
    return locked


def source_delete(source: Source, *, actor) -> None:
    """Delete a source and its mirror. The versions it made keep their provenance, and
    its waiting draft stays a draft for an operator to publish or discard."""
    with transaction.atomic():
        # The revision is saved as the audited block ends, while the source exists:
        # reversion keeps no version of a row deleted before then (and then no entry).
        with audited(actor=actor, comment=f"Deleted the source #{source.pk} ({source.url})"):
            locked = _locked(source)
            reversion.add_to_revision(locked)
        mirror = source_mirror(locked)
        locked.delete()
        transaction.on_commit(lambda: shutil.rmtree(mirror, ignore_errors=True))


def source_rewrite_accept(source: Source, *, actor) -> Source:
    """After a force-push (or a move backwards): take the ref as it now is. The next check,
    due at once, compares its content with the bundle's newest version as a first check
    does, and makes a draft if it differs."""
    if source.last_result not in {Source.Result.REWRITTEN, Source.Result.BACKWARDS}:
        raise StateError(
            f"Source #{source.pk}'s last check found no rewritten history to accept",
            code=ErrorCode.CONFLICT,
        )
    comment = f"Accepted the rewritten history of the source #{source.pk} ({source.url})"
    with audited(actor=actor, comment=comment):
        locked = _locked(source)
        locked.last_commit = ""
        locked.next_check_at = timezone.now()
        locked.save(update_fields=["last_commit", "next_check_at"])
        reversion.add_to_revision(locked)
    return locked


def source_check_request(source: Source) -> None:
    """Queue a check now (on the defaults, with no worker, it runs before this returns)."""
    if source.paused:
        raise StateError(f"Source #{source.pk} is paused: resume it to check it")
    transaction.on_commit(lambda: check_source.delay(source.pk))


def _locked(source: Source) -> Source:
    """The source's row, locked; a check holds it while it fetches (up to
    PIXIE_SOURCES_FETCH_SECONDS), so a change then is refused at once, not kept waiting."""
    try:
        with transaction.atomic():  # a savepoint: a refused lock leaves the caller's intact
            locked = (
                Source.objects.select_for_update(nowait=True, of=("self",))
                .filter(pk=source.pk)
                .first()
            )
    except OperationalError:
        raise SourceBusy(
            f"Source #{source.pk} is being checked right now; try again when the check ends"
        ) from None
    if locked is None:
        raise SourceGone(f"Source #{source.pk} no longer exists")
    return locked
