"""The triggers that change the catalog's stamp (catalog.models.stamp) whenever a table
the catalog API's answers are made of is written: installed by migration 0020 and
again after every migrate, since SQLite drops a table's triggers when a migration
remakes the table. Plain SQL through the connection's cursor.

WATCHED_TABLES is what the answers read: the catalog's rows, and what says who may
see them (users, the operators and auditors groups, memberships). A new model the
catalog API shows goes here; tests/catalog/test_catalog_stamp.py lists the catalog's
tables that are deliberately not watched (a workspace's installs, plans and edits).
"""

from __future__ import annotations

STAMP_TABLE = "catalog_catalogstamp"
WATCHED_TABLES = (
    "catalog_publisher",
    "catalog_publisherkey",
    "catalog_tool",
    "catalog_skillpackage",
    "catalog_skillversion",
    "catalog_skillfile",
    "catalog_bundle",
    "catalog_bundleversion",
    "catalog_bundleskill",
    "catalog_bundlehost",
    "catalog_bundlecredential",
    "auth_user",  # updates only of whether a user is active or a superuser (UPDATE_OF)
    "auth_group",
    "auth_user_groups",
    "pixie_membership",
)
# Tables whose updates count only for some columns: a login (last_login) changes nothing an
# answer says. Their inserts and deletions count (a user made or removed).
UPDATE_OF = {"auth_user": ("is_active", "is_superuser")}
TRIGGER = "catalog_stamp"
SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")

# One statement, however many rows it wrote: a fresh random value in the shard of its
# transaction (16: SHARDS). An upsert, so a shard emptied (a test database flushed) comes
# back.
POSTGRESQL_FUNCTION = """
CREATE OR REPLACE FUNCTION catalog_stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO catalog_catalogstamp (shard, number)
    VALUES (txid_current() % 16, floor((random() - 0.5) * 1.8e19)::bigint)
    ON CONFLICT (shard) DO UPDATE SET number = EXCLUDED.number;
    RETURN NULL;
END
$$
"""
SQLITE_CHANGE = (
    "INSERT INTO catalog_catalogstamp (shard, number) VALUES (0, random()) "
    "ON CONFLICT (shard) DO UPDATE SET number = excluded.number;"
)


def stamp_triggers_install(connection) -> list[str]:
    """Make sure every watched table that exists has its trigger; returns the tables it
    gave one. Safe to run again: a table that has its trigger keeps it."""
    tables = set(connection.introspection.table_names())
    if STAMP_TABLE not in tables:
        return []
    triggered = stamp_triggered_tables(connection)
    missing = [table for table in WATCHED_TABLES if table in tables and table not in triggered]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(POSTGRESQL_FUNCTION)  # replaced, should a release change it
            for table in missing:
                update = _update_event(table)
                events = f"INSERT OR {update} OR DELETE OR TRUNCATE"
                cursor.execute(
                    f'CREATE TRIGGER {TRIGGER} AFTER {events} ON "{table}" '
                    "FOR EACH STATEMENT EXECUTE FUNCTION catalog_stamp_change()"
                )
        elif connection.vendor == "sqlite":
            for table in missing:
                for name, event in _sqlite_events(table):
                    cursor.execute(
                        f'CREATE TRIGGER IF NOT EXISTS "{name}" AFTER {event} ON "{table}" '
                        f"BEGIN {SQLITE_CHANGE} END"
                    )
        else:
            raise NotImplementedError(f"No catalog stamp triggers for {connection.vendor}.")
    return missing


def stamp_triggered_tables(connection) -> set[str]:
    """The tables that have the stamp's trigger (on SQLite, each of its triggers)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE t.tgname = %s",
                [TRIGGER],
            )
            return {name for (name,) in cursor.fetchall()}
        cursor.execute(
            "SELECT tbl_name, count(*) FROM sqlite_master WHERE type = 'trigger' "
            "AND name LIKE %s GROUP BY tbl_name",
            [f"{TRIGGER}_%"],
        )
        return {name for name, count in cursor.fetchall() if count == len(_sqlite_events(name))}


def _sqlite_events(table: str) -> list[tuple[str, str]]:
    """SQLite's triggers of a table (it has no statement triggers): (name, event)."""
    return [
        (f"{TRIGGER}_{table}_{event.lower()}", _update_event(table) if event == "UPDATE" else event)
        for event in SQLITE_EVENTS
    ]


def _update_event(table: str) -> str:
    return f"UPDATE OF {', '.join(UPDATE_OF[table])}" if table in UPDATE_OF else "UPDATE"


def stamp_triggers_remove(connection) -> None:
    tables = set(connection.introspection.table_names())
    with connection.cursor() as cursor:
        for table in WATCHED_TABLES:
            if table not in tables:
                continue
            if connection.vendor == "postgresql":
                cursor.execute(f'DROP TRIGGER IF EXISTS {TRIGGER} ON "{table}"')
            else:
                for name, _ in _sqlite_events(table):
                    cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')
        if connection.vendor == "postgresql":
            cursor.execute("DROP FUNCTION IF EXISTS catalog_stamp_change()")


def stamp_triggers_after_migrate(sender, using, **kwargs) -> None:
    from django.db import connections

    stamp_triggers_install(connections[using])
