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
