"""How the cost of hostile input grows with its size: each as the ratio of two sizes,
which a fast machine cannot hide. Not a test: it prints figures (docs/RELIABILITY.md).

    .venv/bin/python benchmarks/hostile_sizes.py

- a side-by-side diff of two edits whose every line differs, 2,000 and 8,000 lines;
- refusing a YAML alias bomb in a frontmatter, 6 and 12 levels (10**6 and 10**12 values
  were it expanded);
- walking a .tar.gz's headers to refuse a GNU long-name header of 1 MB and of 16 MB;
- the findings scan over crafted texts of about 16,000 and 64,000 characters (the
  shapes tests/catalog/test_findings_engine.py holds to a linear ratio).
"""

import contextlib
import io
import os
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pixie.settings")

import django  # noqa: E402

django.setup()

from catalog.archive_limits import ArchiveRefused, Limits, tar_gz_headers_check  # noqa: E402
from catalog.bundle_files import parse_skill_md  # noqa: E402
from catalog.diff_display import side_by_side  # noqa: E402
from catalog.finding_rules import guardrail_rules  # noqa: E402
from catalog.findings import scan_skill  # noqa: E402
from tests.catalog.test_findings_engine import CRAFTED  # noqa: E402


def best(run, repeats=3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def numbered(count: int, word: str) -> str:
    lines = (f"{word} line {n}: check the ledger before {word} {n * 7}" if n % 2 else "Then:"
             for n in range(count))  # fmt: skip
    return "\n".join(lines)


def alias_bomb(levels: int) -> str:
    lines = ['  l0: &l0 ["lol"]']
    for n in range(1, levels + 1):
        lines.append(f"  l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]")
    return "---\nname: x\ndescription: y\nlaughs:\n" + "\n".join(lines) + "\n---\n\nBody.\n"


def long_name_tar(size: int) -> Path:
    member = tarfile.TarInfo("skills/x/" + "a" * size)
    member.size = 1
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.GNU_FORMAT) as archive:
        archive.addfile(member, io.BytesIO(b"x"))
    path = Path(tempfile.mkdtemp()) / "long.tar.gz"
    path.write_bytes(buffer.getvalue())
    return path


def report(label: str, small: float, large: float, sizes: str) -> None:
    print(f"{label:<48} {sizes:<22} {small * 1000:9.2f} ms {large * 1000:9.2f} ms  "
          f"ratio {large / small:5.2f}")  # fmt: skip


def main() -> None:
    small, large = numbered(2_000, "alpha"), numbered(8_000, "alpha")
    other_small, other_large = numbered(2_000, "omega"), numbered(8_000, "omega")
    report("side-by-side diff, every line changed", best(lambda: side_by_side(small, other_small)),
           best(lambda: side_by_side(large, other_large)), "2,000 vs 8,000 lines")  # fmt: skip

    def refuse(levels):
        text = alias_bomb(levels)
        return lambda: parse_skill_md(text, "x", "1.0.0", [], [], "SKILL.md")

    report("YAML alias bomb refused", best(refuse(6), 20), best(refuse(12), 20),
           "6 vs 12 levels")  # fmt: skip

    limits = Limits(entries=20_000, name_bytes=64 * 1024, declared_bytes=1 << 30)

    def walk(path):
        def run():
            with contextlib.suppress(ArchiveRefused):
                tar_gz_headers_check(path, limits)

        return run

    report("tar long-name header refused", best(walk(long_name_tar(1_000_000))),
           best(walk(long_name_tar(16_000_000))), "1 MB vs 16 MB name")  # fmt: skip

    rules = guardrail_rules()
    for shape, make in CRAFTED.items():
        texts = make(2_000), make(8_000)
        small, large = (best(lambda t=t: scan_skill(skill="s", body=t, rules=rules)) for t in texts)
        sizes = f"{len(texts[0]):,} vs {len(texts[1]):,} chars"
        report(f"findings: {shape}"[:48], small, large, sizes)


if __name__ == "__main__":
    main()
