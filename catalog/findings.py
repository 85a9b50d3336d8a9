"""Findings: what a person should weigh in a skill's text before it reaches an agent. Pure.

Scanned: SKILL.md's body and the Markdown files beside it (not scripts or assets, which
the plan shows as files). Each finding names the skill, the file, the line and the text
around it, with hidden characters made visible. The kinds:

- ``hidden_text``: Unicode tag characters (U+E0000-E007F, except inside an emoji flag
  sequence) and bidirectional overrides and isolates are *refused* at publish unless an
  operator overrides with a reason; zero-width characters inside a word, runs of them,
  and HTML comments outside code are warnings. A reader of the rendered Markdown does not
  see any of them; a model does.
- ``undeclared_host``: the hosts a skill names (in URLs) that are not among the bundle's
  hosts, one informational finding per skill, raised to a warning for a host that sits in
  an instruction to send or upload data.
- ``undeclared_credential``: a credential-looking name (``*_API_KEY``, ``*_TOKEN``, ...)
  the bundle does not declare; a warning.
- ``guardrail``: text aimed at the model's guardrails, from a rule set kept as data
  (``catalog/finding_rules.toml``, extended by ``PIXIE_FINDING_RULES_FILE``); warnings.

The rules miss what they do not name: a paraphrase of "ignore previous instructions", a
host written without a scheme, a credential name in lower case, instructions in an image.
They are a reader's aid, never a verdict.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

try:  # Python's own regex parser, for literal_starts; not a public API, so optional
    import re._constants as sre
    import re._parser as sre_parse
except ImportError:  # without it, every pattern is scanned by the regex engine alone
    sre = sre_parse = None

REFUSE, WARNING, INFO = "refuse", "warning", "info"
SEVERITIES = (REFUSE, WARNING, INFO)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
EXCERPT_CHARS = 60

TAGS = range(0xE0000, 0xE0080)
CANCEL_TAG = 0xE007F
BLACK_FLAG = 0x1F3F4  # 🏴 followed by tag letters and a cancel tag: a subdivision flag
BIDI_CONTROLS = {
    0x202A: "LEFT-TO-RIGHT EMBEDDING",
    0x202B: "RIGHT-TO-LEFT EMBEDDING",
    0x202C: "POP DIRECTIONAL FORMATTING",
    0x202D: "LEFT-TO-RIGHT OVERRIDE",
    0x202E: "RIGHT-TO-LEFT OVERRIDE",
    0x2066: "LEFT-TO-RIGHT ISOLATE",
    0x2067: "RIGHT-TO-LEFT ISOLATE",
    0x2068: "FIRST STRONG ISOLATE",
    0x2069: "POP DIRECTIONAL ISOLATE",
}
ZERO_WIDTH = {
    0x200B: "ZERO WIDTH SPACE",
    0x200C: "ZERO WIDTH NON-JOINER",
    0x200D: "ZERO WIDTH JOINER",
    0x2060: "WORD JOINER",
    0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
    0x180E: "MONGOLIAN VOWEL SEPARATOR",
}
ZERO_WIDTH_RUN = 4  # this many in a row is an encoding, whatever surrounds it
# A character shown as ⟨U+XXXX⟩ in an excerpt: every one a reader would not see.
INVISIBLE = set(BIDI_CONTROLS) | set(ZERO_WIDTH) | {0x200E, 0x200F, 0x00AD}

HIDDEN_RUN = re.compile(
    "["
    + "".join(re.escape(chr(c)) for c in (*BIDI_CONTROLS, *ZERO_WIDTH))
    + "\U000e0000-\U000e007f]+"
)


def _class(code: int) -> str:
    if code in TAGS:
        return "tag"
    return "bidi" if code in BIDI_CONTROLS else "zero-width"


URL = re.compile(r"\b(?:https?|wss?|ftp)://([A-Za-z0-9.-]+\.[A-Za-z]{2,63})(?::\d+)?", re.I)
# URL over lower-cased text, its \b checked by hand (see Rule.fast).
URL_FAST = re.compile(r"(?:https?|wss?|ftp)://([a-z0-9.-]+\.[a-z]{2,63})(?::\d+)?")
# A verb asking for data to leave, as a word of its own: not part of a compound
# ("post-quantum", "@send-email") nor of a path; addresses are taken out of the line
# first (ADDRESSES), so "https://example.com/posts/" asks nothing to be sent.
SEND_WORDS = re.compile(
    r"(?<![-/])\b(?:send|sends|sending|upload|uploads|uploading|post|posts|posting|forward|"
    r"forwards|submit|submits|transmit|transmits|exfiltrate|beacon|report\s+back|sync\s+to|"
    r"push\s+to|curl\s+(?:[^\n]*\s)?(?:-d|--data\S*|-F|--form|-T|--upload-file))\b(?![-/]\w)",
    re.I,
)
ADDRESSES = re.compile(r"\b(?:https?|wss?|ftp)://\S*|[\w.-]+(?:/[\w.%~+-]+)+/?", re.I)
CREDENTIAL_NAME = re.compile(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|"
    r"PRIVATE_KEY|PASSWORD|PASSWD|CREDENTIALS?|AUTH_TOKEN)\b"
)
HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern  # as written, ignoring case
    message: str
    severity: str = WARNING
    # The same over lower-cased text, without its leading \b (checked by hand): Python's
    # re skips ahead fast only to a literal start, and ignoring case costs it that too.
    fast: re.Pattern | None = None
    boundary: bool = False
    # Literal texts every match of ``fast`` begins with (literal_starts), or None.
    starts: tuple[str, ...] | None = None
    # Literal texts one of which every match of ``fast`` holds (literal_gate), or None.
    gate: tuple[str, ...] | None = None


def _fast_form(pattern: str) -> tuple[re.Pattern, bool]:
    boundary = pattern.startswith(r"\b")
    return re.compile(pattern[2:] if boundary else pattern), boundary


_ZERO_WIDTH_OPS = {sre.AT, sre.ASSERT, sre.ASSERT_NOT} if sre else set()
_REPEAT_OPS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT} if sre else set()


def _prefixes(items) -> set[str] | None:
    """Literal texts one of which begins every match of the parsed ``items``, extended
    through literals as far as they go; None when a match may begin otherwise."""
    prefix = ""
    for op, av in items:
        if op is sre.LITERAL:
            prefix += chr(av)
            continue
        if op in _ZERO_WIDTH_OPS and not prefix:  # matches nothing, moves nothing
            continue
        if prefix:
            break  # what follows only lengthens the prefix: the prefix is enough
        if op is sre.SUBPATTERN and not av[1] and not av[2]:  # no inline flags
            return _prefixes(av[3])
        if op is sre.BRANCH:
            branches = [_prefixes(branch) for branch in av[1]]
            return None if None in branches else set().union(*branches)
        if op in _REPEAT_OPS and av[0] >= 1:
            return _prefixes(av[2])
        return None
    return {prefix} if prefix else None


def _parsed(pattern: str):
    """``pattern`` as Python's regex parser reads it, or None where its literals cannot
    be trusted: no parser at hand, not a regex, or case-insensitive (its literals then
    stand for other letters too)."""
    if sre_parse is None:
        return None
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return None
    return None if parsed.state.flags & re.I else parsed


def literal_starts(pattern: str) -> tuple[str, ...] | None:
    """The literal texts every match of ``pattern`` (case-sensitive) begins with, each at
    least two characters, or None: where a match can begin is then found by substring
    search, far faster than the regex engine's scan of every position (_finditer)."""
    parsed = _parsed(pattern)
    if parsed is None:
        return None
    starts = _prefixes(parsed)
    if not starts or min(map(len, starts)) < 2:
        return None
    # "do" finds wherever "don't" is: the longer is not searched for.
    return tuple(sorted(s for s in starts if not any(s != t and s.startswith(t) for t in starts)))


def _held(items) -> list[set[str]]:
    """Sets of literal texts such that every match of the parsed ``items`` holds one text
    of each set (somewhere, not only at its start)."""
    found: list[set[str]] = []
    run = ""
    for op, av in items:
        if op is sre.LITERAL:
            run += chr(av)
            continue
        if run:
            found.append({run})
            run = ""
        if op is sre.SUBPATTERN and not av[1] and not av[2]:  # no inline flags
            found += _held(av[3])
        elif op is sre.BRANCH:
            branches = [_rarest(_held(branch)) for branch in av[1]]
            if None not in branches:
                found.append(set().union(*branches))
        elif op in _REPEAT_OPS and av[0] >= 1:
            found += _held(av[2])
    if run:
        found.append({run})
    return found


def _rarest(sets: list[set[str]]) -> set[str] | None:
    """The set whose shortest text is longest (a longer text is rarer in prose: "the"
    is everywhere, "system" is not), the fewest texts among equals."""
    return min(sets, key=lambda texts: (-min(map(len, texts)), len(texts)), default=None)


def literal_gate(pattern: str) -> tuple[str, ...] | None:
    """Literal texts one of which every match of ``pattern`` (case-sensitive) holds, each
    at least three characters, when they are fewer than its literal starts (or it has
    none), or None. A text holding none of them has no match: one substring search each
    answers for the whole text (text about models rarely names "dan mode", say, and
    "guidance" holds "dan" every time)."""
    parsed = _parsed(pattern)
    if parsed is None:
        return None
    gate = _rarest([texts for texts in _held(parsed) if min(map(len, texts)) >= 3])
    starts = literal_starts(pattern)
    if gate is None or (starts is not None and len(gate) >= len(starts)):
        return None
    return tuple(sorted(gate))


# More candidates than one in so many characters: each costs a Python step, and the
# regex engine's own scan of every position is as fast.
CHARS_PER_CANDIDATE = 256


def _finditer(
    pattern: re.Pattern,
    text: str,
    starts: tuple[str, ...] | None,
    gate: tuple[str, ...] | None = None,
    searched: dict | None = None,
):
    """``pattern.finditer(text)``, the same matches, none when the text holds none of
    ``gate`` (literal_gate), else tried only where one of ``starts`` (literal_starts)
    occurs: a match can begin nowhere else. ``searched``: the substring searches already
    made in this text (by other rules), kept and reused."""
    searched = {} if searched is None else searched
    if gate is not None and not any(_holds(text, literal, searched) for literal in gate):
        return
    positions = _positions(text, starts, searched) if starts is not None else None
    if positions is None:
        yield from pattern.finditer(text)
        return
    end = 0
    for position in positions:
        if position < end:
            continue
        match = pattern.match(text, position)
        if match:
            yield match
            end = match.end()


def _holds(text: str, literal: str, searched: dict) -> bool:
    key = ("in", literal)
    if key not in searched:
        found = searched.get(("at", literal))
        searched[key] = bool(found) if found is not None else literal in text
    return searched[key]


def _positions(text: str, starts: tuple[str, ...], searched: dict) -> list[int] | None:
    """Where each of ``starts`` occurs in ``text``, in order; None past the limit."""
    limit = len(text) // CHARS_PER_CANDIDATE + 16
    positions: list[int] = []
    for start in starts:
        key = ("at", start)
        if key not in searched:
            searched[key] = _occurrences(text, start, limit)
        found = searched[key]
        if found is None or len(positions) + len(found) > limit:
            return None
        positions += found
    return sorted(set(positions))


def _occurrences(text: str, literal: str, limit: int) -> list[int] | None:
    """Where ``literal`` occurs in ``text``; None past ``limit`` occurrences."""
    found: list[int] = []
    at = text.find(literal)
    while at != -1:
        if len(found) == limit:
            return None
        found.append(at)
        at = text.find(literal, at + 1)
    return found


URL_STARTS = literal_starts(URL_FAST.pattern)
URL_GATE = literal_gate(URL_FAST.pattern)


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: str
    skill: str
    file: str
    line: int
    excerpt: str
    message: str

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def where(self) -> str:
        line = f" line {self.line}" if self.line else ""
        return f"@{self.skill} {self.file}{line}"


def rules_from_toml(text: str, source: str) -> list[Rule]:
    """The guardrail rules of a TOML text: ``[[rule]]`` tables with ``id``, ``pattern`` (a
    Python regular expression, matched ignoring case), ``message`` and optionally
    ``severity`` (warning or info). A bad rule raises ValueError naming it."""
    data = tomllib.loads(text)
    rules = []
    for index, item in enumerate(data.get("rule", []), start=1):
        where = f"{source}: rule {index}"
        if not isinstance(item, dict) or not {"id", "pattern", "message"} <= set(item):
            raise ValueError(f"{where} needs id, pattern and message")
        severity = item.get("severity", WARNING)
        if severity not in (WARNING, INFO):
            raise ValueError(f"{where}: severity must be warning or info")
        if re.search(r"[A-Z]", re.sub(r"\\.", "", item["pattern"])):
            raise ValueError(
                f"{where} ({item['id']}): write the pattern in lower case (it is matched "
                "against the lower-cased text)"
            )
        try:
            pattern = re.compile(item["pattern"], re.I)
            fast, boundary = _fast_form(item["pattern"])
        except re.error as exc:
            raise ValueError(f"{where} ({item['id']}): bad pattern ({exc})") from None
        starts, gate = literal_starts(fast.pattern), literal_gate(fast.pattern)
        rules.append(
            Rule(item["id"], pattern, item["message"], severity, fast, boundary, starts, gate)
        )
    return rules


def visible(text: str) -> str:
    """The text with every character a reader would not see written out: ⟨U+XXXX NAME⟩,
    and a run of tag characters as the ASCII it spells, ⟨tags: "…"⟩."""
    out, tags = [], []
    for char in text + "\n":
        code = ord(char)
        if code in TAGS:
            tags.append(chr(code - 0xE0000) if 0x20 <= code - 0xE0000 < 0x7F else "·")
            continue
        if tags:
            out.append(f'⟨tags: "{"".join(tags)}"⟩')
            tags = []
        if code in INVISIBLE:
            name = BIDI_CONTROLS.get(code) or ZERO_WIDTH.get(code) or unicodedata.name(char, "")
            out.append(f"⟨U+{code:04X}{' ' + name if name else ''}⟩")
        else:
            out.append(char)
    return "".join(out)[:-1]


def _excerpt(text: str, start: int, end: int) -> str:
    """The line where [start, end) starts, cut to about EXCERPT_CHARS each side, made
    visible: one line, even for a match over several (an HTML comment)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end == -1 else line_end
    left = max(line_start, start - EXCERPT_CHARS)
    right = min(line_end, end + EXCERPT_CHARS)
    piece = text[left:right]
    return ("…" if left > line_start else "") + visible(piece) + ("…" if right < line_end else "")


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _outside_code(text: str) -> str:
    """The text with fenced code blocks and code spans blanked (same length, same lines),
    for the checks that concern what a rendered page hides."""
    chars = list(text)
    fence = None
    position = 0
    for line in text.splitlines(keepends=True):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            inside = True
        elif fence is not None and line.strip().startswith(fence):
            fence, inside = None, True
        else:
            inside = fence is not None
        if inside:
            for i in range(position, position + len(line.rstrip("\n"))):
                chars[i] = " "
        position += len(line)
    blanked = "".join(chars)
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), blanked)


def _hidden(text: str, skill: str, file: str) -> list[Finding]:
    found: list[Finding] = []

    def add(severity, start, end, message):
        found.append(
            Finding(
                "hidden_text",
                severity,
                skill,
                file,
                _line(text, start),
                _excerpt(text, start, end),
                message,
            )  # fmt: skip
        )

    length = len(text)
    for run in HIDDEN_RUN.finditer(text):  # one pass; a character loop only inside a run
        index, end = run.start(), run.end()
        while index < end:
            code = ord(text[index])
            kind_end = index
            while kind_end < end and _class(ord(text[kind_end])) == _class(code):
                kind_end += 1
            if code in TAGS:
                flag = (index > 0 and ord(text[index - 1]) == BLACK_FLAG
                        and ord(text[kind_end - 1]) == CANCEL_TAG)  # fmt: skip
                if not flag:
                    add(REFUSE, index, kind_end,
                        f"{kind_end - index} Unicode tag character(s): text a reader does not "
                        "see and a model reads")  # fmt: skip
            elif code in BIDI_CONTROLS:
                for at in range(index, kind_end):
                    name = BIDI_CONTROLS[ord(text[at])]
                    add(REFUSE, at, at + 1,
                        f"a bidirectional control ({name}): it reorders how the text reads on "
                        "screen")  # fmt: skip
            else:
                before = text[index - 1] if index else ""
                after = text[kind_end] if kind_end < length else ""
                in_word = (before.isascii() and before.isalnum()
                           and after.isascii() and after.isalnum())  # fmt: skip
                if in_word or kind_end - index >= ZERO_WIDTH_RUN:
                    where = "inside a word" if in_word else "in a row"
                    add(WARNING, index, kind_end,
                        f"{kind_end - index} zero-width character(s) {where}: they can split a "
                        "word past a reader or carry a hidden message")  # fmt: skip
            index = kind_end
    return found


def _comments(text: str, skill: str, file: str) -> list[Finding]:
    """HTML comments outside code: ASCII, so looked for in every text (not only in one
    holding the characters _hidden looks for)."""
    if "<!--" not in text:
        return []
    message = "an HTML comment: hidden when the Markdown is rendered, read by a model"
    return [
        Finding("hidden_text", WARNING, skill, file, _line(text, match.start()),
                _excerpt(text, match.start(), match.end()), message)
        for match in HTML_COMMENT.finditer(_outside_code(text))
        if text[match.start(1) : match.end(1)].strip()
    ]  # fmt: skip


def _in_word(text: str, start: int) -> bool:
    """Whether ``start`` continues a word (a \b a fast pattern left out fails there)."""
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _matches(pattern: re.Pattern, fast: re.Pattern | None, boundary: bool, text: str,
             low: str | None, starts: tuple[str, ...] | None = None,
             gate: tuple[str, ...] | None = None, searched: dict | None = None):  # fmt: skip
    """The pattern's matches: the fast form over the lower-cased text when it has the same
    length (some characters lengthen when lowered), else the pattern as written."""
    if fast is None or low is None:
        yield from pattern.finditer(text)
        return
    for match in _finditer(fast, low, starts, gate, searched):
        if not (boundary and _in_word(low, match.start())):
            yield match


def _reach(text: str, low: str | None, skill: str, file: str, hosts: set[str],
           credentials: set[str], named: dict[str, tuple[int, str]],
           searched: dict | None = None) -> list[Finding]:  # fmt: skip
    """Warnings for undeclared hosts in an instruction to send, and undeclared credential
    names; every other undeclared host is collected into ``named`` (one info a skill)."""
    found: list[Finding] = []
    for match in _matches(URL, URL_FAST, True, text, low, URL_STARTS, URL_GATE, searched):
        host = match.group(1).lower().rstrip(".")
        if host in hosts:
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : len(text) if line_end == -1 else line_end]
        if SEND_WORDS.search(ADDRESSES.sub(" ", line)):
            found.append(Finding(
                "undeclared_host", WARNING, skill, file, _line(text, match.start()),
                _excerpt(text, match.start(), match.end()),
                f"an instruction to send data to {host}, which the bundle does not declare "
                "among its hosts",
            ))  # fmt: skip
        else:
            named.setdefault(host, (_line(text, match.start()), file))
    seen = set()
    # Every credential name holds an underscore: text without one has none to find.
    for match in CREDENTIAL_NAME.finditer(text) if "_" in text else ():
        name = match.group(0)
        if _in_word(text, match.start()) or name in credentials or name in seen:
            continue
        seen.add(name)
        found.append(Finding(
            "undeclared_credential", WARNING, skill, file, _line(text, match.start()),
            _excerpt(text, match.start(), match.end()),
            f"{name} looks like a credential, and the bundle declares no credential by that "
            "name: the plan will not ask for it",
        ))  # fmt: skip
    return found


def _guardrails(text: str, low: str | None, skill: str, file: str, rules: Iterable[Rule],
                searched: dict | None = None) -> list[Finding]:  # fmt: skip
    return [
        Finding("guardrail", rule.severity, skill, file, _line(text, match.start()),
                _excerpt(text, match.start(), match.end()), f"{rule.message} ({rule.id})")
        for rule in rules
        for match in _matches(rule.pattern, rule.fast, rule.boundary, text, low, rule.starts,
                              rule.gate, searched)
    ]  # fmt: skip


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def body_line_offset(skill_md: str, body: str) -> int:
    """How many lines of SKILL.md come before its body (the frontmatter), so a finding names
    the line a reader finds in the file; 0 when the file is not at hand."""
    text = skill_md.removeprefix("\ufeff").replace("\r\n", "\n")
    start = text.find(body[:200]) if body else -1
    return text.count("\n", 0, start) if start > 0 else 0


def scan_skill(
    *,
    skill: str,
    body: str,
    markdown: Iterable[tuple[str, str]] = (),
    hosts: Iterable[str] = (),
    credentials: Iterable[str] = (),
    rules: Iterable[Rule] = (),
    body_offset: int = 0,
) -> list[Finding]:
    """Every finding in one skill: its SKILL.md body and its Markdown files (path, text).
    ``body_offset``: the lines of SKILL.md before the body (body_line_offset)."""
    hosts = {h.lower() for h in hosts}
    credentials = set(credentials)
    rules = list(rules)
    found: list[Finding] = []
    named: dict[str, tuple[int, str]] = {}
    for file, text in [("SKILL.md", body), *sorted(markdown)]:
        lowered = text.lower()
        low = lowered if len(lowered) == len(text) else None
        here = [] if text.isascii() else _hidden(text, skill, file)
        here += _comments(text, skill, file)
        searched: dict = {}  # substring searches of the lower-cased text, shared by rules
        here += _reach(text, low, skill, file, hosts, credentials, named, searched)
        here += _guardrails(text, low, skill, file, rules, searched)
        if file == "SKILL.md" and body_offset:
            here = [replace(f, line=f.line + body_offset) for f in here]
            named = {h: (line + body_offset if f == "SKILL.md" and line > 0 else line, f)
                     for h, (line, f) in named.items()}  # fmt: skip
        found += here
    if named:
        first_line, first_file = min(named.values(), key=lambda v: (v[1] != "SKILL.md", v))
        listed = ", ".join(sorted(named))
        found.append(Finding(
            "undeclared_host", INFO, skill, first_file, first_line, listed,
            f"names {len(named)} host(s) the bundle does not declare (links are often "
            "documentation; its agents cannot reach them without a rule)",
        ))  # fmt: skip
    order = {severity: i for i, severity in enumerate(SEVERITIES)}
    return sorted(found, key=lambda f: (order[f.severity], f.file != "SKILL.md", f.file, f.line))


def count_words(findings: list[dict]) -> str:
    """'2 findings to read' (or '' when there are none), for a summary line."""
    n = len(findings)
    return f"{n} finding{'' if n == 1 else 's'} to read" if n else ""
