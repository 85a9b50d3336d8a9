"""A workspace's own skills: every edit is a new immutable revision."""

import reversion
from django.conf import settings
from django.db import models

from catalog.validators import DESCRIPTION_MAX, NAME_MAX, SKILL_DESCRIPTION_MAX
from pixie.core.errors import ImmutableError
from pixie.core.names import validate_name
from pixie.core.namespace.fields import SlugField


@reversion.register()
class WorkspaceSkill(models.Model):
    workspace = models.ForeignKey(
        "pixie.Workspace", on_delete=models.CASCADE, related_name="skills"
    )
    slug = SlugField()
    head = models.ForeignKey(
        "SkillRevision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The latest revision.",
    )
    enabled = models.BooleanField(default=True)
    advertised = models.BooleanField(
        default=True, help_text="Shown in the planner's menu. Imported skills arrive off it."
    )
    installation = models.ForeignKey(
        "Installation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="skills",
        help_text="The installed bundle that brought this skill, if any.",
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "slug"], name="skill_slug_per_workspace")
        ]
        indexes = [
            # A reinstall looks for the workspace's archived skills only: few, whatever the
            # workspace holds (plan_inputs._installed_skills).
            models.Index(
                fields=["workspace"],
                condition=models.Q(archived_at__isnull=False),
                name="archived_skill_per_workspace",
            )
        ]

    def __str__(self):
        return f"@{self.slug}"


@reversion.register()
class SkillRevision(models.Model):
    """One immutable state of a workspace skill."""

    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "skill__workspace"

    skill = models.ForeignKey(WorkspaceSkill, on_delete=models.PROTECT, related_name="revisions")
    number = models.PositiveIntegerField()
    name = models.CharField(max_length=NAME_MAX, validators=[validate_name])
    short_description = models.CharField(max_length=SKILL_DESCRIPTION_MAX)
    body = models.TextField()
    approvals = models.JSONField(default=list, blank=True)
    frontmatter = models.JSONField(default=dict, blank=True)
    upstream = models.ForeignKey(
        "SkillVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="workspace_revisions",
        help_text="The catalog version this revision came from, if any.",
    )

    class Origin(models.TextChoices):
        CATALOG = "catalog", "From the catalog as published"
        MERGE = "merge", "Merged with the catalog"
        LOCAL = "local", "Local edit"
        RENAME = "rename", "Mentions rewritten by a rename"
        IMPORT = "import", "Imported from a share"

    origin = models.CharField(
        max_length=16,
        choices=Origin.choices,
        default=Origin.LOCAL,
        help_text="Where this text came from; repoint moves pins only off catalog revisions.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    comment = models.CharField(max_length=DESCRIPTION_MAX, blank=True)

    class Meta:
        ordering = ["skill", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["skill", "number"], name="revision_number_per_skill")
        ]

    def __str__(self):
        return f"@{self.skill.slug} r{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ImmutableError(f"Revision {self} cannot be changed; an edit is a new revision.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableError(f"Revision {self} is history and cannot be deleted.")
