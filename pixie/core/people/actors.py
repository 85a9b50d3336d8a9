"""Who a management command acts as, so its writes carry a user in history."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

SYSTEM_USERNAME = "pixie-system"


def command_actor(username: str | None):
    """The named user, or the system user that cannot log in."""
    User = get_user_model()
    if username:
        try:
            return User.objects.get(username=username)
        except User.DoesNotExist:
            raise CommandError(f"No user named {username!r}.") from None
    user, created = User.objects.get_or_create(
        username=SYSTEM_USERNAME, defaults={"is_active": False}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user
