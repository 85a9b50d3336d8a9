"""A person who made delivery tokens leaves: the tokens are the workspace's, so they keep
working (machines would stop receiving what the owners approved), and the remaining owners
are told which ones to review, rotate or revoke on delivery's page."""

from __future__ import annotations

from django.urls import reverse

from pixie.core.notifications.service import Kind, Notice, notify

from .models import DeliveryToken


def maker_left(sender, instance, **kwargs):
    """post_save of a login: one saved inactive (pixie.installer.offboarding does the rest)."""
    if instance.is_active or kwargs.get("raw"):
        return
    update_fields = kwargs.get("update_fields")
    if update_fields is not None and "is_active" not in update_fields:
        return
    made: dict[int, list[str]] = {}
    for workspace_id, name in DeliveryToken.objects.filter(
        created_by=instance, revoked_at=None
    ).values_list("workspace_id", "name"):
        made.setdefault(workspace_id, []).append(name)
    notify(
        kind=Kind.DELIVERY_MAKER_LEFT,
        notices=[
            Notice(
                workspace_id=workspace_id,
                event=f"delivery-maker-left:{instance.pk}:{workspace_id}",
                title=(
                    f"{instance.username} left; the delivery tokens they made still work: "
                    + ", ".join(sorted(names))
                ),
                url=reverse("admin:pixie_workspace_delivery", args=[workspace_id]),
            )
            for workspace_id, names in made.items()
        ],
    )
