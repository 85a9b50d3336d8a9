"""Publishers' signing keys (Ed25519): each published bundle version is signed by one."""

import reversion
from django.db import models

from pixie.core.keys import key_fingerprint, key_from_b64


# The wrapped private key stays out of the history: the history is read by people.
@reversion.register(exclude=["private_wrapped"])
class PublisherKey(models.Model):
    """A publisher's signing key. The active key (not retired) signs what the publisher
    publishes; retired keys stay, so what they signed can still be verified."""

    publisher = models.ForeignKey(
        "Publisher", on_delete=models.PROTECT, related_name="signing_keys"
    )
    public_key = models.CharField(max_length=44, unique=True, help_text="Base64 Ed25519.")
    private_wrapped = models.BinaryField(
        null=True,
        blank=True,
        editable=False,
        help_text="The private key, encrypted under PIXIE_KEY_ENCRYPTION_KEY; empty when "
        "the publisher holds it outside Pixie (a third party that signs its own bundles).",
    )
    tag = models.CharField(
        max_length=32,
        help_text="Made with PIXIE_KEY_ENCRYPTION_KEY over the publisher and the key: a key "
        "row written into the database by other means carries no valid tag.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["publisher", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["publisher"],
                condition=models.Q(retired_at__isnull=True),
                name="one_active_key_per_publisher",
            )
        ]

    def __str__(self):
        state = "retired" if self.retired_at else "active"
        return f"{self.fingerprint} ({state})"

    @property
    def raw_public_key(self) -> bytes:
        return key_from_b64(self.public_key) or b""

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.raw_public_key)

    @property
    def held_by_pixie(self) -> bool:
        return self.private_wrapped is not None
