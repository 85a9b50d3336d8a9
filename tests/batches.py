"""How many statements a bulk insert takes on the test's database."""

import math

from django.db import connection

# Django 5.2 sends SQLite at most 999 parameters a statement (6.0 asks SQLite for the limit
# it was built with, ticket #36143); PostgreSQL takes a bulk insert in one.
SQLITE_PARAMETERS = 999


def bulk_inserts(model, rows: int) -> int:
    """The INSERTs ``bulk_create`` of ``rows`` new ``model`` rows sends."""
    if connection.vendor != "sqlite":
        return 1
    columns = [
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and f.get_internal_type().endswith("AutoField"))
    ]
    return math.ceil(rows / (SQLITE_PARAMETERS // len(columns)))
