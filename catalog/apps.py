from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from pixie.core.plain_reads import read_with_every_token

        from .models import CatalogStamp
        from .roles import operators_group_after_migrate
        from .stamp_triggers import stamp_triggers_after_migrate
        from .tools import builtin_tools_after_migrate

        post_migrate.connect(
            operators_group_after_migrate, sender=self, dispatch_uid="catalog-operators-group"
        )
        post_migrate.connect(
            builtin_tools_after_migrate, sender=self, dispatch_uid="catalog-builtin-tools"
        )
        # SQLite drops a table's triggers when a migration remakes it: made again each time.
        post_migrate.connect(
            stamp_triggers_after_migrate, sender=self, dispatch_uid="catalog-stamp-triggers"
        )
        # Every catalog request needs its token and the stamp: one statement reads both.
        read_with_every_token(CatalogStamp, "number")
