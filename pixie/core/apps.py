from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The kernel: workspaces, people, audit, notifications and the web plumbing. Its
    label stays ``pixie`` (the label its tables, content types, migrations and history
    were made under before it moved into pixie/core/)."""

    name = "pixie.core"
    label = "pixie"
    verbose_name = "Workspaces"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from reversion.signals import post_revision_commit

        from pixie.core.audit.records import record_entry

        post_revision_commit.connect(record_entry, dispatch_uid="pixie-audit-entry")
