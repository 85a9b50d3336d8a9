"""The README is a short front page and docs/ holds the rest: every relative link in them
resolves (to a file, and to a heading for a #anchor), every page of docs/ is reachable from
the README, and the README stays short and opens with the two commands."""

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# The two commands a newcomer runs on a fresh machine, as the README's Quick start gave them.
TWO_COMMANDS = ["./scripts/dev", "./scripts/test"]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target); a target has no spaces (an optional "title" follows).
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose_lines(path: Path) -> list[str]:
    """The file's lines outside fenced code blocks (a link or a heading there is text)."""
    lines, fenced = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        opening = FENCE.match(line)
        if fenced is None and opening:
            fenced = opening.group(1)
        elif fenced is not None and line.lstrip().startswith(fenced):
            fenced = None
        elif fenced is None:
            lines.append(line)
    return lines


def links(path: Path) -> list[str]:
    found = []
    for line in prose_lines(path):
        found += LINK.findall(INLINE_CODE.sub("", line))
    return found


def is_relative(target: str) -> bool:
    return not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) and not target.startswith("//")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text without markup, lower case, punctuation
    dropped (letters, digits, spaces, hyphens and underscores stay), spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def resolve(source: Path, target: str) -> tuple[Path, str]:
    path_part, _, anchor = target.partition("#")
    path = (source.parent / unquote(path_part)).resolve() if path_part else source
    return path, unquote(anchor)


def test_slugs_follow_github():
    assert slug("Plans: install, upgrade, uninstall") == "plans-install-upgrade-uninstall"
    assert slug("Data generator (`manage.py bench_seed`)") == "data-generator-managepy-bench_seed"
    assert slug("2. Read the version's page") == "2-read-the-versions-page"
    assert slug("Scaling out: several web and worker processes") == (
        "scaling-out-several-web-and-worker-processes"
    )


def test_every_relative_link_resolves():
    broken = []
    for page in pages():
        for target in links(page):
            if not is_relative(target):
                continue
            path, anchor = resolve(page, target)
            where = f"{page.relative_to(ROOT)}: {target}"
            if not path.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{where} (no such heading)")
    assert broken == []


def test_no_page_sends_the_reader_outside_the_repository():
    outside = []
    for page in pages():
        if "../shared/" in page.read_text(encoding="utf-8"):
            outside.append(f"{page.relative_to(ROOT)} mentions ../shared/")
        for target in links(page):
            if is_relative(target):
                path, _ = resolve(page, target)
                if not path.is_relative_to(ROOT):
                    outside.append(f"{page.relative_to(ROOT)}: {target}")
    assert outside == []


def test_every_docs_page_is_reachable_from_the_readme():
    reached, waiting = set(), [README.resolve()]
    while waiting:
        page = waiting.pop()
        if page in reached:
            continue
        reached.add(page)
        for target in links(page):
            if not is_relative(target):
                continue
            path, _ = resolve(page, target)
            if path.suffix == ".md" and path.exists():
                waiting.append(path)
    orphans = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in reached]
    assert orphans == []


def test_the_readme_is_short_and_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 170
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    assert blocks, "the README has no fenced code block"
    first = [line.split("#")[0].strip() for line in blocks[0].splitlines()]
    assert [line for line in first if line] == TWO_COMMANDS
    # Nothing but the title comes before them.
    before = text[: text.index("```")].strip().splitlines()
    assert [line for line in before if line.strip()] == ["# Pixie"]


def test_the_two_commands_exist():
    for command in TWO_COMMANDS:
        script = ROOT / command
        assert script.is_file(), command
        assert script.stat().st_mode & 0o111, f"{command} is not executable"
