"""What a skill version *is*: its identity digest, its files' media types, its size.

Pure functions (no database). A skill version is its content, so the digest is
written down once, here, and in docs/SKILL_FORMAT.md:

    sha256 of the canonical JSON (sorted keys, UTF-8, no spaces) of
    {
      "name":        the display name,
      "description": the description,
      "body":        the Markdown body (line endings as LF, outer blank lines trimmed),
      "approvals":   [{"operation", "rule"}, ...] in order,
      "frontmatter": every other frontmatter key, without Pixie's own labels
                     (metadata.version and metadata.display-name),
      "files":       [[path, executable, sha256], ...] sorted by path,
    }

The version label is left out on purpose: the same content under another label
is the same skill version. Media types are left out too: they are derived.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
from collections.abc import Iterable
from dataclasses import dataclass

# The format's context guidance: past it a skill still loads, with a warning shown.
# Kept here (not in validators, which imports Django) so the pure plan core can use it.
GUIDANCE_LINES = 500
GUIDANCE_TOKENS = 5000

# Pixie's own labels inside an Agent Skills `metadata` map: not part of the content.
PIXIE_METADATA_LABELS = ("version", "display-name")


def identity_frontmatter(frontmatter: dict) -> dict:
    """The frontmatter as the digest sees it: without Pixie's own labels."""
    result = dict(frontmatter)
    metadata = result.get("metadata")
    if isinstance(metadata, dict):
        metadata = {k: v for k, v in metadata.items() if k not in PIXIE_METADATA_LABELS}
        if metadata:
            result["metadata"] = metadata
        else:
            del result["metadata"]
    return result


def skill_digest(
    *,
    name: str,
    description: str,
    body: str,
    approvals: Iterable[dict],
    frontmatter: dict,
    files: Iterable[tuple[str, bool, str]],
) -> str:
    """The identity of a skill version's content (see the module docstring)."""
    content = {
        "name": name,
        "description": description,
        "body": body,
        "approvals": [{"operation": a["operation"], "rule": a["rule"]} for a in approvals],
        "frontmatter": identity_frontmatter(frontmatter),
        "files": sorted([path, bool(executable), sha] for path, executable, sha in files),
    }
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_text(data: bytes) -> bool:
    """UTF-8 without NUL: shown and diffed as text."""
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_EXTRA_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".ts": "text/typescript",
    ".tsx": "text/typescript",
    ".jsx": "text/javascript",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".woff2": "font/woff2",
    ".xsd": "application/xml",
}


def media_type(path: str, data: bytes) -> str:
    """A media type from the file's name, else from whether its bytes are text."""
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    guessed = _EXTRA_TYPES.get(suffix) or mimetypes.guess_type(path, strict=False)[0]
    if guessed:
        return guessed
    return "text/plain" if is_text(data) else "application/octet-stream"


@dataclass(frozen=True)
class SkillSize:
    """A body's size against the format's context guidance (~500 lines, ~5,000 tokens)."""

    lines: int
    tokens: int

    @property
    def over_guidance(self) -> bool:
        return self.lines > GUIDANCE_LINES or self.tokens > GUIDANCE_TOKENS

    @property
    def warning(self) -> str:
        if not self.over_guidance:
            return ""
        # Name only the limit passed: "past 500 lines" at 4,796 tokens would mislead.
        passed = [
            f"{GUIDANCE_LINES} lines" if self.lines > GUIDANCE_LINES else "",
            f"{GUIDANCE_TOKENS:,} tokens" if self.tokens > GUIDANCE_TOKENS else "",
        ]
        return (
            f"about {self.tokens:,} tokens in {self.lines:,} lines: past the Agent Skills "
            f"guidance of {' and '.join(p for p in passed if p)} for SKILL.md; "
            "consider moving detail to references/"
        )

    def as_dict(self) -> dict:
        return {
            "lines": self.lines,
            "estimated_tokens": self.tokens,
            "over_guidance": self.over_guidance,
        }


def skill_size(body: str) -> SkillSize:
    """Lines and an estimate of tokens (about 4 characters a token, as tokenizers average
    on English prose and code); an estimate shown to people, never a limit."""
    lines = body.count("\n") + 1 if body else 0
    return SkillSize(lines=lines, tokens=(len(body) + 3) // 4)
