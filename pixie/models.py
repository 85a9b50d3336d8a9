"""Workspaces and their members: the unit every permission is checked against."""

import reversion
from django.conf import settings
from django.db import models

from .namespace_fields import SlugField


@reversion.register()
class Workspace(models.Model):
    slug = SlugField(unique=True)
    name = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name


@reversion.register()
class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")
        ]
        ordering = ["workspace", "user"]

    def __str__(self):
        return f"{self.user} in {self.workspace} ({self.role})"


# --- Sharing: identities, contacts, messages and imports of shared skills ---


class Identity(models.Model):
    """A workspace's key pairs. Private keys are stored wrapped (see pixie.crypto).

    Not versioned in history: nothing here is edited, and wrapped private keys
    have no business being copied into revision data.
    """

    workspace = models.OneToOneField(
        Workspace, on_delete=models.CASCADE, related_name="sharing_identity"
    )
    box_public_key = models.CharField(max_length=44, unique=True)
    signing_public_key = models.CharField(max_length=44, unique=True)
    box_private_wrapped = models.BinaryField()
    signing_private_wrapped = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "identities"

    def __str__(self):
        return f"Keys of {self.workspace}"


@reversion.register()
class Contact(models.Model):
    """Another workspace, on this server or another, as its contact card describes it.

    Every contact holds both public keys (a card without them is refused), so
    every contact is one a message can be sealed to.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="contacts")
    name = models.CharField(max_length=80)
    remote_workspace = models.CharField(
        max_length=64, help_text="The workspace's slug on its own server."
    )
    box_public_key = models.CharField(max_length=44)
    signing_public_key = models.CharField(max_length=44)
    inbox_url = models.URLField(max_length=300)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "signing_public_key"], name="one_contact_per_signing_key"
            )
        ]

    def __str__(self):
        return self.name


class Message(models.Model):
    """One message in a workspace's inbox or outbox, stored only as sealed envelopes.

    An incoming row holds the envelope as it arrived: it names no sender. An
    outgoing row holds the envelope sealed to the contact (what is delivered)
    and the same letter sealed to this workspace's own key, so the sender can
    read what it sent without the server keeping any plaintext.
    """

    class Direction(models.TextChoices):
        INCOMING = "in", "Received"
        OUTGOING = "out", "Sent"

    class Delivery(models.TextChoices):
        PENDING = "pending", "Being delivered"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Not delivered"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="messages")
    direction = models.CharField(max_length=3, choices=Direction.choices)
    message_id = models.UUIDField()
    envelope = models.BinaryField()
    own_copy = models.BinaryField(null=True, blank=True)
    contact = models.ForeignKey(
        Contact, null=True, blank=True, on_delete=models.SET_NULL, related_name="sent_messages"
    )
    delivery = models.CharField(max_length=10, choices=Delivery.choices, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=400, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "direction", "message_id"], name="one_message_per_id"
            )
        ]
        indexes = [models.Index(fields=["workspace", "-created_at"])]

    def __str__(self):
        return f"Message {self.pk} ({self.get_direction_display().lower()})"


@reversion.register()
class ShareImport(models.Model):
    """The import of a received share: once per message, with what it did."""

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="share_import")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)
    # {"imported": [{"id", "name", "short_description"}], "skipped_identical": [slug],
    #  "renames": [{"from", "to"}]}
    outcome = models.JSONField()

    class Meta:
        ordering = ["-imported_at"]

    def __str__(self):
        return f"Import of message {self.message_id}"
