"""A digest of the rows a queryset gives, computed by PostgreSQL inside another statement:
what an ETag needs to know of them, with no row sent back or decoded.

Each row is taken as text (PostgreSQL's record output, the same in every process for
the same values), the texts are sorted byte by byte (COLLATE "C") and joined, and the
join is hashed: so the digest does not depend on the order the rows happen to come in.
No rows give NULL. Elsewhere (SQLite) it is NULL too, and callers use the rows
themselves (catalog.bundle_pages, catalog.selectors).
"""

from django.db import connections
from django.db.models import CharField, Subquery


class RowsDigest(Subquery):
    template = (
        "(SELECT md5(string_agg(digested::text, ',' ORDER BY digested::text COLLATE \"C\"))"
        " FROM (%(subquery)s) digested)"
    )
    output_field = CharField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return "NULL", []


def digests_read(using: str = "default") -> bool:
    """Whether RowsDigest gives a digest here (PostgreSQL), not NULL."""
    return connections[using].vendor == "postgresql"
