"""The catalog's stamp: a value that changes in the same transaction as anything the
catalog API's answers are made of, so an answer's ETag is over the stamp and the
reader's facts rather than over the rows themselves (catalog.api.conditional).

Database triggers change it (catalog/migrations/0020_catalog_stamp.py), not code: a
write by any path (a service, the admin, a bulk update, a restore from history, SQL)
changes it, and no code can forget to. Each write sets one shard's value to a fresh
random number; a reader reads every shard, in the same query as its facts
(catalog.selectors.catalog_viewer). Shards, picked by transaction, keep two writers
in different tables from waiting on one row; random values, rather than a counter,
keep a stamp from coming back after a database is emptied and filled again.
"""

from django.db import models

# On PostgreSQL the trigger picks one of these by transaction id; SQLite has one writer
# at a time and uses shard 0.
SHARDS = 16


class CatalogStamp(models.Model):
    shard = models.PositiveSmallIntegerField(primary_key=True)
    number = models.BigIntegerField()

    class Meta:
        verbose_name = "catalog stamp"

    def __str__(self) -> str:
        return f"shard {self.shard}: {self.number}"
