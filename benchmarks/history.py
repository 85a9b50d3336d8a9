"""Reading history: two versions of a 50-skill bundle compared (25 skills changed, each
with a changed reference file), and two revisions of a skill that has 1,000, next to a
reference doing the diff work alone in the same run (difflib over the same texts, read
from memory). The ratio is what reading the rows and shaping the answer costs on top.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/history.py

Prints a Markdown section (scripts/perf collects it into docs/PERFORMANCE.md).
"""

import difflib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database, record  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from catalog.bundle_files import read_bundle_folder  # noqa: E402
from catalog.bundle_history import bundle_compare  # noqa: E402
from catalog.models import SkillRevision, WorkspaceSkill  # noqa: E402
from catalog.services.bundle_load import bundle_load  # noqa: E402
from catalog.skill_history import revision_compare  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402

SKILLS, CHANGED, REVISIONS, RUNS = 50, 25, 1000, 7
LINE = "Check the ledger before writing to the customer, and say which invoice you mean.\n"


def write_version(root: Path, version: str) -> Path:
    folder = root / version
    slugs = [f"step-{i:02d}" for i in range(SKILLS)]
    folder.mkdir(parents=True)
    (folder / "bundle.toml").write_text(
        f'slug = "history-bench"\nname = "History bench"\nversion = "{version}"\n'
        f"skills = [{', '.join(repr(s) for s in slugs)}]\n".replace("'", '"')
    )
    for n, slug in enumerate(slugs):
        changed = version != "1.0.0" and n < CHANGED
        skill = folder / "skills" / slug
        (skill / "references").mkdir(parents=True)
        body = LINE * 300 + (f"In {version}, also note the due date.\n" if changed else "")
        (skill / "SKILL.md").write_text(
            f"---\nname: {slug}\ndescription: Step {n} of the benchmark bundle.\n---\n\n{body}"
        )
        for r in range(4):
            extra = f"Revised in {version}.\n" if changed and r == 0 else ""
            (skill / "references" / f"ref-{r}.md").write_text(LINE * 200 + extra)
    return folder


def timed(call) -> tuple[float, int]:
    """The median milliseconds of RUNS calls, and the queries of the last."""
    times = []
    for _ in range(RUNS):
        with CaptureQueriesContext(connection) as queries:
            start = time.perf_counter()
            call()
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), len(queries)


def reference(pairs: list[tuple[str, str]]) -> float:
    """difflib's unified diff over the same pairs of texts, already in memory."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for old, new in pairs:
            list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""))
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    operator = get_user_model().objects.create_superuser("bench-operator", password="x" * 20)
    with tempfile.TemporaryDirectory() as root:
        for version in ("1.0.0", "1.1.0"):
            spec = read_bundle_folder(write_version(Path(root), version))
            bundle_load(spec=spec, publish=True, actor=operator)
    bundle_ms, bundle_queries = timed(
        lambda: bundle_compare(user=operator, slug="history-bench", before="1.0.0", after="1.1.0")
    )
    comparison = bundle_compare(user=operator, slug="history-bench")
    pairs = [(f.before, f.after) for s in comparison.skills for f in s.changed_fields]
    texts = (LINE * 200, LINE * 200 + "Revised in 1.1.0.\n")
    pairs += [texts] * CHANGED
    bundle_reference = reference(pairs)

    workspace = Workspace.objects.create(slug="bench", name="Bench")
    Membership.objects.create(workspace=workspace, user=operator, role="owner")
    skill = WorkspaceSkill.objects.create(workspace=workspace, slug="long-lived")
    SkillRevision.objects.bulk_create(
        SkillRevision(skill=skill, number=n, name="Long lived", short_description="One.",
                      body=LINE * 300 + f"Revision {n}.\n", origin="local")
        for n in range(1, REVISIONS + 1)
    )  # fmt: skip
    WorkspaceSkill.objects.filter(pk=skill.pk).update(head=skill.revisions.get(number=REVISIONS))
    skill = WorkspaceSkill.objects.select_related("head").get(pk=skill.pk)
    revision_ms, revision_queries = timed(
        lambda: revision_compare(skill=skill, before=1, after=REVISIONS)
    )
    revision_reference = reference(
        [(LINE * 300 + "Revision 1.\n", LINE * 300 + "Revision 1000.\n")]
    )

    bundle_ratio = bundle_ms / bundle_reference
    revision_ratio = revision_ms / revision_reference
    print("## Reading history: comparisons\n")
    print(f"Bundle of {SKILLS} skills, {CHANGED} changed (body and one reference file each); a "
          f"skill with {REVISIONS:,} revisions; median of {RUNS} runs.\n")  # fmt: skip
    print("| comparison | time | queries | reference (difflib on the same texts) | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| two bundle versions | {bundle_ms:.1f} ms | {bundle_queries} | "
          f"{bundle_reference:.1f} ms | {bundle_ratio:.1f}x |")  # fmt: skip
    print(f"| revision 1 and {REVISIONS:,} of one skill | {revision_ms:.1f} ms | "
          f"{revision_queries} | {revision_reference:.2f} ms | "
          f"{revision_ratio:.1f}x |")  # fmt: skip
    record("bundle comparison, queries", f"{bundle_queries} queries", bundle_queries <= 8)
    record("revision comparison, queries", f"{revision_queries} queries", revision_queries <= 5)


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
