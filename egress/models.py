"""Where a workspace's agents may reach, and which credentials (by name) they need.

No field here, or anywhere in Pixie, holds a credential's value.
"""

import reversion
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from catalog.validators import DESCRIPTION_MAX, validate_credential_name, validate_host


@reversion.register()
class EgressRule(models.Model):
    workspace = models.ForeignKey(
        "pixie.Workspace", on_delete=models.CASCADE, related_name="egress_rules"
    )
    host = models.CharField(max_length=253, validators=[validate_host])
    port = models.PositiveIntegerField(
        default=443, validators=[MinValueValidator(1), MaxValueValidator(65535)]
    )
    purpose = models.CharField(max_length=DESCRIPTION_MAX, blank=True)
    credential_name = models.CharField(
        max_length=128,
        blank=True,
        validators=[validate_credential_name],
        help_text="Environment variable used at this host, by name.",
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    approved_at = models.DateTimeField()
    plan = models.ForeignKey(
        "catalog.Plan",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="egress_rules",
        help_text="The approved plan that added it; empty for a hand-written rule.",
    )

    class Meta:
        ordering = ["workspace", "host", "port"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "host", "port"], name="egress_host_once_per_workspace"
            )
        ]

    def __str__(self):
        return f"{self.host}:{self.port}"


@reversion.register()
class CredentialRequirement(models.Model):
    workspace = models.ForeignKey(
        "pixie.Workspace", on_delete=models.CASCADE, related_name="credential_requirements"
    )
    name = models.CharField(max_length=128, validators=[validate_credential_name])
    host = models.CharField(max_length=253, blank=True, validators=[validate_host])
    purpose = models.CharField(max_length=DESCRIPTION_MAX, blank=True)
    confirmed = models.BooleanField(
        default=False, help_text="The owner confirmed the value is supplied (outside Pixie)."
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["workspace", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "name"], name="credential_once_per_workspace"
            )
        ]

    def __str__(self):
        return self.name
