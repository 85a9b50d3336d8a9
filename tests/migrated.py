"""A SQLite database migrated once per run, copied for each Pixie server a test starts in a
subprocess (a second server, another operator's machine): migrating one from nothing takes
five to ten seconds, copying it milliseconds. The run starts migrating it in the background
as its first test begins, if any test will need it (tests/conftest.py's migrate_early); the
first xdist worker there starts it under a file lock, the others find it started."""

import base64
import json
import os
import shlex
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class MigratedDatabase:
    path: Path
    # The key the migrations ran under: a server started on a copy uses the same one, as a
    # restored backup would (a migration may wrap a key with it).
    key_encryption_key: str

    def copy_to(self, destination: Path) -> str:
        """A copy at ``destination`` (readable by its owner only); its DATABASE_URL."""
        destination.parent.mkdir(parents=True, exist_ok=True)
        # SQLite's own backup: whatever is still in the write-ahead log comes along.
        with (
            closing(sqlite3.connect(self.path)) as source,
            closing(sqlite3.connect(destination)) as target,
        ):
            source.backup(target)
        destination.chmod(0o600)
        return f"sqlite:///{destination}"


def migrate_in_background(shared: Path) -> None:
    """Start migrating the run's database in ``shared`` (a folder every worker of the run
    sees) unless a worker has already: the tests run meanwhile, and the first that needs
    the database rarely waits (and the cost is not counted as its own)."""
    shared.mkdir(parents=True, exist_ok=True)
    with FileLock(str(shared / "migrated.lock")):
        if (shared / "migrated.json").exists():
            return
        key = base64.b64encode(os.urandom(32)).decode()
        (shared / "migrated.json").write_text(json.dumps({"key": key}))
        log = open(shared / "migrate.log", "wb")  # noqa: SIM115 (closed with the process)
        # A shell so the exit status lands in a file any worker can read.
        migrate = f"{shlex.quote(sys.executable)} manage.py migrate --noinput -v 0"
        status = shlex.quote(str(shared / "migrated.rc"))
        subprocess.Popen(  # noqa: S603
            ["/bin/sh", "-c", f"{migrate}; echo $? > {status}"],
            cwd=ROOT, env=migration_env(shared, key), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()


def migrated_once(shared: Path) -> MigratedDatabase:
    """The run's migrated database in ``shared``, once the migration has finished."""
    migrate_in_background(shared)
    status = shared / "migrated.rc"
    deadline = time.monotonic() + 300
    while not status.exists() or not status.read_text().strip():
        if time.monotonic() > deadline:
            raise TimeoutError(f"migrating {shared} took over 5 minutes")
        time.sleep(0.1)
    if status.read_text().strip() != "0":
        raise RuntimeError("migrate failed:\n" + (shared / "migrate.log").read_text())
    key = json.loads((shared / "migrated.json").read_text())["key"]
    return MigratedDatabase(shared / "migrated.sqlite3", key)


def migration_env(folder: Path, key: str) -> dict:
    return {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "DATABASE_URL": f"sqlite:///{folder / 'migrated.sqlite3'}",
        "PIXIE_DATA_DIR": str(folder),
        "PIXIE_KEY_ENCRYPTION_KEY": key,
    }
