from django.apps import AppConfig


class EgressConfig(AppConfig):
    name = "egress"
    verbose_name = "Egress and credentials"
    default_auto_field = "django.db.models.BigAutoField"
