"""Delivery's rows: the workspace's delivery tokens, the archives served (one per content,
content-addressed), and the clients that fetched them (bounded: one row per client, and
one per client and archive)."""

import reversion
from django.conf import settings
from django.db import models

from pixie.core.names import validate_name


@reversion.register(exclude=["last_used_at"])
class DeliveryToken(models.Model):
    """A read-only credential of a workspace (not of a person) that a client puts in a
    delivery URL's path: the workspace's advertised skills, or one agent's. Pixie keeps
    its SHA-256 only; the secret is shown once, when it is made."""

    # Whose history a change of it is (pixie.core.audit.records.placement).
    audit_workspace = "workspace"

    workspace = models.ForeignKey(
        "pixie.Workspace", on_delete=models.CASCADE, related_name="delivery_tokens"
    )
    agent = models.ForeignKey(
        "agents.Agent",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="delivery_tokens",
        help_text="Empty: every advertised skill of the workspace, at its latest revision.",
    )
    name = models.CharField(max_length=80, validators=[validate_name])
    prefix = models.CharField(max_length=16, help_text="The secret's first characters.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["workspace", "-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class SkillArchive(models.Model):
    """The zip a client downloads for one skill's content, built once and kept: its digest
    never changes for the same content, whichever server built it. Named by a key over
    the content it was built from (SKILL.md's bytes, each file's path, mode and sha256),
    so the index finds every digest in one query without building anything."""

    content_key = models.CharField(primary_key=True, max_length=64)
    digest = models.CharField(max_length=64, help_text="sha256 of the archive's bytes.")
    size = models.PositiveBigIntegerField()
    files = models.PositiveIntegerField(help_text="Entries in the archive, SKILL.md included.")
    content = models.BinaryField()
    built_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"archive {self.digest[:12]} ({self.size} bytes)"


class DeliveryClient(models.Model):
    """One token seen from one user agent at one network (an address truncated to its
    /24 or /48): many machines behind one address with one token are one client."""

    token = models.ForeignKey(DeliveryToken, on_delete=models.CASCADE, related_name="clients")
    user_agent = models.CharField(max_length=200, blank=True)
    network = models.CharField(max_length=64)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    last_update_check = models.DateTimeField(
        null=True, blank=True, help_text="Its last index read marked X-Skills-Update-Check: 1."
    )

    class Meta:
        ordering = ["-last_seen"]
        constraints = [
            models.UniqueConstraint(
                fields=["token", "user_agent", "network"], name="one_client_a_token_agent_network"
            )
        ]

    def __str__(self):
        return f"{self.user_agent or 'unknown client'} at {self.network}"


class ClientFetch(models.Model):
    """A client fetched one archive: once a row, however often it fetches it again."""

    client = models.ForeignKey(DeliveryClient, on_delete=models.CASCADE, related_name="fetches")
    digest = models.CharField(max_length=64)
    skill = models.ForeignKey(
        "catalog.WorkspaceSkill", on_delete=models.CASCADE, related_name="+"
    )
    revision = models.ForeignKey(
        "catalog.SkillRevision", on_delete=models.CASCADE, related_name="+"
    )
    override = models.ForeignKey(
        "agents.AgentSkillOverride", null=True, blank=True, on_delete=models.CASCADE,
        related_name="+",
    )  # fmt: skip
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    update_check = models.BooleanField(
        default=False, help_text="Last fetched by `skills update` (X-Skills-Update-Check: 1)."
    )

    class Meta:
        ordering = ["client", "skill", "-last_seen"]
        constraints = [
            models.UniqueConstraint(fields=["client", "digest"], name="one_fetch_a_client_digest")
        ]
        indexes = [models.Index(fields=["client", "skill", "last_seen"])]

    def __str__(self):
        return f"{self.client} fetched {self.digest[:12]}"
