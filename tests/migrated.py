"""A SQLite database migrated once per xdist worker, copied for each Pixie server a test
starts in a subprocess (a second server, another operator's machine): migrating one from
nothing takes about ten seconds, copying it a few milliseconds."""

import base64
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

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


def migrate_sqlite(folder: Path) -> MigratedDatabase:
    key = base64.b64encode(os.urandom(32)).decode()
    path = folder / "migrated.sqlite3"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "DATABASE_URL": f"sqlite:///{path}",
        "PIXIE_DATA_DIR": str(folder),
        "PIXIE_KEY_ENCRYPTION_KEY": key,
    }
    subprocess.run(  # noqa: S603 (our own manage.py)
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return MigratedDatabase(path, key)
