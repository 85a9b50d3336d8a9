"""A skill's supporting files (scripts/, references/, assets/, ...).

File bytes are stored once per sha256 (``FileBlob``); a skill version or a
workspace revision lists its files by path, size, executable bit and digest.
The history (django-reversion) records those rows, so it names each file's
digest and never holds its bytes a second time: ``FileBlob`` is not registered.
"""

import reversion
from django.db import models

from pixie.core.errors import ImmutableError

from .catalog import SkillVersion, Status


class BlobQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImmutableError("Stored file bytes never change: they are named by their sha256.")


class FileBlob(models.Model):
    """The bytes of one file, content-addressed: the same bytes are stored once, and never
    change (a digest that named other bytes would rewrite every release that uses it)."""

    sha256 = models.CharField(primary_key=True, max_length=64)
    size = models.PositiveBigIntegerField()
    content = models.BinaryField()

    objects = BlobQuerySet.as_manager()

    def __str__(self):
        return f"{self.sha256[:12]} ({self.size} bytes)"

    def save(self, *args, **kwargs):
        if not self._state.adding or kwargs.get("force_update"):
            raise ImmutableError(f"File {self.sha256[:12]} is stored; its bytes never change.")
        super().save(*args, **kwargs)


class FileEntry(models.Model):
    """A file of a skill folder: where it sits and what it holds."""

    path = models.CharField(max_length=1024, help_text="Relative to the skill folder, with '/'.")
    blob = models.ForeignKey(FileBlob, on_delete=models.PROTECT, related_name="+")
    size = models.PositiveBigIntegerField()
    executable = models.BooleanField(default=False)
    media_type = models.CharField(max_length=255, help_text="Derived from the path and bytes.")

    class Meta:
        abstract = True

    def __str__(self):
        return self.path

    @property
    def sha256(self) -> str:
        return self.blob_id

    def entry_fields(self) -> dict:
        """What a copy of this file needs (for another skill version or revision): the
        same path, mode and stored bytes."""
        return {
            "path": self.path,
            "blob_id": self.blob_id,
            "size": self.size,
            "executable": self.executable,
            "media_type": self.media_type,
        }


@reversion.register()
class SkillFile(FileEntry):
    """A file of a catalog skill version; frozen with the version once published."""

    skill_version = models.ForeignKey(
        "SkillVersion", on_delete=models.CASCADE, related_name="files"
    )

    class Meta:
        ordering = ["skill_version", "path"]
        constraints = [
            models.UniqueConstraint(fields=["skill_version", "path"], name="file_once_per_version")
        ]

    def save(self, *args, **kwargs):
        self._refuse_if_published()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self._refuse_if_published()
        return super().delete(*args, **kwargs)

    def _refuse_if_published(self):

        if (
            self.skill_version_id is not None
            and SkillVersion._base_manager.filter(
                pk=self.skill_version_id, status=Status.PUBLISHED
            ).exists()
        ):
            raise ImmutableError(
                "This skill version is published; its files cannot be changed. "
                "Publish a new version instead."
            )


@reversion.register()
class RevisionFile(FileEntry):
    """A file of a workspace skill revision; written with the revision, never changed."""

    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "revision__skill__workspace"

    revision = models.ForeignKey(
        "SkillRevision", on_delete=models.PROTECT, related_name="files"
    )

    class Meta:
        ordering = ["revision", "path"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "path"], name="file_once_per_revision")
        ]

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ImmutableError("A revision's files cannot be changed; an edit is a new revision.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableError("A revision's files are history and cannot be deleted.")
