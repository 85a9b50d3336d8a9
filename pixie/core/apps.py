import sqlite3

from django.apps import AppConfig
from django.db.backends.signals import connection_created


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

        import reversion
        from reversion import revisions

        from pixie.core.audit.records import save_revision

        if reversion.VERSION[0] == 6:  # the version save_revision follows
            revisions._save_revision = save_revision

        connection_created.connect(sqlite_real_parameter_limit, dispatch_uid="pixie-sqlite-limit")


def sqlite_real_parameter_limit(sender, connection, **kwargs):
    """Django 5.2 assumes SQLite takes at most 999 parameters a statement and splits
    bulk inserts (ours and django-reversion's) into batches of that size, so an apply
    on SQLite ran more statements the bigger the bundle, where PostgreSQL runs one.
    Use the limit this SQLite was built with (250000 on Debian; 32766 by default
    since 3.32), as Django 6.0 does (ticket #36143)."""
    if connection.vendor == "sqlite":
        connection.features.max_query_params = connection.connection.getlimit(
            sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER
        )
