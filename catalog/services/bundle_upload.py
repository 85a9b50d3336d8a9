"""An operator uploads a bundle (.zip or .tar.gz): checked, previewed, then loaded.

The archive is untrusted. Before anything is written each entry's name and kind are
checked (no absolute paths, no `..`, no backslashes, names in UTF-8, regular files and
folders only: no links, devices or pipes); bytes are counted as they are written, never
taken from the archive's own headers, against the per-file and per-bundle ceilings, so
a zip bomb stops at the budget. Every refusal names the entry. Extraction goes into a
fresh temporary folder that is removed afterwards; then the folder is read by
read_bundle_folder and checked by bundle_load_check, the same checks as bundle_load.

Between the preview and the load the archive waits in DATA_DIR/uploads under a random
token (the caller keeps the token, e.g. in the session; no path ever comes from the
client) and is deleted once loaded or refused.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from django.conf import settings

from catalog.archive_limits import (
    ArchiveRefused,
    Limits,
    tar_gz_headers_check,
    zip_directory_check,
)
from catalog.bundle_files import (
    BundleFileError,
    BundleSpec,
    file_name_problem,
    missing_manifest_hint,
    read_bundle_folder,
)
from catalog.skill_content import skill_size

from .bundle_load import (
    BundleLoadCheck,
    BundleLoadResult,
    bundle_load,
    bundle_load_check,
    spec_findings,
)

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")
CHUNK = 64 * 1024
MANIFESTS = ("bundle.toml", "bundle.yaml")
# Written by macOS's Archive Utility next to the real files: never part of a bundle.
MACOS_METADATA = "__MACOSX"
# An entry's path at most MAX_PATH characters (Linux's PATH_MAX is 4,096 bytes), shown in
# a message by its first SHOWN_PATH; a long-name or pax header at most MAX_HEADER_NAME
# bytes; a refusal page names at most MAX_PROBLEMS entries.
MAX_PATH = 1_024
SHOWN_PATH = 200
MAX_HEADER_NAME = 64 * 1024
MAX_PROBLEMS = 50
LIMIT_SETTINGS = {
    "entries": " (PIXIE_BUNDLE_MAX_FILES)",
    "declared_bytes": ", four times the limit for one bundle (PIXIE_BUNDLE_MAX_BYTES)",
}


def uploads_dir() -> Path:
    folder = Path(settings.DATA_DIR) / "uploads"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def archive_name_problem(filename: str) -> str | None:
    if not filename.lower().endswith(ARCHIVE_SUFFIXES):
        return f"{filename}: upload a .zip or .tar.gz (.tgz) archive of a bundle folder"
    return None


def upload_size_problem(size: int) -> str | None:
    limit = settings.PIXIE_BUNDLE_MAX_BYTES
    if size > limit:
        return (
            f"The upload is {size:,} bytes; the limit for one bundle is {limit:,} bytes "
            "(PIXIE_BUNDLE_MAX_BYTES)"
        )
    return None


def upload_store(chunks) -> str:
    """Keep an uploaded archive (an iterable of byte chunks) under a new random token."""
    token = secrets.token_urlsafe(24)
    path = uploads_dir() / f"{token}.archive"
    written = 0
    limit = settings.PIXIE_BUNDLE_MAX_BYTES
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            written += len(chunk)
            if written > limit:
                out.close()
                path.unlink(missing_ok=True)
                raise BundleFileError(upload_size_problem(written))
            out.write(chunk)
    return token


def uploads_sweep(max_age: float = 24 * 3600) -> None:
    """Remove archives left waiting (a preview never confirmed) for longer than a day,
    and extraction folders a crash left behind."""
    import time

    cutoff = time.time() - max_age
    for path in [*uploads_dir().glob("*.archive"), *uploads_dir().glob("extract-*")]:
        try:
            if path.stat().st_mtime >= cutoff:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            continue


def upload_path(token: str) -> Path | None:
    """The waiting archive for a token, or None when the token is unknown or stale."""
    if not isinstance(token, str) or not TOKEN.match(token):
        return None
    path = uploads_dir() / f"{token}.archive"
    return path if path.is_file() else None


def upload_discard(token: str) -> None:
    path = upload_path(token)
    if path is not None:
        path.unlink(missing_ok=True)


# Reading the archive


@dataclass
class _Entry:
    name: str  # as the archive spells it, for messages
    path: str  # normalised, relative, with '/'
    is_dir: bool
    executable: bool
    declared: int
    member: object
    streamed: bool = False  # a tar member: reaching the next one reads past its data
    refused: str = ""  # why the entry is refused by its kind (it still counts)


def entry_name_problem(name: str) -> str | None:
    """What is wrong with an entry's path (an archive's, or a repository tree's), or None."""
    if len(name) > MAX_PATH:
        return f"its path is {len(name):,} characters long; the limit is {MAX_PATH:,}"
    if why := file_name_problem(name):
        return why
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "it is an absolute path"
    if ".." in name.split("/"):
        return "its path climbs out of the folder with '..'"
    return None


def _shown(name: str) -> str:
    """An entry's name as a message shows it: at most SHOWN_PATH characters."""
    if len(name) <= SHOWN_PATH:
        return name
    return f"{name[:SHOWN_PATH]}… ({len(name):,} characters)"


def _normalise(name: str) -> str:
    return "/".join(part for part in name.split("/") if part not in ("", "."))


def _zip_name(info: zipfile.ZipInfo) -> tuple[str, bool]:
    """(the entry's name, whether it was UTF-8): without the UTF-8 flag zipfile decodes
    names as cp437; many tools write UTF-8 without the flag, so try that first."""
    if info.flag_bits & 0x800:
        return info.filename, True
    raw = info.filename.encode("cp437")
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return info.filename, False


def _zip_entries(archive: zipfile.ZipFile, problems: list[str]):
    for info in archive.infolist():
        name, utf8 = _zip_name(info)
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        kind = stat.S_IFMT(mode)
        refused = ""
        if not utf8:
            name = repr(info.filename.encode("cp437"))[1:]
            refused = "its name is not UTF-8"
        elif kind == stat.S_IFLNK:
            refused = "it is a symbolic link; a bundle holds files"
        elif kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            refused = "it is not a regular file (a device or pipe)"
        elif info.flag_bits & 0x1:
            refused = "it is encrypted"
        is_dir = info.is_dir() or kind == stat.S_IFDIR
        yield _Entry(name, "", is_dir, bool(mode & 0o111), info.file_size, info, refused=refused)


def _tar_entries(archive: tarfile.TarFile, problems: list[str]):
    for member in archive:
        refused = ""
        if member.issym() or member.islnk():
            refused = "it is a link; a bundle holds files, not links"
        elif not (member.isfile() or member.isdir()):
            refused = "it is not a regular file (a device or pipe)"
        yield _Entry(
            member.name, "", member.isdir(), bool(member.mode & 0o111), member.size, member,
            True, refused,
        )  # fmt: skip


def _write(source, target: Path, executable: bool, entry: _Entry, budget: list[int]) -> str | None:
    """Copy one entry's bytes, counting them; a problem naming the entry, or None."""
    file_limit = settings.PIXIE_SKILL_FILE_MAX_BYTES
    written = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o755 if executable else 0o644)
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            budget[0] -= len(chunk)
            if written > file_limit:
                return (
                    f"{entry.name}: refused: it holds more than {file_limit:,} bytes, the "
                    "limit for one file (PIXIE_SKILL_FILE_MAX_BYTES)"
                )
            if budget[0] < 0:
                limit = settings.PIXIE_BUNDLE_MAX_BYTES
                return (
                    f"{entry.name}: refused: extracting it passes {limit:,} bytes, the limit "
                    "for one bundle (PIXIE_BUNDLE_MAX_BYTES)"
                )
            out.write(chunk)
    return None


def extract_archive(archive_path: Path, into: Path, *, label: str = "archive") -> list[str]:
    """Extract a .zip or .tar.gz into the empty folder ``into``; the notices to show.

    Raises BundleFileError naming every entry refused; what was extracted is then the
    caller's to remove (``into`` is a fresh temporary folder).
    """
    with open(archive_path, "rb") as f:
        magic = f.read(4)
    problems: list[str] = []
    notices: list[str] = []
    limits = Limits(
        entries=settings.PIXIE_BUNDLE_MAX_FILES,
        name_bytes=MAX_HEADER_NAME,
        declared_bytes=4 * settings.PIXIE_BUNDLE_MAX_BYTES,
    )
    try:
        if magic[:2] == b"PK":
            # A zip's names: MAX_PATH characters of up to 4 bytes in UTF-8.
            zip_directory_check(archive_path, replace(limits, name_bytes=4 * MAX_PATH))
            with zipfile.ZipFile(archive_path) as archive:
                _extract(_zip_entries(archive, problems), archive.open, into, problems, notices)
        elif magic[:2] == b"\x1f\x8b":
            tar_gz_headers_check(archive_path, limits)
            with tarfile.open(archive_path, mode="r:gz") as archive:
                _extract(
                    _tar_entries(archive, problems), archive.extractfile, into, problems, notices
                )
        else:
            problems.append(f"{label}: is not a .zip or .tar.gz archive")
    except ArchiveRefused as exc:
        where = _shown(exc.entry) if exc.entry else label
        problems.append(f"{where}: refused: {exc}{LIMIT_SETTINGS.get(exc.limit, '')}")
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError,
            RuntimeError, UnicodeDecodeError, ValueError) as exc:  # fmt: skip
        problems.append(f"{label}: the archive is damaged or unreadable ({_shown(str(exc))})")
    if problems:
        raise BundleFileError(problems)
    return notices


def _extract(entries, opener, into: Path, problems: list[str], notices: list[str]) -> None:
    budget = [settings.PIXIE_BUNDLE_MAX_BYTES]
    declared = 0
    count = 0
    max_entries = settings.PIXIE_BUNDLE_MAX_FILES
    seen: set[str] = set()
    macos = False
    for entry in entries:
        # Every entry counts, refused or not, and the count is checked before the next.
        count += 1
        if count > max_entries:
            problems.append(
                f"{_shown(entry.name)}: refused: the archive holds more than {max_entries:,} "
                "entries, the limit for one bundle (PIXIE_BUNDLE_MAX_FILES)"
            )
            return
        if len(problems) >= MAX_PROBLEMS:
            problems.append(
                f"… and perhaps more: reading stopped after {MAX_PROBLEMS} refusals; fix "
                "these and upload it again"
            )
            return
        why = entry.refused or entry_name_problem(entry.name)
        if why:
            problems.append(f"{_shown(entry.name)}: refused: {why}")
            continue
        entry.path = _normalise(entry.name)
        if not entry.path:
            continue
        if entry.path.split("/")[0] == MACOS_METADATA:
            macos = True
            continue
        if entry.path in seen:
            problems.append(f"{entry.name}: refused: it appears twice in the archive")
            continue
        seen.add(entry.path)
        # Bytes are counted as written, never taken from headers; but a tar member's
        # declared size is what must be decompressed to read past it, so it is capped.
        declared += entry.declared if entry.streamed and not entry.is_dir else 0
        if declared > 4 * settings.PIXIE_BUNDLE_MAX_BYTES:
            problems.append(
                f"{entry.name}: refused: the archive says it holds more than "
                f"{settings.PIXIE_BUNDLE_MAX_BYTES:,} bytes, the limit for one bundle "
                "(PIXIE_BUNDLE_MAX_BYTES)"
            )
            return
        if problems:
            continue  # keep naming problems; write nothing more
        target = into / entry.path
        try:
            if entry.is_dir:
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = opener(entry.member)
            with source:
                problem = _write(source, target, entry.executable, entry, budget)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            problems.append(f"{entry.name}: refused: it clashes with another entry's path")
            continue
        except OSError as exc:
            problems.append(f"{entry.name}: refused: cannot be written ({exc.strerror})")
            continue
        if problem:
            problems.append(problem)
            return  # past a ceiling: read no further
    if macos:
        notices.append(f"{MACOS_METADATA}/: ignored (macOS archive metadata)")


def bundle_root(folder: Path) -> Path:
    """bundle.toml at the archive's root, or in its one top-level folder (as GitHub
    archives wrap a repository)."""
    if any((folder / name).is_file() for name in MANIFESTS):
        return folder
    entries = [e for e in folder.iterdir() if e.name not in {".DS_Store"}]
    top = folder
    if len(entries) == 1 and entries[0].is_dir():
        inner = entries[0]
        if any((inner / name).is_file() for name in MANIFESTS):
            return inner
        top = inner
    hint = missing_manifest_hint(top, what="it")
    raise BundleFileError(
        "The archive has no bundle.toml at its top or inside its one top-level folder"
        + (f": {hint}" if hint else "")
    )


def upload_read(token: str, *, label: str = "archive") -> BundleSpec:
    """The bundle in a waiting upload, read and checked as a folder would be."""
    archive = upload_path(token)
    if archive is None:
        raise BundleFileError(STALE)
    workdir = Path(tempfile.mkdtemp(prefix="extract-", dir=uploads_dir()))
    try:
        notices = extract_archive(archive, workdir, label=label)
        spec = read_bundle_folder(bundle_root(workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    spec.notices[:0] = notices
    return spec


STALE = (
    "This upload is no longer waiting (it was loaded, refused or cleared); upload the archive again"
)


@dataclass(frozen=True)
class SkillPreview:
    slug: str
    version: str
    name: str
    files: int
    bytes: int
    lines: int
    tokens: int
    warning: str
    reused: str  # the stored version it reuses ("" when new)


@dataclass(frozen=True)
class UploadPreview:
    spec: BundleSpec
    check: BundleLoadCheck
    skills: list[SkillPreview]
    findings: list[dict]  # what the text would show once loaded (spec_findings)

    @property
    def problems(self) -> list[str]:
        return self.check.problems

    @property
    def totals(self) -> dict:
        return {
            "skills": len(self.skills),
            "files": sum(s.files for s in self.skills),
            "bytes": sum(s.bytes for s in self.skills),
            "lines": sum(s.lines for s in self.skills),
            "tokens": sum(s.tokens for s in self.skills),
            "over_guidance": sum(1 for s in self.skills if s.warning),
        }


def upload_preview(token: str, *, label: str = "archive") -> UploadPreview:
    """What loading the upload would create, or BundleFileError with every problem.

    Refused uploads are deleted: there is nothing to confirm.
    """
    try:
        spec = upload_read(token, label=label)
    except BundleFileError:
        upload_discard(token)
        raise
    check = bundle_load_check(spec)
    if check.problems:
        upload_discard(token)
        raise BundleFileError(check.problems)
    rows = []
    for skill in spec.skills:
        size = skill_size(skill.body)
        reused = check.reused(skill.slug)
        rows.append(
            SkillPreview(
                slug=skill.slug,
                version=reused.version if reused else check.resolution.labels[skill.slug],
                name=skill.name,
                files=len(skill.files),
                bytes=len(skill.skill_md.encode("utf-8")) + sum(f.size for f in skill.files),
                lines=size.lines,
                tokens=size.tokens,
                warning=size.warning,
                reused=reused.version if reused else "",
            )
        )
    return UploadPreview(spec=spec, check=check, skills=rows, findings=spec_findings(spec))


def upload_load(token: str, *, actor, publish: bool, label: str = "archive") -> BundleLoadResult:
    """Load the waiting upload with bundle_load (all or nothing); the archive is deleted
    whatever the outcome."""
    try:
        spec = upload_read(token, label=label)
        return bundle_load(spec=spec, actor=actor, publish=publish)
    finally:
        upload_discard(token)
