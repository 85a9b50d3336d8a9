"""A workspace revision carries its skill's supporting files: copied as rows that name
the same stored bytes (a file's bytes are stored once, whatever the number of copies)."""

from __future__ import annotations

from collections.abc import Iterable

import reversion

from catalog.models import RevisionFile, SkillFile, SkillRevision


def _copies(revision: SkillRevision, files) -> list[RevisionFile]:
    return [RevisionFile(revision=revision, **f.entry_fields()) for f in files]


def revision_files_from_versions(pairs: Iterable[tuple[SkillRevision, int]]) -> list[RevisionFile]:
    """Give each new revision the files of a catalog skill version: (revision, version id)."""
    pairs = list(pairs)
    by_version: dict[int, list[SkillFile]] = {}
    for file in SkillFile.objects.filter(skill_version_id__in={v for _, v in pairs}).order_by(
        "path"
    ):
        by_version.setdefault(file.skill_version_id, []).append(file)
    return _store([row for r, v in pairs for row in _copies(r, by_version.get(v, ()))])


def revision_files_from_revisions(
    pairs: Iterable[tuple[SkillRevision, int]],
) -> list[RevisionFile]:
    """Give each new revision the files of an earlier revision: (revision, earlier id)."""
    pairs = list(pairs)
    by_revision: dict[int, list[RevisionFile]] = {}
    for file in RevisionFile.objects.filter(revision_id__in={o for _, o in pairs}).order_by(
        "path"
    ):
        by_revision.setdefault(file.revision_id, []).append(file)
    return _store([row for r, o in pairs for row in _copies(r, by_revision.get(o, ()))])


def revision_files_from_listing(
    pairs: Iterable[tuple[SkillRevision, list[dict]]],
) -> list[RevisionFile]:
    """Give each new revision the files a plan listed (a merge's result): rows naming
    bytes already stored, by digest. No query but the insert."""
    return _store(
        [
            RevisionFile(
                revision=revision,
                path=f["path"],
                blob_id=f["sha256"],
                size=f["size"],
                executable=f["executable"],
                media_type=f["media_type"],
            )
            for revision, listing in pairs
            for f in listing
        ]
    )


def _store(rows: list[RevisionFile]) -> list[RevisionFile]:
    made = RevisionFile.objects.bulk_create(rows, batch_size=500)
    if reversion.is_active():
        for row in made:
            reversion.add_to_revision(row)
    return made
