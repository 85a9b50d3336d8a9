"""The zip a client installs for one skill: deterministic, built once a content, kept.

What the npm ``skills`` CLI (1.7.4) reads: a zip with SKILL.md at its root, no wrapper
folder, no links, no ``..``, at most 1,000 entries and 50 MiB unpacked. Entries are
stored, not deflated: the bytes then depend on the content alone (sorted paths, a fixed
date, each file's unix mode, no extra fields), never on the zlib that built them, so
another server rebuilds the same digest. Deflating would save transfer on text-heavy
skills and make the digest a property of the machine; a digest that moved on a rebuild
would make every ``skills update`` reinstall everything.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from dataclasses import dataclass, field

from catalog.bundle_archive import ZIP_DATE
from catalog.bundle_files import SKILL_FILE
from catalog.models import FileBlob

from .models import SkillArchive

# The client's limits (its MAX_ARCHIVE_FILES and MAX_ARCHIVE_UNPACKED_BYTES); Pixie's own
# allow more, so a skill past them is listed as not deliverable rather than served to fail.
CLIENT_MAX_FILES = 1000
CLIENT_MAX_BYTES = 50 * 1024 * 1024
# The client's names: groups of [a-z0-9] joined by single hyphens, 1 to 64 characters.
CLIENT_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
CLIENT_NAME_MAX = 64
CLIENT_DESCRIPTION_MAX = 1024
# Bumped if the archive layout ever changes: a new key builds new archives.
LAYOUT = b"pixie-delivery-zip-1"


@dataclass(frozen=True)
class ArchiveFile:
    path: str
    sha256: str
    size: int
    executable: bool


@dataclass
class SkillContent:
    """What one skill's archive holds: SKILL.md's text and its supporting files."""

    slug: str
    description: str
    skill_md: str
    files: list[ArchiveFile] = field(default_factory=list)

    @property
    def skill_md_bytes(self) -> bytes:
        return self.skill_md.encode("utf-8")

    @property
    def content_key(self) -> str:
        """A name for this content, computed without its files' bytes."""
        key = hashlib.sha256(LAYOUT)
        key.update(b"\0" + hashlib.sha256(self.skill_md_bytes).hexdigest().encode())
        for f in sorted(self.files, key=lambda f: f.path):
            key.update(f"\0{f.path}\0{int(f.executable)}\0{f.sha256}".encode())
        return key.hexdigest()

    def refusal(self) -> str:
        """Why the ``skills`` client would refuse or skip this skill ("" when it would not)."""
        if len(self.slug) > CLIENT_NAME_MAX or not CLIENT_NAME.fullmatch(self.slug):
            return (
                f"its name @{self.slug} is not one the skills client accepts "
                "(lowercase letters and digits in groups joined by single hyphens)"
            )
        if not self.description.strip():
            return "it has no description, which the skills client requires"
        # Measured as the client measures it, JavaScript's String.length (UTF-16 code
        # units), not Python's code points: a character past U+FFFF (most emoji) counts
        # twice there, and an entry over 1,024 is dropped by the client unsaid.
        if len(self.description.encode("utf-16-le")) // 2 > CLIENT_DESCRIPTION_MAX:
            return (
                f"its description is over the skills client's {CLIENT_DESCRIPTION_MAX:,} "
                "characters"
            )
        if any(_unsafe_path(f.path) for f in self.files):
            return "a file's path is one the skills client refuses to unpack"
        count = len(self.files) + 1
        if count > CLIENT_MAX_FILES:
            return (
                f"it has {count:,} files; the skills client takes at most "
                f"{CLIENT_MAX_FILES:,}"
            )
        size = len(self.skill_md_bytes) + sum(f.size for f in self.files)
        if size > CLIENT_MAX_BYTES:
            return (
                f"it unpacks to {size / 2**20:,.1f} MiB; the skills client takes at most "
                f"{CLIENT_MAX_BYTES // 2**20} MiB"
            )
        return ""


def _unsafe_path(path: str) -> bool:
    parts = path.split("/")
    return (
        path == SKILL_FILE
        or "\\" in path
        or "\0" in path
        or path.startswith("/")
        or re.match(r"[A-Za-z]:", path) is not None
        or any(part in {"", ".", ".."} for part in parts)
    )


def build_zip(entries: list[tuple[str, bytes, bool]]) -> bytes:
    """The archive's bytes: (path, bytes, executable) entries, sorted by path, stored."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        for path, data, executable in sorted(entries, key=lambda entry: entry[0]):
            info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
            info.create_system = 3  # unix: the mode below is read by unzip and Python
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, data)
    return out.getvalue()


def archive_entries(content: SkillContent, blobs: dict[str, bytes]):
    yield SKILL_FILE, content.skill_md_bytes, False
    for f in content.files:
        yield f.path, blobs[f.sha256], f.executable


def digests_of(contents: list[SkillContent]) -> dict[str, str]:
    """Each skill content's archive digest by content key (stored_digests)."""
    return stored_digests(contents, build_archives)


def stored_digests(items, build) -> dict[str, str]:
    """Each item's archive digest by its ``content_key`` (a skill's content or a Claude
    Code plugin): read in one query, and the archives not built yet built now by
    ``build(missing)`` (one query for their files' bytes) and stored in one insert. Two
    servers building the same archive at once build the same bytes; the second insert is
    a no-op."""
    keys = {item.content_key: item for item in items}
    found = dict(
        SkillArchive.objects.filter(content_key__in=keys).values_list("content_key", "digest")
    )
    missing = [item for key, item in keys.items() if key not in found]
    if missing:
        built = build(missing)
        SkillArchive.objects.bulk_create(built, ignore_conflicts=True)
        found.update((archive.content_key, archive.digest) for archive in built)
    return found


def blobs_of(files) -> dict[str, bytes]:
    """The bytes of these files (ArchiveFile), by sha256, in one query."""
    wanted = {f.sha256 for f in files}
    rows = FileBlob.objects.filter(sha256__in=wanted).values_list("sha256", "content")
    return {sha256: bytes(data) for sha256, data in rows}


def stored_archive(content_key: str, entries) -> SkillArchive:
    """The row of one archive built from (path, bytes, executable) ``entries``."""
    entries = list(entries)
    data = build_zip(entries)
    return SkillArchive(
        content_key=content_key,
        digest=hashlib.sha256(data).hexdigest(),
        size=len(data),
        files=len(entries),
        content=data,
    )


def build_archives(contents: list[SkillContent]) -> list[SkillArchive]:
    blobs = blobs_of(f for content in contents for f in content.files)
    return [
        stored_archive(content.content_key, archive_entries(content, blobs))
        for content in contents
    ]
