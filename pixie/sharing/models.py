"""Sharing's records: identities, contacts, messages and imports of shared skills.

They belong to the ``pixie`` app (``app_label``), as they did before sharing became
its own package: their tables, content types, admin URLs and history are unchanged.
"""

import reversion
from django.conf import settings
from django.db import models

from pixie.core.models import Workspace


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
        app_label = "pixie"
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
        app_label = "pixie"
        ordering = ["workspace", "name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "signing_public_key"], name="one_contact_per_signing_key"
            )
        ]

    def __str__(self):
        return self.name


# History keeps who received or sent what and when, never the sealed bytes: an
# envelope is stored once, in its row (each could be up to PIXIE_INBOX_MAX_BYTES).
@reversion.register(exclude=("envelope", "own_copy"))
class Message(models.Model):
    """One message in a workspace's inbox or outbox, stored only as sealed envelopes.

    An incoming row holds the envelope as it arrived: it names no sender. What
    the inbox learnt on opening it is kept only as far as quotas and blocking
    need: whether the signing key was a contact's, and a tag of that key keyed
    with PIXIE_KEY_ENCRYPTION_KEY (which is not in the database), so a copy of
    the database alone does not tell who sent what. An outgoing row holds the
    envelope sealed to the contact (what is delivered) and the same letter
    sealed to this workspace's own key, so the sender can read what it sent
    without the server keeping any plaintext.

    A received message is *pending* until an owner imports its share, keeps it
    or deletes it; pending messages count against the inbox's quotas
    (pixie.sharing.guard), and unknown senders' ones expire.
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
    # Received messages only (see the class's docstring).
    from_contact = models.BooleanField(default=False)
    sender_tag = models.CharField(max_length=32, blank=True)
    size = models.PositiveIntegerField(default=0, help_text="Bytes of the sealed envelope.")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "pixie"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "direction", "message_id"], name="one_message_per_id"
            )
        ]
        indexes = [
            models.Index(fields=["workspace", "-created_at"]),
            # Small by construction (the quotas bound it): what the quota check
            # counts and the expiry task deletes.
            models.Index(
                fields=["workspace", "from_contact", "created_at"],
                condition=models.Q(direction="in", reviewed_at__isnull=True),
                name="pending_received",
            ),
        ]

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
        app_label = "pixie"
        ordering = ["-imported_at"]

    def __str__(self):
        return f"Import of message {self.message_id}"


@reversion.register()
class BlockedSender(models.Model):
    """A signing key whose envelopes this workspace's inbox drops unread and unstored.

    Kept as the same keyed tag as Message.sender_tag, with the name the sender
    gave and its fingerprint so the owner can tell who it was.
    """

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="blocked_senders"
    )
    sender_tag = models.CharField(max_length=32)
    claimed_name = models.CharField(max_length=80)
    fingerprint = models.CharField(max_length=30)
    blocked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "pixie"
        ordering = ["workspace", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "sender_tag"], name="one_block_per_sender")
        ]

    def __str__(self):
        return f"{self.claimed_name} ({self.fingerprint})"


class InboxRefusals(models.Model):
    """How many envelopes a workspace's inbox refused on one day, by reason.

    One row per workspace and day, bumped with F() expressions: a flood of
    refusals costs one row, not one row each. Not versioned in history (it is
    a tally, not a change anyone made).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    over_quota = models.PositiveIntegerField(default=0)
    rate_limited = models.PositiveIntegerField(default=0)
    blocked = models.PositiveIntegerField(default=0)

    class Meta:
        app_label = "pixie"
        verbose_name_plural = "inbox refusals"
        constraints = [
            models.UniqueConstraint(fields=["workspace", "day"], name="one_tally_per_day")
        ]

    def __str__(self):
        return f"Refusals of {self.workspace_id} on {self.day}"
