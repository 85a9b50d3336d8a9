from django.apps import AppConfig


class InstallerConfig(AppConfig):
    name = "pixie.installer"
    label = "installer"  # no models of its own: plans and installations are catalog's
    verbose_name = "Installer"

    def ready(self):
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        from . import kinds  # noqa: F401 (each kind of plan registers itself)
        from .after_yank import connect
        from .offboarding import user_deactivated

        connect()  # a yank's affected workspaces get a ready plan (catalog's signal)
        # A login deactivated (admin, command or API) cancels its open plans and tokens.
        post_save.connect(
            user_deactivated, sender=get_user_model(), dispatch_uid="pixie-offboarding"
        )
