"""Querysets of a fixed shape compiled to SQL once, then run with each request's values.

On the catalog API's hot reads (token authentication, a version's row, a page of the
list), building and compiling a queryset cost Django more than PostgreSQL spends
running the indexed query. A PreparedQuery builds its queryset once with stand-in
values, keeps the compiled SQL, and sends it again with the real values in their
place. Rows come back through Django's own converters, and as model instances the way
Django's ModelIterable makes them (select_related included), so callers get what the
ORM would have given them (tests/pixie/test_prepared.py holds the two equal).

Only for querysets whose SQL does not depend on the values: equality and range
lookups, EXISTS subqueries, a fixed LIMIT; not ``__in`` over a list of varying length,
not slicing by a value (filter on a rank instead), and no prefetch_related (refused
when compiled).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators


class Slot:
    """A stand-in for a value given at run time: ``Slot("key", "\\x00key\\x00")``. The
    sample must be a value the built query passes through unchanged (an exact
    lookup's), and one no literal of the query could equal."""

    def __init__(self, name: str, sample):
        self.name, self.sample = name, sample


@dataclass
class _Compiled:
    sql: str
    # For each parameter: the name of the run-time value it takes, or None for a literal.
    slots: list[tuple[str | None, object]]
    compiler: object
    converters: dict
    populators: list
    init_list: list[str]
    model_span: tuple[int, int]


class PreparedQuery:
    """``build(**samples)`` makes the queryset, given each slot's sample value."""

    def __init__(self, build: Callable[..., QuerySet], *slots: Slot):
        self._build = build
        self._slots = slots
        # Per thread and database: a compiler holds its thread's connection.
        self._local = threading.local()

    def _compiled(self, using: str) -> _Compiled:
        cache = self._local.__dict__.setdefault("compiled", {})
        if using not in cache:
            cache[using] = self._compile(using)
        return cache[using]

    def _compile(self, using: str) -> _Compiled:
        queryset = self._build(**{value.name: value.sample for value in self._slots})
        if queryset._prefetch_related_lookups:
            raise ValueError("A prepared query cannot prefetch: prefetch separately.")
        compiler = queryset.query.get_compiler(using=using)
        sql, params = compiler.as_sql()
        names = {value.sample: value.name for value in self._slots}
        slots = [(names.get(param) if _hashable(param) else None, param) for param in params]
        missing = {value.name for value in self._slots} - {name for name, _ in slots}
        if missing:
            raise ValueError(f"The built query does not pass through {sorted(missing)} as is.")
        populators, init_list, span = [], [], (0, 0)
        if compiler.klass_info and compiler.klass_info["select_fields"]:
            # The model's columns, for instances() (a union of values() querysets has
            # klass_info too: harmless, since only objects() and instances() read it).
            fields = compiler.klass_info["select_fields"]
            span = (fields[0], fields[-1] + 1)
            init_list = [column[0].target.attname for column in compiler.select[slice(*span)]]
            populators = get_related_populators(compiler.klass_info, compiler.select, using)
        converters = compiler.get_converters([column[0] for column in compiler.select])
        return _Compiled(sql, slots, compiler, converters, populators, init_list, span)

    def rows(self, using: str = "default", **values) -> list[tuple]:
        """The rows, converted as Django converts them (datetimes, booleans, …)."""
        compiled = self._compiled(using)
        params = [values[name] if name else literal for name, literal in compiled.slots]
        connection = connections[using]
        # On PostgreSQL, a cursor whose statements are prepared after a few runs
        # (pixie/postgresql/base.py): the SQL is the same every time, so it is planned once.
        opened = getattr(connection, "prepared_cursor", connection.cursor)
        with opened() as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        if compiled.compiler.has_extra_select:  # ordering columns past the selected ones
            fetched = [row[: compiled.compiler.col_count] for row in fetched]
        if not compiled.converters:
            return fetched
        # What results_iter does, with the converters found once.
        converted = compiled.compiler.apply_converters(fetched, compiled.converters)
        return [tuple(row) for row in converted]

    def objects(self, using: str = "default", **values) -> list[Model]:
        """The rows as the queryset's model instances, with what it select_related."""
        return self.instances(self.rows(using, **values), using)

    def instances(self, rows: list[tuple], using: str = "default") -> list[Model]:
        """Rows this query gave (``rows``) made into its model instances: a caller that may
        need only the values (an ETag over them) makes instances only when it needs them."""
        compiled = self._compiled(using)
        klass_info = compiled.compiler.klass_info
        model, start, end = klass_info["model"], *compiled.model_span
        annotations = compiled.compiler.annotation_col_map
        found = []
        for row in rows:
            instance = model.from_db(using, compiled.init_list, row[start:end])
            for populator in compiled.populators:
                populator.populate(row, instance)
            for name, position in annotations.items():
                setattr(instance, name, row[position])
            found.append(instance)
        return found

    def column(self, name: str, using: str = "default") -> int:
        """Where a field of the queryset's model (by attname) or an annotation is in a row."""
        compiled = self._compiled(using)
        annotations = compiled.compiler.annotation_col_map
        if name in annotations:
            return annotations[name]
        return compiled.model_span[0] + compiled.init_list.index(name)

    def annotations(self, using: str = "default") -> dict[str, int]:
        """The queryset's annotations, each with where it is in a row."""
        return self._compiled(using).compiler.annotation_col_map

    def first(self, using: str = "default", **values) -> Model | None:
        found = self.objects(using, **values)
        return found[0] if found else None


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
