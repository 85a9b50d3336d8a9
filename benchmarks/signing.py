"""Verifying a signed bundle version, next to a reference timed in the same run: the
sha256 of the same bytes. The version has 20 skills with 200 supporting files (50 MiB);
verification reads the version, recomputes every skill's digest, hashes every file's
stored bytes (in PostgreSQL, where they are) and checks the Ed25519 signature.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/signing.py

Prints a Markdown section (scripts/perf collects it into docs/PERFORMANCE.md).
"""

import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from _bundle_files import SKILLS, TOTAL_BYTES, write_bundle  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402

from catalog.bundle_files import read_bundle_folder  # noqa: E402
from catalog.services.bundle_load import bundle_load  # noqa: E402
from catalog.services.signing import bundle_version_verify  # noqa: E402

RUNS = 5


def main():
    operator = get_user_model().objects.create_user("bench-operator")
    with tempfile.TemporaryDirectory() as tmp:
        root = write_bundle(Path(tmp) / "bundle", 0)
        files = [p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()]
        spec = read_bundle_folder(root)
        bundle_version = bundle_load(spec=spec, actor=operator, publish=True).bundle_version
    verify, hashing = [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        for data in files:
            hashlib.sha256(data).hexdigest()
        hashing.append(time.perf_counter() - started)
        started = time.perf_counter()
        bundle_version_verify(bundle_version=bundle_version)
        verify.append(time.perf_counter() - started)
    took, ref = statistics.median(verify), statistics.median(hashing)
    ratio = took / ref
    count = sum(len(s.files) for s in spec.skills)
    print("## Signed versions: verifying what an apply is about to apply\n")
    print(f"{connection.vendor}; median of {RUNS} runs. A published version of {SKILLS} skills")
    print(f"with {count} supporting files, {TOTAL_BYTES // 2**20} MiB in all. Verification reads")
    print("every stored file's sha256 (PostgreSQL hashes the bytes in place), recomputes each")
    print("skill's digest and checks the signature; the reference hashes the same bytes,")
    print("already in memory, in Python.\n")
    print("| step | ms | reference ms | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| bundle_version_verify | {took * 1000:.0f} | {ref * 1000:.0f} | {ratio:.2f}x |")
    print()
    record(
        "Verify a signed 20-skill, 200-file version <= 3x sha256 of the same bytes",
        f"{took * 1000:.0f} ms vs {ref * 1000:.0f} ms: {ratio:.2f}x",
        ratio <= 3,
    )


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
