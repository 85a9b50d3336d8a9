from django.apps import AppConfig


class PixieConfig(AppConfig):
    name = "pixie"
    verbose_name = "Workspaces"
    default_auto_field = "django.db.models.BigAutoField"
