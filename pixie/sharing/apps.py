from django.apps import AppConfig


class SharingConfig(AppConfig):
    name = "pixie.sharing"
    # Its models keep app_label "pixie" (models.py); this label only names the package.
    label = "sharing"
    verbose_name = "Sharing"
