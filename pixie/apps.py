from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The wiring at pixie/'s root: settings, URLs, the admin site, the management
    commands, template tags and static files. No models; the kernel is pixie.core
    (label ``pixie``), so this app's label is ``pixie_site``."""

    name = "pixie"
    label = "pixie_site"
    verbose_name = "Pixie"

    def ready(self):
        from pixie import checks  # noqa: F401  (registers pixie.W001 to W003)
