"""A draft bundle version's own words: its release notes and the order of its skills.

A draft is read and published, not edited field by field (its skills, hosts and
credentials come from the folder or archive it was loaded from); the notes and the order
are the two things an operator may still settle before publishing, in one recorded change.
"""

from __future__ import annotations

import reversion
from django.db import transaction

from catalog.models import BundleSkill, BundleVersion, SkillVersion, Status
from catalog.models.catalog import NOTES_MAX
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed


def bundle_version_draft_edit(
    *, bundle_version: BundleVersion, actor, notes: str, order: list[str]
) -> BundleVersion:
    """Set a draft's notes and its skills' order (``order``: every skill's slug, each once,
    first to last), in one transaction and one history entry. Refused, nothing changes."""
    notes = notes.replace("\r\n", "\n").strip()
    if len(notes) > NOTES_MAX:
        raise ValidationFailed(
            f"The release notes are {len(notes):,} characters; at most {NOTES_MAX:,}."
        )
    with audited(actor=actor, comment=f"Changed the notes and skill order of {bundle_version}"):
        locked = (
            BundleVersion.objects.select_for_update(of=("self",))
            .select_related("bundle")
            .get(pk=bundle_version.pk)
        )
        if locked.status != Status.DRAFT:
            raise StateError(
                f"{locked} is {locked.get_status_display().lower()}: published versions never "
                "change. Create a new version instead.",
                code=ErrorCode.ALREADY_PUBLISHED,
            )
        entries = list(
            BundleSkill.objects.filter(bundle_version=locked)
            .select_related("skill_version__package")
            .order_by("position", "id")
        )
        by_slug = {entry.skill_version.package.slug: entry for entry in entries}
        problems = order_problems(order, list(by_slug))
        if problems:
            raise ValidationFailed(problems)
        moved = []
        for position, slug in enumerate(order, start=1):
            entry = by_slug[slug]
            if entry.position != position:
                entry.position = position
                moved.append(entry)
        BundleSkill.objects.bulk_update(moved, ["position"])
        locked.notes = notes
        locked.save(update_fields=["notes"])
        reversion.add_to_revision(locked)  # follows its skills: the new order is recorded
        return locked


def order_problems(order: list[str], slugs: list[str]) -> list[str]:
    """What is wrong with ``order`` as an order of ``slugs``: each named."""
    problems = []
    seen: set[str] = set()
    for slug in order:
        if slug not in slugs:
            problems.append(f"@{slug[:80]} is not a skill of this version")
        elif slug in seen:
            problems.append(f"@{slug} is named twice in the order")
        seen.add(slug)
    missing = [slug for slug in slugs if slug not in seen]
    if missing:
        problems.append("The order leaves out " + ", ".join(f"@{s}" for s in missing))
    return problems


def bundle_version_draft_discard(*, bundle_version: BundleVersion, actor, comment: str = "") -> int:
    """Delete a draft with the draft skill versions only it holds (a draft loaded from a
    folder or made by a source check brings its own; left behind they would be offered
    to every later draft), in one transaction and one history entry that keeps them all.
    Returns how many skill versions went with it. A published version is refused."""
    with transaction.atomic():
        with audited(actor=actor, comment=comment or f"Discarded the draft {bundle_version}"):
            locked = (
                BundleVersion.objects.select_for_update(of=("self",))
                .select_related("bundle")
                .filter(pk=bundle_version.pk)
                .first()
            )
            if locked is None:
                raise StateError(f"{bundle_version} is gone: it was discarded or deleted already")
            if locked.status != Status.DRAFT:
                raise StateError(
                    f"{locked} is {locked.get_status_display().lower()}: only a draft is "
                    "discarded. Yank a published version instead.",
                    code=ErrorCode.ALREADY_PUBLISHED,
                )
            own = list(
                SkillVersion.objects.filter(
                    bundle_entries__bundle_version=locked, status=Status.DRAFT
                )
                .exclude(
                    bundle_entries__bundle_version__in=BundleVersion.objects.exclude(pk=locked.pk)
                )
                .exclude(workspace_revisions__isnull=False)
                .distinct()
            )
            # Recorded while they exist: the revision is saved as this block ends, and
            # reversion keeps no version of a row deleted before then (and then no entry).
            reversion.add_to_revision(locked)
            for skill_version in own:
                reversion.add_to_revision(skill_version)
        locked.delete()
        SkillVersion.objects.filter(pk__in=[v.pk for v in own]).delete()
        return len(own)
