"""What every catalog API request reads before it can answer, each way timed in the same
run: its token with its person, the catalog's stamp, and the check of the kept database
connection; the ORM's read (Django's own check) against Pixie's (pixie.core.plain_reads,
pixie.database.postgresql). In a loop on one connection, so these are the reads' own
costs; inside a request each also waits for the server in turn.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf \\
        .venv/bin/python benchmarks/request_reads.py

Prints a Markdown section (scripts/perf collects it into docs/PERFORMANCE.md).
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db.backends.postgresql.base import DatabaseWrapper  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from catalog.models import CatalogStamp  # noqa: E402
from catalog.selectors import catalog_stamp  # noqa: E402
from pixie.core.plain_reads import token_with_user  # noqa: E402

LOOPS, BATCHES = 2_000, 5


def per_call_ms(action) -> float:
    """Median over BATCHES of the mean time of one call, in a batch of LOOPS calls."""
    for _ in range(100):
        action()
    batches = []
    for _ in range(BATCHES):
        started = time.perf_counter()
        for _ in range(LOOPS):
            action()
        batches.append((time.perf_counter() - started) / LOOPS * 1000)
    return statistics.median(batches)


def main() -> None:
    if connection.vendor != "postgresql":
        sys.exit("benchmarks/request_reads.py needs PostgreSQL (set DATABASE_URL)")
    user = get_user_model().objects.create_user("reader")  # a write: the stamp has a shard
    key = Token.objects.create(user=user).key
    connection.ensure_connection()
    reads = [
        (
            "the token with its person (Pixie's read carries the stamp too)",
            lambda: Token.objects.select_related("user").get(key=key),
            lambda: token_with_user(Token, column="key", value=key),
        ),
        (
            "the catalog's stamp, alone (a login's request)",
            lambda: tuple(sorted(CatalogStamp.objects.values_list("number", flat=True))),
            catalog_stamp,
        ),
        (
            "the kept connection's check",
            lambda: DatabaseWrapper.is_usable(connection),  # Django's own: SELECT 1
            connection.is_usable,
        ),
    ]
    print("## A catalog request's reads\n")
    print(f"PostgreSQL; each read {LOOPS:,} times in a loop on one connection, the median of")
    print(f"{BATCHES} batches. What a catalog request answered from its stamp reads: its")
    print("token with its person and the catalog's stamp (one statement, with an API")
    print("token; a login's request reads the stamp alone), and before either, on a")
    print("connection kept from an earlier request, the check that it still works.\n")
    print("| read | the ORM's (Django's check) ms | Pixie's ms | saved |")
    print("| --- | ---: | ---: | ---: |")
    for name, django_way, pixie_way in reads:
        assert django_way() and pixie_way()
        theirs, ours = per_call_ms(django_way), per_call_ms(pixie_way)
        print(f"| {name} | {theirs:.3f} | {ours:.3f} | {1 - ours / theirs:.0%} |")
    print()


try:
    main()
finally:
    teardown()
