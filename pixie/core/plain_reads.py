"""The catalog API's hand-written reads, each one statement of plain SQL whose values pass
through the converters the ORM would apply (the backend's and the field's: SQLite's dates
and booleans come back as text and numbers), made into what the ORM would give:

- ``token_with_user``: a token and its person (and the workspace it is limited to), as
  model instances made with ``Model.from_db``, as ``select_related`` gives them; and in
  the same statement, the columns an app asked for with ``read_with_every_token`` (the
  catalog's stamp, catalog.apps), read back with ``read_with_token``;
- ``column_values``: one field of every row of a small table, as ``values_list(...,
  flat=True)`` gives it (the stamp for a request without a token).

Every API request reads its token, and every catalog request the stamp. The ORM's
building of those queries cost more than running them (the token: 0.70 ms against
0.35 ms a read; the stamp: 0.23 ms against 0.15 ms; benchmarks/ANALYSIS.md), and reading
them apart cost a second wait for the database: together they are most of a catalog read
answered from its stamp. Each statement is written here once a model, from the models'
own metadata, so a field added to a model is read too.

Written for Django 5.2 and psycopg 3: tests/pixie/test_plain_reads.py compares each
with the ORM's read on SQLite and PostgreSQL, and holds that pin.
"""

from __future__ import annotations

import json
from functools import cache

from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router
from django.db.models import Model


def token_with_user(model: type[Model], *, column: str, value: str, related: tuple = ()):
    """The ``model`` row whose ``column`` is ``value``, with ``.user`` (and each foreign
    key named in ``related``, which may be empty) set from the same row; or None."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    alongside = tuple(_ALONGSIDE)
    statement, parts = _statement(model, column, related, alias, alongside)
    with connection.cursor() as cursor:
        cursor.execute(statement, [value])
        row = cursor.fetchone()
    if row is None:
        return None
    read = row[-1] if alongside else None  # the columns read alongside, last
    instances, start = [], 0
    for part_model, names, converters in parts:
        values = list(row[start : start + len(names)])
        start += len(names)
        if values[0] is None:  # a foreign key left empty: its LEFT JOIN gave NULLs
            instances.append(None)
            continue
        for index, (output, field_converters) in enumerate(converters):
            for convert in field_converters:
                values[index] = convert(values[index], output, connection)
        instances.append(part_model.from_db(alias, names, values))
    token, *others = instances
    for name, instance in zip(("user", *related), others, strict=True):
        setattr(token, name, instance)
    if alongside:
        token.read_alongside = _alongside_values(alongside, read, connection)
    return token


# Columns every token_with_user reads too (read_with_every_token): (model, field name).
_ALONGSIDE: list[tuple[type[Model], str]] = []
# Fields whose values JSON carries unchanged (Django's internal types).
_CARRIED_AS_JSON = frozenset({
    "BigIntegerField", "IntegerField", "PositiveIntegerField", "PositiveSmallIntegerField",
    "SmallIntegerField", "CharField", "TextField", "BooleanField",
})  # fmt: skip


def read_with_every_token(model: type[Model], field_name: str) -> None:
    """Have every token's read carry ``field_name`` of every row of ``model`` (a table of
    a few rows), in the same statement: a request that needs both waits for the
    database once. Called by an app at start-up (catalog.apps: the catalog's stamp).

    The values travel as JSON, which keeps integers, text and booleans as they are and
    nothing else (a date would come back as text its converters do not expect): other
    fields are refused here, at start-up."""
    kind = model._meta.get_field(field_name).get_internal_type()
    if kind not in _CARRIED_AS_JSON:
        raise ImproperlyConfigured(
            f"{model._meta.label}.{field_name} is a {kind}: a column read with every token "
            f"travels as JSON, so it must be one of {', '.join(sorted(_CARRIED_AS_JSON))}."
        )
    if (model, field_name) not in _ALONGSIDE:
        _ALONGSIDE.append((model, field_name))


def read_with_token(token, model: type[Model], field_name: str) -> list | None:
    """The values of ``field_name`` read in the same statement as ``token``, in no order;
    None for a token not read so (no token, or a session's request)."""
    return getattr(token, "read_alongside", {}).get((model, field_name))


def _alongside_values(alongside: tuple, read, connection) -> dict:
    """Each column's values, from one JSON array of arrays (PostgreSQL's json type comes
    parsed, SQLite's as text), through each field's converters."""
    read = json.loads(read) if isinstance(read, str) else read
    values = {}
    for (model, field_name), column in zip(alongside, read, strict=True):
        _, output, converters = _column_statement(model, field_name, connection.alias)
        column = column or []  # an empty table aggregates to NULL
        for convert in converters:
            column = [convert(value, output, connection) for value in column]
        values[model, field_name] = column
    return values


@cache
def _statement(
    model: type[Model], column: str, related: tuple, alias: str, alongside: tuple
) -> tuple[str, list]:
    """The SELECT, and for each model in its row, in order: the model, its attribute
    names, and each field's converters; then, if any, the columns read alongside, as
    one JSON array of each one's values."""
    quote = connections[alias].ops.quote_name
    joined = [("u", model._meta.get_field("user"), get_user_model())]
    joined += [(f"r{n}", model._meta.get_field(name), None) for n, name in enumerate(related)]
    parts = [_part(model, alias)]
    columns = [f"t.{quote(field.column)}" for field in _fields(model)]
    joins = []
    for table_alias, foreign_key, target in joined:
        target = target or foreign_key.related_model
        parts.append(_part(target, alias))
        columns += [f"{table_alias}.{quote(field.column)}" for field in _fields(target)]
        kind = "LEFT JOIN" if foreign_key.null else "JOIN"
        joins.append(
            f"{kind} {quote(target._meta.db_table)} {table_alias} "
            f"ON {table_alias}.{quote(target._meta.pk.column)} = t.{quote(foreign_key.column)}"
        )
    if alongside:
        columns.append(_alongside_column(alongside, connections[alias]))
    where = quote(model._meta.get_field(column).column)
    # Every name comes from the models' metadata; the one value is a parameter.
    statement = (
        f"SELECT {', '.join(columns)} FROM {quote(model._meta.db_table)} t {' '.join(joins)} "  # noqa: S608
        f"WHERE t.{where} = %s"
    )
    return statement, parts


def column_values(model: type[Model], field_name: str) -> list:
    """``field_name``'s value in every row of ``model``, in no order."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    statement, output, converters = _column_statement(model, field_name, alias)
    with connection.cursor() as cursor:
        cursor.execute(statement)
        values = [row[0] for row in cursor.fetchall()]
    for convert in converters:
        values = [convert(value, output, connection) for value in values]
    return values


@cache
def _column_statement(model: type[Model], field_name: str, alias: str) -> tuple:
    field = model._meta.get_field(field_name)
    connection = connections[alias]  # as in _part: its converters read only its settings
    output, converters = _converters(field, connection)
    quote = connection.ops.quote_name
    statement = f"SELECT {quote(field.column)} FROM {quote(model._meta.db_table)}"  # noqa: S608
    return statement, output, converters


def _alongside_column(alongside: tuple, connection) -> str:
    """One JSON array holding, for each (model, field) read alongside, the array of its
    values in every row: a scalar subquery each, so the token's row stays one row."""
    array, aggregate = (
        ("json_build_array", "json_agg") if connection.vendor == "postgresql"
        else ("json_array", "json_group_array")
    )  # fmt: skip
    quote, subqueries = connection.ops.quote_name, []
    for model, field_name in alongside:
        column, table = model._meta.get_field(field_name).column, model._meta.db_table
        # Every name comes from the models' metadata.
        subqueries.append(f"(SELECT {aggregate}({quote(column)}) FROM {quote(table)})")  # noqa: S608
    return f"{array}({', '.join(subqueries)})"


class _Output:
    """What a converter is given as the expression it converts: the field's output."""

    def __init__(self, field):
        self.output_field = field


def _part(model: type[Model], alias: str) -> tuple:
    # Kept a process, from the first thread's connection: the backend's converters use
    # only its settings (SQLite's time zone), the same for every thread.
    connection = connections[alias]
    converters = [_converters(field, connection) for field in _fields(model)]
    return model, [field.attname for field in _fields(model)], converters


def _converters(field, connection) -> tuple:
    """What the ORM runs on a value of ``field`` read from ``connection``: the backend's
    converters, then the field's, each given the field's output as its expression."""
    output = _Output(field)
    return output, connection.ops.get_db_converters(output) + field.get_db_converters(connection)


def _fields(model: type[Model]) -> list:
    # The primary key first: a LEFT JOIN's missing row shows as its NULL.
    fields = [f for f in model._meta.get_fields() if f.concrete and not f.many_to_many]
    return sorted(fields, key=lambda field: not field.primary_key)
