"""Installed bundles and the plans that change them (behaviour: the plans issue)."""

import reversion
from django.conf import settings
from django.db import models


@reversion.register()
class Installation(models.Model):
    workspace = models.ForeignKey(
        "pixie.Workspace", on_delete=models.CASCADE, related_name="installations"
    )
    bundle = models.ForeignKey("Bundle", on_delete=models.PROTECT, related_name="installations")
    bundle_version = models.ForeignKey(
        "BundleVersion", on_delete=models.PROTECT, related_name="installations"
    )
    installed_at = models.DateTimeField(auto_now_add=True)
    installed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["workspace", "bundle"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "bundle"], name="bundle_once_per_workspace"
            )
        ]

    def __str__(self):
        return f"{self.bundle_version} in {self.workspace}"


@reversion.register()
class Plan(models.Model):
    class Kind(models.TextChoices):
        INSTALL = "install", "Install"
        UPGRADE = "upgrade", "Upgrade"
        UNINSTALL = "uninstall", "Uninstall"
        REPOINT = "repoint", "Repoint"
        ROLLBACK = "rollback", "Roll back"

    class State(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        APPROVED = "approved", "Approved"
        APPLYING = "applying", "Applying"
        APPLIED = "applied", "Applied"
        FAILED = "failed", "Failed"
        STALE = "stale", "Stale"
        REJECTED = "rejected", "Rejected"
        SUPERSEDED = "superseded", "Superseded"

    workspace = models.ForeignKey("pixie.Workspace", on_delete=models.CASCADE, related_name="plans")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=State.choices, default=State.PROPOSED)
    bundle_version = models.ForeignKey(
        "BundleVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="plans"
    )
    installation = models.ForeignKey(
        Installation, null=True, blank=True, on_delete=models.SET_NULL, related_name="plans"
    )
    summary = models.CharField(max_length=400, blank=True)
    expands_reach = models.BooleanField(default=False)
    steps = models.JSONField(default=list, blank=True)
    options = models.JSONField(
        default=dict, blank=True, help_text="What was asked: agents and fork choices."
    )
    reads = models.JSONField(
        default=dict, blank=True, help_text="What the plan read; compared again before applying."
    )
    fingerprint = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reject_reason = models.CharField(max_length=400, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # Its asker left (pixie.installer.offboarding): another owner takes it over or rejects it.
    asker_left_at = models.DateTimeField(null=True, blank=True)
    taken_over_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Why Pixie prepared it itself (after a yank), when nobody asked for it.
    prepared_because = models.CharField(max_length=400, blank=True)
    # The approval rules as they stood at approval, and who satisfied each
    # (pixie.installer.policy).
    policy = models.JSONField(default=list, blank=True)
    # The second-owner rule's level when the plan was asked: it is judged by the stricter
    # of this and the level at approval ("" for plans asked before it was kept).
    second_owner_asked = models.CharField(max_length=10, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["workspace", "status"])]

    def __str__(self):
        return f"Plan #{self.pk} ({self.kind}, {self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in {self.State.PROPOSED, self.State.APPROVED, self.State.APPLYING}


@reversion.register()
class Generation(models.Model):
    """One applied plan of an installation, numbered from 1 (its install): the version it
    left installed and what it changed (its plan's steps and summary). "Roll back to
    generation N" plans a return to the state it left."""

    installation = models.ForeignKey(
        Installation, on_delete=models.CASCADE, related_name="generations"
    )
    number = models.PositiveIntegerField()
    plan = models.OneToOneField(Plan, on_delete=models.PROTECT, related_name="generation")
    bundle_version = models.ForeignKey(
        "BundleVersion", on_delete=models.PROTECT, related_name="generations"
    )
    summary = models.CharField(max_length=400, blank=True)
    applied_at = models.DateTimeField()
    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "installation__workspace"

    class Meta:
        ordering = ["installation", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["installation", "number"], name="one_generation_a_number"
            )
        ]

    def __str__(self):
        return f"Generation {self.number} of installation #{self.installation_id}"
