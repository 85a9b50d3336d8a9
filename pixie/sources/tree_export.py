"""The skill folders of a repository at one commit, written out as a plain bundle folder
that the catalog's own reader parses (catalog.bundle_files.read_bundle_folder):

    <into>/bundle.toml               the repository's own, when the folder has one
    <into>/skills/<name>/SKILL.md    each chosen skill folder, by its own name
    <into>/skills/<name>/...

A skill folder is any folder holding a SKILL.md (a regular file), at any depth under the
source's folder: ``skills/<name>``, ``skills/.curated/<name>`` (dot-folders are looked
into), ``plugins/<plugin>/skills/<name>``. A SKILL.md inside a skill folder is one of
its files, not another skill.

The tree is read from git (``ls-tree``, then ``cat-file --batch`` for the chosen files),
never from a checkout, so nothing in it is followed: a symbolic link (a repository may
link a folder to itself) is named in the notices and not written, a submodule (a
gitlink) stays empty and is named too. Only regular files are written, the executable
bit kept. Paths pass the rules an uploaded archive's entries pass
(catalog.services.bundle_upload.entry_name_problem), and bytes are counted from the
tree before a byte is read, against the bundle ceilings (PIXIE_SKILL_FILE_MAX_BYTES,
PIXIE_BUNDLE_MAX_BYTES, PIXIE_BUNDLE_MAX_FILES). One pass over the tree, one over
the chosen files: linear in the tree's size.

Anything refused raises BundleFileError naming every problem, before anything is
written where that can be known from the tree; what was written into ``into`` (a fresh
temporary folder) is then the caller's to remove, as with an upload's extraction.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from django.conf import settings

from catalog.bundle_files import SKILL_FILE, BundleFileError
from catalog.services.bundle_upload import MANIFESTS, MAX_PROBLEMS, entry_name_problem

from .git_command import GitOutputTooLarge, fence_environment, git_executable, git_run
from .git_mirror import SHA
from .upstream_text import upstream_line

SHOWN_PATH = 200
LISTING_MAX = 256 << 20  # bytes of ls-tree output: millions of entries
CHUNK = 64 * 1024
LOCAL_SECONDS = 120.0  # reading a mirror on local disk

REGULAR = "100"  # a mode's file type: 100644 and 100755 (and old repositories' 100664)
LINK = "120000"
GITLINK = "160000"


@dataclass(frozen=True)
class TreeEntry:
    """One line of ``git ls-tree -r --long``: a file, a link or a submodule."""

    mode: str
    kind: str  # "blob" or "commit" (a submodule)
    object_id: str
    size: int  # 0 for a submodule
    path: str  # relative to the folder listed

    @property
    def regular(self) -> bool:
        return self.kind == "blob" and self.mode.startswith(REGULAR)

    @property
    def executable(self) -> bool:
        return self.regular and int(self.mode[-3:], 8) & 0o111 != 0


@dataclass(frozen=True)
class SkillFolder:
    name: str  # its own folder name: skills/<name>/ in the export
    path: str  # where it is under the source's folder


@dataclass
class TreeExport:
    tree: str  # the folder's tree id at the commit: the same id, the same content
    skills: list[SkillFolder]
    manifest: str | None  # "bundle.toml" (or .yaml) when the folder has one
    files: int = 0
    bytes: int = 0
    notices: list[str] = field(default_factory=list)


def shown(path: str) -> str:
    """A path from the repository as a message shows it: bounded, nothing hidden."""
    return upstream_line(path, limit=SHOWN_PATH)


def folder_problem(folder: str) -> str | None:
    """Why ``folder`` cannot name a folder in a repository, or None ("" is the top)."""
    if not folder:
        return None
    if folder.startswith("/") or any(part in ("", ".", "..") for part in folder.split("/")):
        return (
            f"The folder {shown(folder)!r} must be a relative path without empty, '.' or '..' "
            "parts, such as skills"
        )
    if why := entry_name_problem(folder):
        return f"The folder {shown(folder)!r} cannot be read: {why}"
    return None


# Pure rules


def entries_parse(listing: bytes, problems: list[str]) -> list[TreeEntry]:
    """``git ls-tree -r -z --long`` output as entries; a path that is not UTF-8 is a
    problem (named by its bytes), as in an upload."""
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        fields = meta.decode("ascii", errors="replace").split()
        if len(fields) != 4:
            problems.append(f"The tree has an entry git cannot describe ({shown(repr(record))})")
            continue
        mode, kind, object_id, size = fields
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{repr(raw_path)[2:-1][:SHOWN_PATH]}: refused: its name is not UTF-8")
            continue
        entries.append(TreeEntry(mode, kind, object_id, int(size) if size.isdigit() else 0, path))
    return entries


def skill_folders_find(entries: list[TreeEntry]) -> list[str]:
    """The folders holding a regular SKILL.md, outermost only, sorted ("" for the folder
    listed itself). Linear in the paths' length."""
    holding = {
        entry.path.rpartition("/")[0]
        for entry in entries
        if entry.regular and entry.path.rpartition("/")[2] == SKILL_FILE
    }
    return sorted(folder for folder in holding if not _inside_another(folder, holding))


def _inside_another(folder: str, folders: set[str]) -> bool:
    if folder and "" in folders:
        return True
    parts = folder.split("/")
    return any("/".join(parts[:depth]) in folders for depth in range(1, len(parts)))


def skill_folders_choose(
    found: list[str], names: list[str] | None
) -> tuple[list[SkillFolder], list[str]]:
    """The skill folders to export, in order, and the problems: every folder found, or
    those ``names`` lists (a folder's own name, or its path when two share a name)."""
    problems: list[str] = []
    if names is None:
        chosen = list(found)
    else:
        by_name: dict[str, list[str]] = {}
        for path in found:
            by_name.setdefault(path.rpartition("/")[2], []).append(path)
        chosen, seen = [], set()
        for name in names:
            if name in seen:
                problems.append(f"{shown(name)}: listed twice")
                continue
            seen.add(name)
            matches = [name] if name in found and "/" in name else by_name.get(name, [])
            if not matches:
                problems.append(
                    f"{shown(name)}: no skill folder (a folder holding SKILL.md) of that name "
                    "is in the repository at this commit"
                )
            elif len(matches) > 1:
                problems.append(
                    f"{shown(name)}: {len(matches)} skill folders have that name "
                    f"({', '.join(shown(m) for m in matches[:5])}); name one by its path"
                )
            else:
                chosen.append(matches[0])
    skills, taken = [], {}
    for path in chosen:
        name = path.rpartition("/")[2]
        if not path:
            problems.append(
                f"{SKILL_FILE} is at the top of the folder: the skill folder has no name of its "
                "own here; choose the folder above it"
            )
        elif name in taken:
            problems.append(
                f"{shown(taken[name])} and {shown(path)} would both be skills/{shown(name)}: "
                "choose one"
            )
        else:
            taken[name] = path
            skills.append(SkillFolder(name, path))
    return skills, problems


def export_plan(
    entries: list[TreeEntry], skills: list[SkillFolder]
) -> tuple[list[tuple[str, TreeEntry]], list[str], list[str]]:
    """(the files to write, as (path in the export, entry), problems, notices): a manifest
    at the folder's top, and the chosen skill folders' regular files, checked against the
    upload's name rules and the bundle ceilings. Pure, linear."""
    by_path = {skill.path: skill for skill in skills}
    files: list[tuple[str, TreeEntry]] = []
    problems: list[str] = []
    notices: list[str] = []
    file_limit = settings.PIXIE_SKILL_FILE_MAX_BYTES
    total = 0
    for entry in entries:
        if entry.path in MANIFESTS:
            target = entry.path
        else:
            skill = _skill_of(entry.path, by_path)
            if skill is None:
                if entry.mode == LINK and entry.path.rpartition("/")[2] == SKILL_FILE:
                    notices.append(
                        f"{shown(entry.path)}: a symbolic link; not followed, so its folder "
                        "is not a skill folder"
                    )
                continue
            target = f"skills/{skill.name}/{entry.path[len(skill.path) + 1 :]}"
        if why := entry_name_problem(target):
            problems.append(f"{shown(entry.path)}: refused: {why}")
        elif entry.mode == LINK:
            notices.append(
                f"{shown(entry.path)}: a symbolic link; not followed and not written "
                "(a bundle holds files)"
            )
        elif entry.mode == GITLINK:
            notices.append(f"{shown(entry.path)}: a submodule; left empty")
        elif not entry.regular:
            problems.append(f"{shown(entry.path)}: refused: not a regular file (mode {entry.mode})")
        elif entry.size > file_limit:
            problems.append(
                f"{shown(entry.path)}: is {entry.size:,} bytes; the limit for one file is "
                f"{file_limit:,} (PIXIE_SKILL_FILE_MAX_BYTES)"
            )
        else:
            total += entry.size
            files.append((target, entry))
    if len(files) > settings.PIXIE_BUNDLE_MAX_FILES:
        problems.append(
            f"The skill folders hold {len(files):,} files; the limit for one bundle is "
            f"{settings.PIXIE_BUNDLE_MAX_FILES:,} (PIXIE_BUNDLE_MAX_FILES)"
        )
    if total > settings.PIXIE_BUNDLE_MAX_BYTES:
        problems.append(
            f"The skill folders hold {total:,} bytes; the limit for one bundle is "
            f"{settings.PIXIE_BUNDLE_MAX_BYTES:,} (PIXIE_BUNDLE_MAX_BYTES)"
        )
    return files, problems, notices


def _skill_of(path: str, by_path: dict[str, SkillFolder]) -> SkillFolder | None:
    folder = path.rpartition("/")[0]
    while folder:
        if folder in by_path:
            return by_path[folder]
        folder = folder.rpartition("/")[0]
    return None


# Reading the mirror


def folder_tree(mirror: Path, commit: str, folder: str = "") -> str | None:
    """The tree id of ``folder`` at ``commit``, or None when it is not a folder there:
    two commits whose folder has the same tree id hold the same files."""
    found = _git(mirror, "rev-parse", "--verify", "--quiet", "--end-of-options",
                 f"{commit}^{{tree}}" if not folder else f"{commit}:{folder}")  # fmt: skip
    tree = found.stdout.decode().strip()
    if not found.ok or not tree:
        return None
    kind = _git(mirror, "cat-file", "-t", tree).stdout.decode().strip()
    return tree if kind == "tree" else None


def tree_list(mirror: Path, tree: str) -> tuple[list[TreeEntry], list[str]]:
    """Every file, link and submodule under a tree, and the problems with their names."""
    try:
        listed = _git(mirror, "ls-tree", "-r", "-z", "--long", "--end-of-options", tree,
                      max_output=LISTING_MAX)  # fmt: skip
    except GitOutputTooLarge:
        raise BundleFileError(
            f"The folder lists more than {LISTING_MAX:,} bytes of file names"
        ) from None
    if not listed.ok:
        raise BundleFileError(f"The folder's tree cannot be read: {shown(listed.stderr.strip())}")
    problems: list[str] = []
    return entries_parse(listed.stdout, problems), problems


def tree_export(
    *,
    mirror: Path,
    commit: str,
    into: Path,
    folder: str = "",
    names: list[str] | None = None,
) -> TreeExport:
    """Write the skill folders under ``folder`` at ``commit`` (all, or those ``names``
    lists, in its order) and the folder's bundle.toml into the empty folder ``into``."""
    if problem := folder_problem(folder):
        raise BundleFileError(problem)
    if not SHA.fullmatch(commit) or folder_tree(mirror, commit) is None:
        raise BundleFileError(f"{shown(commit)} is not a commit in the source's mirror")
    tree = folder_tree(mirror, commit, folder)
    if tree is None:
        where = f"The folder {shown(folder)}" if folder else "The repository's top"
        raise BundleFileError(f"{where} is not a folder at commit {commit[:12]}")
    entries, problems = tree_list(mirror, tree)
    skills, choosing = skill_folders_choose(skill_folders_find(entries), names)
    problems += choosing
    if not skills and not choosing:
        problems.append("No skill folder (a folder holding SKILL.md) is in the folder")
    files, planning, notices = export_plan(entries, skills)
    problems += planning
    if problems:
        raise BundleFileError(_at_most(problems))
    (into / "skills").mkdir(parents=True, exist_ok=True)
    written = _write_files(mirror, into, files)
    manifest = next((target for target, _ in files if target in MANIFESTS), None)
    return TreeExport(tree, skills, manifest, len(files), written, notices)


def _at_most(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    more = len(problems) - MAX_PROBLEMS
    return [*problems[:MAX_PROBLEMS], f"… and {more:,} more problems"]


def _write_files(mirror: Path, into: Path, files: list[tuple[str, TreeEntry]]) -> int:
    """Each file's blob, read with one ``git cat-file --batch`` (one request, one answer
    at a time: nothing waits on a full pipe), streamed to its place. The bytes written."""
    written = 0
    process = subprocess.Popen(  # noqa: S603 (Pixie's own arguments; object ids from git)
        [git_executable(), "cat-file", "--batch"],
        cwd=mirror,
        env=fence_environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    problems: list[str] = []
    finished = False
    try:
        for target, entry in files:
            process.stdin.write(f"{entry.object_id}\n".encode())
            process.stdin.flush()
            header = process.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                problems.append(f"{shown(entry.path)}: refused: its content is not in the mirror")
                break
            size = int(header[2])
            if size != entry.size:
                problems.append(f"{shown(entry.path)}: refused: its size is not the tree's")
                break
            try:
                _write_blob(process.stdout, into / target, size, executable=entry.executable)
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                problems.append(f"{shown(entry.path)}: refused: it clashes with another path")
                break
            written += size
            process.stdout.read(1)  # the newline after each object
        else:
            finished = True
    finally:
        process.stdin.close()  # at its end of input, cat-file ends
        if not finished:  # it may be halfway through an object nobody will read
            process.kill()
        process.wait()
        process.stdout.close()
    if problems:
        raise BundleFileError(problems)
    return written


def _write_blob(source: IO[bytes], target: Path, size: int, *, executable: bool) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(target, flags, 0o755 if executable else 0o644)
    with os.fdopen(descriptor, "wb") as out:
        left = size
        while left:
            chunk = source.read(min(CHUNK, left))
            if not chunk:
                raise BundleFileError(f"{target.name}: the mirror's reader stopped early")
            out.write(chunk)
            left -= len(chunk)


def _git(mirror: Path, *arguments: str, max_output: int = 1 << 20):
    return git_run(
        arguments,
        cwd=mirror,
        deadline=time.monotonic() + LOCAL_SECONDS,
        environment=fence_environment(),
        max_output=max_output,
    )
