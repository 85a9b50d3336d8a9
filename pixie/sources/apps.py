from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "pixie.sources"
    label = "sources"
    verbose_name = "Sources"
