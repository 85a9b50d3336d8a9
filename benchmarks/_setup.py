"""Shared set-up for benchmark scripts: Django on a throwaway test database."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def django_with_test_database():
    """Configure Django and create a fresh test database (dropped by the returned callable)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pixie.settings")
    # Tasks (a share's delivery, say) run in-process here: no worker serves a benchmark.
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)

    def teardown():
        connection.creation.destroy_test_db(old_name, verbosity=0)

    return connection, teardown


def record(target: str, figure: str, met: bool) -> None:
    """Note a target's figure for the summary scripts/perf puts at the top of
    docs/PERFORMANCE.md (a no-op when the script runs on its own)."""
    import json

    path = os.environ.get("PIXIE_BENCH_RESULTS")
    if path:
        with open(path, "a", encoding="utf-8") as results:
            results.write(json.dumps({"target": target, "figure": figure, "met": met}) + "\n")
