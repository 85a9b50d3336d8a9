"""A source: a git repository (later, a discovery index) a bundle follows, and the state
of its last check (pixie.sources.services.source_check)."""

from datetime import timedelta

import reversion
from django.core.validators import MinValueValidator
from django.db import models

from catalog.validators import validate_credential_name


@reversion.register()
class Source(models.Model):
    """Where a bundle's skills are published upstream. The first check that finds skills
    makes the bundle (through catalog's bundle_load, as a draft); every later change
    upstream becomes a draft version an operator reviews and publishes, or discards."""

    class Kind(models.TextChoices):
        GIT = "git", "A git repository"
        # A site's Agent Skills discovery index (v0.2.0): its URL is ``url``; ``ref``,
        # ``folder`` and the token are not used; ``last_commit`` is the chosen entries'
        # digest (pixie.sources.index_format.index_digest).
        INDEX = "index", "A discovery index"

    class Result(models.TextChoices):
        NONE = "", "Not checked yet"
        UNCHANGED = "unchanged", "Nothing changed upstream"
        DRAFT = "draft", "A draft was made"
        FAILED = "failed", "The check failed"
        REWRITTEN = "rewritten", "The ref was rewritten (force-pushed)"
        BACKWARDS = "backwards", "The ref moved backwards"
        VANISHED = "vanished", "The ref is gone"
        FOLDER_GONE = "folder_gone", "A listed skill folder is gone"

    bundle = models.ForeignKey(
        "catalog.Bundle",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="sources",
        help_text="The bundle it feeds: made by its first check, from its metadata or the "
        "repository's bundle.toml.",
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.GIT)
    url = models.CharField(
        max_length=2000, help_text="A git repository's https:// URL, or a discovery index's."
    )
    ref = models.CharField(
        max_length=255,
        default="main",
        blank=True,
        help_text="A branch, tag or commit's full SHA (a git repository's; an index has none).",
    )
    folder = models.CharField(
        max_length=1000, blank=True, default="", help_text="The folder in it; empty: its top."
    )
    skills = models.JSONField(
        default=list,
        blank=True,
        help_text="The skill folders' names, in order; empty: every skill folder found.",
    )
    metadata = models.JSONField(
        default=dict,
        blank=True,
        help_text="The bundle's own data when the repository has no bundle.toml: slug, name, "
        "description, notes, publisher, hosts, credentials, approvals.",
    )
    credential_variable = models.CharField(
        max_length=128,
        blank=True,
        validators=[validate_credential_name],
        help_text="The NAME of the environment variable holding a deploy token (never the token).",
    )
    interval = models.DurationField(
        default=timedelta(hours=1), validators=[MinValueValidator(timedelta(minutes=1))]
    )
    paused = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # The last check.
    last_checked_at = models.DateTimeField(null=True, blank=True)
    last_result = models.CharField(
        max_length=16, choices=Result.choices, blank=True, default=Result.NONE
    )
    last_message = models.TextField(blank=True)
    last_commit = models.CharField(
        max_length=64, blank=True, help_text="The commit the last check that read it saw."
    )
    next_check_at = models.DateTimeField(null=True, blank=True, db_index=True)
    waiting_draft = models.ForeignKey(
        "catalog.BundleVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The draft the last upstream change made, until it is published or discarded.",
    )

    class Meta:
        ordering = ["pk"]

    def __str__(self):
        if self.kind == self.Kind.INDEX:
            return f"{self.url} (index)"
        where = f" ({self.folder})" if self.folder else ""
        return f"{self.url} @ {self.ref}{where}"
