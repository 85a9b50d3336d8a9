"""Agents, the skills attached to them, and the turns that remember what they ran."""

import reversion
from django.conf import settings
from django.db import models

from catalog.validators import NAME_MAX
from pixie.core.names import validate_name
from pixie.core.namespace.fields import SlugField


@reversion.register()
class Agent(models.Model):
    workspace = models.ForeignKey(
        "pixie.Workspace", on_delete=models.CASCADE, related_name="agents"
    )
    slug = SlugField()
    name = models.CharField(max_length=NAME_MAX, validators=[validate_name])
    system_prompt = models.TextField(blank=True, max_length=8000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "slug"], name="agent_slug_per_workspace")
        ]

    def __str__(self):
        return self.name


@reversion.register()
class AgentSkill(models.Model):
    """One skill given to one agent: ordered, pinned or following the latest, switchable."""

    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "agent__workspace"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="agent_skills")
    skill = models.ForeignKey(
        "catalog.WorkspaceSkill", on_delete=models.PROTECT, related_name="agent_skills"
    )
    position = models.PositiveIntegerField(default=0)
    pinned_revision = models.ForeignKey(
        "catalog.SkillRevision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pinned_by",
        help_text="Empty: follow the latest revision.",
    )
    enabled = models.BooleanField(default=True)
    override = models.ForeignKey(
        "AgentSkillOverride",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="This agent's own body for the skill, replacing the skill's body.",
    )

    class Meta:
        ordering = ["agent", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "skill"], name="skill_once_per_agent")
        ]

    def __str__(self):
        return f"{self.agent}: @{self.skill.slug}"


@reversion.register()
class AgentSkillOverride(models.Model):
    """One immutable revision of an agent's own body for an attached skill."""

    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "agent_skill__agent__workspace"

    agent_skill = models.ForeignKey(
        AgentSkill, on_delete=models.CASCADE, related_name="override_revisions"
    )
    number = models.PositiveIntegerField()
    body = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent_skill", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent_skill", "number"], name="override_number_per_attachment"
            )
        ]

    def __str__(self):
        return f"override r{self.number} of {self.agent_skill}"


class Turn(models.Model):
    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "agent__workspace"

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="turns")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.RUNNING)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["agent", "started_at"])]

    def __str__(self):
        return f"Turn #{self.pk} of {self.agent}"


class TurnSkill(models.Model):
    """The exact revision a turn used; it keeps that revision alive forever."""

    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "turn__agent__workspace"

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="turn_skills")
    revision = models.ForeignKey(
        "catalog.SkillRevision", on_delete=models.PROTECT, related_name="turn_skills"
    )
    override = models.ForeignKey(
        AgentSkillOverride,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="turn_skills",
        help_text="The agent's own body it ran instead of the revision's, if any.",
    )
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["turn", "position"]
        indexes = [models.Index(fields=["revision", "turn"])]
        constraints = [
            models.UniqueConstraint(fields=["turn", "position"], name="one_skill_per_turn_slot")
        ]

    def __str__(self):
        return f"{self.turn}: {self.revision}"
