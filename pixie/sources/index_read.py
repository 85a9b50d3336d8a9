"""A discovery index source's side of a check: the index read and its chosen entries
written out as the skills of a bundle folder that catalog's folder reader parses:

    <into>/skills/<name>/SKILL.md    a skill-md entry's file, or an archive's root
    <into>/skills/<name>/...         an archive's other files

Each entry's bytes are checked against the index's digest before anything is made of
them (the format's rule: a mismatch is content changed or tampered with since the index
was written, and is never used). An archive is unpacked by the upload's own extractor
(catalog.services.bundle_upload.extract_archive: entry names, kinds and sizes as an
uploaded bundle's, counted as written), and the skills together are held to the bundle
ceilings as they are unpacked, not only when the folder is read. The folder is the
caller's (a fresh temporary one): anything refused leaves it to be removed.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

from django.conf import settings

from catalog.bundle_files import SKILL_FILE, BundleFileError
from catalog.services.bundle_upload import extract_archive

from .index_fetch import HttpReader, Origin, origin_of, shown_url
from .index_format import DiscoveryIndex, IndexEntry, index_parse

MESSAGE_ENTRIES = 50  # entries a draft's provenance message names one by one
DOWNLOAD = "download"  # an entry waits beside the bundle folder while it is checked


@dataclass(frozen=True)
class IndexFound:
    url: str  # the index's URL after the redirects followed: its entries' base
    origin: Origin
    index: DiscoveryIndex


def index_fetch(reader: HttpReader, url: str) -> IndexFound:
    """The index at ``url``, read (at most PIXIE_SOURCES_INDEX_MAX_BYTES, in memory) and
    parsed."""
    body = io.BytesIO()
    fetched = reader.get(
        url, body, limit=settings.PIXIE_SOURCES_INDEX_MAX_BYTES,
        setting="PIXIE_SOURCES_INDEX_MAX_BYTES", what="The index",
    )  # fmt: skip
    index = index_parse(body.getvalue(), max_entries=settings.PIXIE_SOURCES_INDEX_MAX_ENTRIES)
    return IndexFound(url=fetched.url, origin=origin_of(fetched.url), index=index)


def entries_write(
    reader: HttpReader, found: IndexFound, entries: list[IndexEntry], into: Path
) -> list[str]:
    """Each entry's skill under ``into``/skills/<name>, its digest checked first; the
    notices (what an archive held that a bundle does not keep). Downloads wait beside
    ``into``, in the same fresh folder."""
    skills = into / "skills"
    skills.mkdir(parents=True)
    notices: list[str] = []
    budget = _Totals()
    for entry in entries:
        url = urljoin(found.url, entry.url)
        what = f"The entry {entry.name} ({entry.type})"
        download = into.parent / DOWNLOAD
        limit, setting = (
            (settings.PIXIE_BUNDLE_MAX_BYTES, "PIXIE_BUNDLE_MAX_BYTES")
            if entry.type == "archive"
            else (settings.PIXIE_SKILL_FILE_MAX_BYTES, "PIXIE_SKILL_FILE_MAX_BYTES")
        )
        try:
            with open(download, "wb") as out:
                fetched = reader.get(
                    url, out, limit=limit, setting=setting, what=what, origin=found.origin
                )
            if fetched.sha256 != entry.digest:
                raise BundleFileError(
                    f"{what} at {shown_url(fetched.url)}: its bytes' digest is "
                    f"sha256:{fetched.sha256}, not the index's {entry.shown_digest}: refused "
                    "(changed or tampered with since the index was written); nothing was made"
                )
            folder = skills / entry.name
            if entry.type == "archive":
                folder.mkdir()
                found_notices = extract_archive(download, folder, label=f"{entry.name}'s archive")
                notices += [f"{entry.name}: {notice}" for notice in found_notices]
                if not (folder / SKILL_FILE).is_file():
                    raise BundleFileError(
                        f"{what}: the archive has no {SKILL_FILE} at its root (an index's "
                        "archive holds the skill folder's files at its top, no folder around "
                        "them)"
                    )
            else:
                folder.mkdir()
                os.replace(download, folder / SKILL_FILE)
            budget.add(entry.name, folder)
        finally:
            download.unlink(missing_ok=True)
    return notices


class _Totals:
    """The skills' files and bytes so far, against the bundle ceilings: each archive is
    held to them by the extractor, and all of them together here, before the next."""

    def __init__(self):
        self.files = 0
        self.bytes = 0

    def add(self, name: str, folder: Path) -> None:
        for root, _, files in os.walk(folder):
            for file in files:
                self.files += 1
                self.bytes += os.lstat(os.path.join(root, file)).st_size
        if self.files > settings.PIXIE_BUNDLE_MAX_FILES:
            raise BundleFileError(
                f"With {name}, the skills hold {self.files:,} files; the limit for one bundle "
                f"is {settings.PIXIE_BUNDLE_MAX_FILES:,} (PIXIE_BUNDLE_MAX_FILES)"
            )
        if self.bytes > settings.PIXIE_BUNDLE_MAX_BYTES:
            raise BundleFileError(
                f"With {name}, the skills hold {self.bytes:,} bytes; the limit for one bundle "
                f"is {settings.PIXIE_BUNDLE_MAX_BYTES:,} (PIXIE_BUNDLE_MAX_BYTES)"
            )


def entries_message(entries: list[IndexEntry]) -> str:
    """A draft's provenance message: what was read, each entry by its digest."""
    lines = [f"{entry.name} ({entry.type}) {entry.shown_digest}" for entry in entries]
    more = len(lines) - MESSAGE_ENTRIES
    if more > 0:
        lines = [*lines[:MESSAGE_ENTRIES], f"… and {more:,} more (the index's digest covers all)"]
    count = f"{len(entries)} skill{'s' if len(entries) != 1 else ''}"
    return f"Read from the discovery index: {count}, each checked against its digest\n\n" + (
        "\n".join(lines)
    )
