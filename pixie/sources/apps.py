from django.apps import AppConfig
from django.db.models.signals import post_migrate


class SourcesConfig(AppConfig):
    name = "pixie.sources"
    label = "sources"
    verbose_name = "Sources"

    def ready(self):
        from catalog.roles import operators_group_after_migrate

        # Sources' permissions exist only once this app has migrated (after catalog's):
        # the operators and auditors groups are brought in step again then.
        post_migrate.connect(
            operators_group_after_migrate, sender=self, dispatch_uid="sources-operators-group"
        )
