"""Bundle folders and archives for the file API and upload tests.

The ledger bundle of skill_folders, with a long body that has no `@` inside code (on
this branch code spans are not yet told apart from mentions), and a bundle of many
skills with supporting files for the query-count tests.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from .skill_folders import SECTION, TITLES, bundle_folder, ledger_export_skill, write


def long_safe_body(target_chars: int = 30_000) -> str:
    parts = ["# Export ledger statements\n\nRead the ledger with @ledger-lookup first.\n\n"]
    code = 400
    while sum(map(len, parts)) < target_chars:
        title, advice = TITLES[code % len(TITLES)]
        parts.append(SECTION.format(code=code, title=title, advice=advice))
        code += 1
    return "".join(parts)


def ledger_bundle(root: Path, *, version: str = "1.0.0") -> Path:
    """ledger-tools: two skills, a 30,000-character body, scripts/export.py (executable),
    references/ (Markdown and an HTML page), a PNG and an SVG."""
    bundle_folder(root, version=version)
    skill = root / "skills" / "ledger-export"
    ledger_export_skill(skill, body=long_safe_body())
    write(skill / "references" / "report.html", "<html><script>alert(1)</script></html>\n")
    write(skill / "assets" / "chart.svg", '<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    return root


def many_skills_bundle(root: Path, count: int, *, slug: str = "many") -> Path:
    """A bundle of ``count`` small skills, each with three supporting files."""
    names = [f"skill-{i:02}" for i in range(count)]
    write(
        root / "bundle.toml",
        f'slug = "{slug}"\nname = "Many"\nversion = "1.0.0"\nskills = {names!r}\n'.replace(
            "'", '"'
        ),
    )
    for i, name in enumerate(names):
        folder = root / "skills" / name
        write(folder / "SKILL.md", f"---\nname: {name}\ndescription: Skill {i}.\n---\n\nDo {i}.\n")
        write(folder / "scripts" / "run.sh", f"#!/bin/sh\necho {i}\n", executable=True)
        write(folder / "references" / "notes.md", f"# Notes {i}\n")
        write(folder / "assets" / "data.bin", bytes([i % 256]) * 64)
    return root


def zip_of(folder: Path, *, prefix: str = "") -> bytes:
    """The folder as a .zip (unix modes kept), each path under ``prefix``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(prefix + str(path.relative_to(folder)))
                info.create_system = 3
                info.external_attr = (0o100000 | (path.stat().st_mode & 0o777)) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def tar_gz_of(folder: Path, *, prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=prefix + str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def zip_with_evil(folder: Path) -> bytes:
    """The folder as a .zip plus an entry that climbs out of it and a symbolic link."""
    buffer = io.BytesIO(zip_of(folder))
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("../evil", b"pwned")
        link = zipfile.ZipInfo("skills/ledger-lookup/passwd")
        link.create_system = 3
        link.external_attr = 0o120777 << 16
        archive.writestr(link, b"/etc/passwd")
    return buffer.getvalue()
