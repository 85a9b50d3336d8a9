"""How two versions of a skill's content differ: its fields' text and its files.

Pure (no database). The installer's plans, a skill's revision history and a bundle's
comparison all show changes this way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from catalog.line_diff import unified_diff

# A text file is diffed up to this many bytes; past it the plan says it is too long to show.
TEXT_DIFF_MAX_BYTES = 200_000
# One page (a plan, a comparison) shows this many lines of file diff in all; the files past
# it are listed with their sizes and digests, so a release of many large files stays
# readable (an added file's diff is its whole text).
PAGE_FILE_DIFF_LINES = 5_000
_TEXT_TYPES = {
    "application/json",
    "application/yaml",
    "application/toml",
    "application/xml",
    "application/javascript",
    "application/x-sh",
    "application/x-python",
    "image/svg+xml",
}


@dataclass(frozen=True)
class FileInfo:
    """A supporting file as a plan sees it: where it sits and which bytes (by digest)."""

    path: str
    executable: bool
    sha256: str
    size: int
    media_type: str = "application/octet-stream"

    @property
    def identity(self) -> tuple[str, bool]:
        return (self.sha256, self.executable)

    @property
    def textual(self) -> bool:
        kind = self.media_type
        return kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))

    @classmethod
    def of_row(cls, row) -> FileInfo:
        """From a stored file row (SkillFile or RevisionFile)."""
        return cls(row.path, row.executable, row.blob_id, row.size, row.media_type)

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "size": self.size,
            "executable": self.executable,
            "media_type": self.media_type,
        }


def line_diff(old: str, new: str) -> list[str]:
    return unified_diff(old.splitlines(), new.splitlines(), "before", "after")[0]


def frontmatter_text(frontmatter: dict, approvals) -> str:
    data = {"approvals": list(approvals), **frontmatter}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)


def files_differ(old: tuple[FileInfo, ...], new: tuple[FileInfo, ...]) -> bool:
    return {f.path: f.identity for f in old} != {f.path: f.identity for f in new}


@dataclass
class DiffBudget:
    """The lines of file diff a page still shows (PAGE_FILE_DIFF_LINES to start)."""

    lines: int = PAGE_FILE_DIFF_LINES

    def take(self, diff: list[str]) -> bool:
        """Spend the diff's lines if they fit; a diff too big is not shown, and the files
        after it may still be."""
        if len(diff) > self.lines:
            return False
        self.lines -= len(diff)
        return True


def moves(old, new) -> dict[str, FileInfo]:
    """Files that moved: new path -> the old file, for each file only in the new list whose
    bytes are those of a file only in the old list (the same name first, then the first
    path). Each old file moves once; a copy kept at its old path is an addition."""
    new_paths = {f.path for f in new}
    gone: dict[str, list[FileInfo]] = {}
    for f in sorted(old, key=lambda f: f.path):
        if f.path not in new_paths:
            gone.setdefault(f.sha256, []).append(f)
    old_paths = {f.path for f in old}
    found: dict[str, FileInfo] = {}
    for f in sorted(new, key=lambda f: f.path):
        candidates = gone.get(f.sha256) if f.path not in old_paths else None
        if candidates:
            name = f.path.rsplit("/", 1)[-1]
            same_name = [c for c in candidates if c.path.rsplit("/", 1)[-1] == name]
            found[f.path] = (same_name or candidates)[0]
            candidates.remove(found[f.path])
    return found


def changed_files(old, new):
    """(path, before, after) for each file added, removed or changed (bytes or mode); a
    moved file once, at its new path, with `before` the file it was (see `moves`)."""
    moved = moves(old, new)
    moved_from = {f.path for f in moved.values()}
    before, after = {f.path: f for f in old}, {f.path: f for f in new}
    for path in sorted(before.keys() | after.keys()):
        if path in moved_from:
            continue
        a, b = moved.get(path) or before.get(path), after.get(path)
        if a is None or b is None or a.identity != b.identity or a.path != b.path:
            yield path, a, b


def diffable(file: FileInfo | None) -> bool:
    return file is None or (file.textual and file.size <= TEXT_DIFF_MAX_BYTES)


def file_texts_needed(old, new) -> set[str]:
    """The digests files_diff needs the text of, between two file lists: changed (or
    added) text files only, each within TEXT_DIFF_MAX_BYTES."""
    needed: set[str] = set()
    for _path, a, b in changed_files(old, new):
        if b is None or (a is not None and a.sha256 == b.sha256):
            continue  # removed, or only its mode changed: nothing to diff
        if diffable(a) and diffable(b):
            needed |= {f.sha256 for f in (a, b) if f is not None}
    return needed


def files_diff(old, new, texts: dict[str, str], budget: DiffBudget | None = None) -> list[dict]:
    """Each file added, removed, moved or changed between two file lists: a text diff for
    text files (while the page's budget lasts), size and digest for binary ones (or text
    too long to show), and any change of the executable bit called out."""
    budget = budget or DiffBudget()
    entries = []
    for path, a, b in changed_files(old, new):
        moved = a is not None and b is not None and a.path != b.path
        change = "added" if a is None else "removed" if b is None else "changed"
        entry = {
            "path": path,
            "change": "moved" if moved else change,
            "from_path": a.path if moved else None,
            "old": a.as_dict() if a else None,
            "new": b.as_dict() if b else None,
            "mode": "",
            "content": "",
            "diff": [],
            "aligned": True,
        }
        if a is not None and b is not None and a.executable != b.executable:
            entry["mode"] = "becomes executable" if b.executable else "no longer executable"
        elif a is None and b.executable:
            entry["mode"] = "executable"
        if b is None:
            entry["content"] = "removed"
        elif a is not None and a.sha256 == b.sha256:
            entry["content"] = "same"
        elif not (b.textual and (a is None or a.textual)):
            entry["content"] = "binary"
        elif not (diffable(a) and diffable(b)):
            entry["content"] = "too_long"
        elif b.sha256 in texts and (a is None or a.sha256 in texts):
            diff, aligned = unified_diff(
                texts[a.sha256].splitlines() if a else [],
                texts[b.sha256].splitlines(),
                f"a/{a.path}" if a else "/dev/null",
                f"b/{path}",
            )
            if budget.take(diff):
                entry["content"], entry["diff"] = "text", diff
                entry["aligned"] = aligned
            else:
                entry["content"] = "not_shown"
        else:  # named text by its type, but its bytes are not UTF-8 text
            entry["content"] = "binary"
        entries.append(entry)
    return entries
