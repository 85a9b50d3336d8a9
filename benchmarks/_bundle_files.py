"""The benchmark bundle of 20 skills with 200 supporting files (50 MiB), written fresh."""

import os
from pathlib import Path

SKILLS, FILES_PER_SKILL, TOTAL_BYTES = 20, 10, 50 * 1024 * 1024


def write_bundle(root: Path, run: int) -> Path:
    """A bundle of fresh bytes for each run (so nothing is deduplicated across runs):
    per skill a SKILL.md, 4 text references and 6 binary assets."""
    per_file = TOTAL_BYTES // (SKILLS * FILES_PER_SKILL)
    slugs = [f"skill-{i:02d}" for i in range(SKILLS)]
    root.mkdir(parents=True)
    (root / "bundle.toml").write_text(
        f'slug = "files-{run}"\nname = "Files {run}"\nversion = "1.0.0"\n'
        f"skills = [{', '.join(repr(s) for s in slugs)}]\n".replace("'", '"')
    )
    for slug in slugs:
        folder = root / "skills" / slug
        (folder / "references").mkdir(parents=True)
        (folder / "assets").mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: {slug}\ndescription: Step {slug} of the benchmark bundle.\n---\n\n"
            + "Read the references before acting.\n" * 200
        )
        for n in range(4):
            line = f"{slug} reference {n}: a line of guidance the agent reads on demand.\n"
            (folder / "references" / f"ref-{n}.md").write_text(
                (f"run {run}\n" + line * (per_file // len(line) + 1))[:per_file]
            )
        for n in range(FILES_PER_SKILL - 4):
            (folder / "assets" / f"asset-{n}.bin").write_bytes(os.urandom(per_file))
    return root
