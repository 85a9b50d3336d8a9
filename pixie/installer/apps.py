from django.apps import AppConfig


class InstallerConfig(AppConfig):
    name = "pixie.installer"
    label = "installer"  # no models of its own: plans and installations are catalog's
    verbose_name = "Installer"

    def ready(self):
        from .after_yank import connect

        connect()  # a yank's affected workspaces get a ready plan (catalog's signal)
