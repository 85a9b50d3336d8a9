"""A skill's files and size as the API and the admin show them (no queries of its own:
callers prefetch the files)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from catalog.bundle_files import SkillSpec, render_skill_file, skill_md_text
from catalog.services.bundle_load import skill_spec_of
from catalog.skill_content import skill_size
from catalog.validators import GUIDANCE_LINES, GUIDANCE_TOKENS


def file_mode(executable: bool) -> str:
    """The file's mode as git and zip write it."""
    return "100755" if executable else "100644"


def file_rows(files: Iterable, url: Callable[[str], str] | None = None) -> list[dict]:
    """path, size, sha256, mode, executable and media type of each file (SkillFile or
    RevisionFile rows), with its download address when ``url`` is given."""
    rows = []
    for f in files:
        row = {
            "path": f.path,
            "size": f.size,
            "sha256": f.blob_id,
            "executable": f.executable,
            "mode": file_mode(f.executable),
            "media_type": f.media_type,
        }
        if url is not None:
            row["url"] = url(f.path)
        rows.append(row)
    return rows


def size_of(body: str) -> dict:
    """Lines and estimated tokens of a SKILL.md body, with the warning past the guidance."""
    size = skill_size(body)
    return {**size.as_dict(), "warning": size.warning}


def skill_md_bytes(version) -> int:
    """The size of SKILL.md as served: as loaded, or rendered when it never was a file."""
    if version.skill_md:
        return len(version.skill_md.encode("utf-8"))

    return len(skill_md_text(skill_spec_of(version)).encode("utf-8"))


def totals_of(versions: Iterable) -> dict:
    """A bundle's totals over its skill versions (files prefetched)."""
    skills = files = size = lines = tokens = 0
    over = []
    for version in versions:
        measured = skill_size(version.body)
        version_files = list(version.files.all())
        skills += 1
        files += len(version_files)
        size += skill_md_bytes(version) + sum(f.size for f in version_files)
        lines += measured.lines
        tokens += measured.tokens
        if measured.over_guidance:
            over.append(version.package.slug)
    warning = ""
    if over:
        warning = (
            f"{len(over)} of {skills} skills past the Agent Skills guidance of "
            f"{GUIDANCE_LINES} lines and {GUIDANCE_TOKENS:,} tokens for SKILL.md: "
            + ", ".join(over)
        )
    return {
        "skills": skills,
        "files": files,
        "bytes": size,
        "lines": lines,
        "estimated_tokens": tokens,
        "over_guidance": over,
        "warning": warning,
    }


def revision_skill_md(skill) -> str:
    """SKILL.md of a workspace skill's head revision (head and its upstream loaded)."""
    return revision_skill_md_of(skill.slug, skill.head)


def revision_skill_md_of(slug: str, revision, body: str | None = None) -> str:
    """SKILL.md of one revision of the workspace skill ``slug`` (its upstream and the
    upstream's package loaded), with ``body`` in place of its own when given (an agent's
    override).

    A revision still as the catalog published it gives the catalog's SKILL.md byte for
    byte; any other is rendered in the Agent Skills shape, its label the upstream's
    version or r<number> as semver build metadata.
    """

    upstream = revision.upstream
    body = revision.body if body is None else body
    if (
        upstream is not None
        and upstream.skill_md
        and slug == upstream.package.slug
        and (revision.name, revision.short_description, body, revision.frontmatter)
        == (upstream.name, upstream.description, upstream.body, upstream.frontmatter)
    ):
        return upstream.skill_md
    return render_skill_file(
        SkillSpec(
            slug=slug,
            version=upstream.version if upstream else f"0.0.0+r{revision.number}",
            name=revision.name,
            description=revision.short_description,
            body=body,
            frontmatter=revision.frontmatter,
        )
    )


def skill_display(version, file_url: Callable[[str], str] | None = None) -> dict:
    """One skill version's files and size for a page (files prefetched)."""
    files = list(version.files.all())
    size = skill_size(version.body)
    return {
        "slug": version.package.slug,
        "version": version.version,
        "size": size,
        "bytes": skill_md_bytes(version) + sum(f.size for f in files),
        "files": [
            {**row, "sha256_prefix": row["sha256"][:12]} for row in file_rows(files, file_url)
        ],
        "skill_md_url": file_url("SKILL.md") if file_url else "",
    }
