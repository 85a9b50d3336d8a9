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
from catalog.finding_rules import guardrail_rules  # noqa: E402
from catalog.findings import URL, is_markdown, scan_skill  # noqa: E402
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
    scan, one_pass = scan_figures(spec)
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
    texts = [s.body for s in spec.skills] + [
        f.data.decode() for s in spec.skills for f in s.files if is_markdown(f.path)
    ]
    size = sum(len(t) for t in texts)
    scan_ratio = scan / one_pass
    print("## Findings: scanning the same version's text\n")
    print(f"Every SKILL.md body and Markdown file of the version ({size / 2**20:.1f} MiB of text),")
    print("scanned for hidden text, undeclared reach and the guardrail rules; the reference is")
    print("one pass of one compiled regular expression over the same text: the URL pattern as")
    print("one writes it (case-insensitive, from a word boundary). The scan itself matches")
    print("lower-cased text from a literal start, which Python's re skips to fast.")
    print(f"Median of {RUNS} runs.\n")
    print("| step | ms | reference ms | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| scan_skill over every skill | {scan * 1000:.0f} | {one_pass * 1000:.0f} | "
          f"{scan_ratio:.2f}x |")  # fmt: skip
    print()
    record(
        "Scan a version's text for findings <= 5x one compiled regex pass",
        f"{scan * 1000:.0f} ms vs {one_pass * 1000:.0f} ms: {scan_ratio:.2f}x",
        scan_ratio <= 5,
    )


def scan_figures(spec) -> tuple[float, float]:
    """Median seconds of the findings scan of every skill, and of one regex pass."""
    rules = guardrail_rules()
    hosts = [h.host for h in spec.hosts]
    texts = [s.body for s in spec.skills] + [
        f.data.decode() for s in spec.skills for f in s.files if is_markdown(f.path)
    ]
    scans, passes = [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        for text in texts:
            sum(1 for _ in URL.finditer(text))
        passes.append(time.perf_counter() - started)
        started = time.perf_counter()
        for skill in spec.skills:
            markdown = [(f.path, f.data.decode()) for f in skill.files if is_markdown(f.path)]
            scan_skill(skill=skill.slug, body=skill.body, markdown=markdown, hosts=hosts,
                       rules=rules)  # fmt: skip
        scans.append(time.perf_counter() - started)
    return statistics.median(scans), statistics.median(passes)


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
