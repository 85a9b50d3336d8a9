"""The audit log's search of comments by index, on PostgreSQL.

The log's search asks for revisions whose comment contains some words (Django's
icontains: UPPER(comment) LIKE UPPER('%words%')). Without an index a rare word walks the
whole log newest first: about half a second at 1,000,000 revisions. A trigram index on
the upper-cased comment answers it from the rows holding the words. pg_trgm is a trusted
extension (PostgreSQL 13 and later): the database's owner may create it, no superuser
needed. Nothing to do on SQLite.
"""

from django.db import migrations

INDEX = "pixie_revision_comment_search"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {INDEX} ON reversion_revision "
        "USING gin (UPPER(comment) gin_trgm_ops)"
    )
    # The planner's statistics of the indexed expression, now rather than at autovacuum's
    # next analyze (an append-only log may wait long for it): without them it guesses a
    # common word rare, reads every row holding it by the index and sorts them, seconds
    # where walking the log newest first takes a millisecond.
    schema_editor.execute("ANALYZE reversion_revision")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("pixie", "0007_running_a_workspace"),
        ("reversion", "0002_add_index_on_version_for_content_type_and_db"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
