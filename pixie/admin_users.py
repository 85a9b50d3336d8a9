"""The admin's user pages, with offboarding's rule: a login that is the last owner of a
workspace is not deactivated (pixie.installer.offboarding says why); deactivating any other
revokes its tokens and memberships (the post_save signal)."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.core.exceptions import ValidationError

from pixie.installer.offboarding import last_owned


class PixieUserChangeForm(UserChangeForm):
    def clean(self):
        cleaned = super().clean()
        if self.instance.pk and self.instance.is_active and not cleaned.get("is_active", True):
            alone = last_owned(self.instance)
            if alone:
                raise ValidationError(
                    f"{self.instance.username} is the last owner of {', '.join(alone)}; "
                    "make someone else an owner there before deactivating this login."
                )
        return cleaned


User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class PixieUserAdmin(UserAdmin):
    form = PixieUserChangeForm
