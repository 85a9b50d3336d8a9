"""Findings: what a person should weigh in a skill's text before it reaches an agent. Pure.

Scanned: SKILL.md's body and the Markdown files beside it (not scripts or assets, which
the plan shows as files). Each finding names the skill, the file, the line and the text
around it, with hidden characters made visible. The kinds:

- ``hidden_text``: Unicode tag characters (U+E0000-E007F, except inside an emoji flag
  sequence), bidirectional overrides and isolates, and variation selectors that change no
  character (a run of them, or one after a character it has no variant of: each can carry
  a byte a reader never sees) are *refused* at publish unless an operator overrides with
  a reason; zero-width characters inside a word, runs of them, and HTML comments outside
  code are warnings. A reader of the rendered Markdown does not see any of them; a model
  does.
- ``undeclared_host``: the hosts a skill links to (read as a browser reads a URL: the host
  is after the last ``@``) that are not among the bundle's hosts, one informational
  finding per skill, raised to a warning for a host that sits in an instruction to send
  or upload data; a warning for every link to an IP address, every link with a name
  before an ``@`` (``https://api.example.com@evil.example.com/`` goes to the second), and
  every host name written with letters that only look like Latin ones.
- ``undeclared_credential``: a credential-looking name (``*_API_KEY``, ``*_TOKEN``, ...)
  the bundle does not declare; a warning.
- ``guardrail``: text aimed at the model's guardrails, from a rule set kept as data
  (``catalog/finding_rules.toml``, extended by ``PIXIE_FINDING_RULES_FILE``), found also
  when written with lookalike letters (a Cyrillic о, a full-width ｉ); warnings.

Every pattern runs on RE2 (google-re2), whose time is linear in the text whatever the
pattern, and everything around the patterns (lines, excerpts, code spans, the send check)
looks at each character a bounded number of times: a crafted text costs what its length
costs. The rules are operators' data, so a rule RE2 cannot run (a look-around, a
back-reference) is refused when the rules load, by name.

The rules miss what they do not name: a paraphrase of "ignore previous instructions", a
host written without a scheme, a credential name in lower case, instructions in an image.
They are a reader's aid, never a verdict.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import ipaddress
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace

import re2
from confusable_homoglyphs import confusables

REFUSE, WARNING, INFO = "refuse", "warning", "info"
SEVERITIES = (REFUSE, WARNING, INFO)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
EXCERPT_CHARS = 60
# One file's findings listed at most (the rest counted in one more): a page stays readable
# and bounded however many a crafted file holds.
MAX_LISTED = 100


def linear_pattern(pattern: str, *, ignore_case: bool = False):
    """``pattern`` compiled for RE2 (linear time); re2.error when RE2 cannot run it."""
    options = re2.Options()
    options.log_errors = False  # a refused rule is reported by its name, not on stderr
    options.case_sensitive = not ignore_case
    return re2.compile(pattern, options)


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
# Variation selectors: VS1-16 (U+FE00-FE0F) and VS17-256 (U+E0100-E01EF). One after a
# character with variants picks a glyph (❤️ is U+2764 U+FE0F); anywhere else, each is
# a byte in hiding ("emoji smuggling").
SELECTORS = range(0xFE00, 0xFE10)
MORE_SELECTORS = range(0xE0100, 0xE01F0)
# A character shown as ⟨U+XXXX⟩ in an excerpt: every one a reader would not see.
INVISIBLE = set(BIDI_CONTROLS) | set(ZERO_WIDTH) | {0x200E, 0x200F, 0x00AD}

_HIDDEN_CLASS = (
    "".join(chr(c) for c in (*BIDI_CONTROLS, *ZERO_WIDTH))
    + "\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef"
)
HIDDEN_RUN = linear_pattern(f"[{_HIDDEN_CLASS}]+")
# Anything visible() writes out: a text without one is shown as it is.
WRITTEN_OUT = linear_pattern(f"[{_HIDDEN_CLASS}\u200e\u200f\u00ad]")


def _is_selector(code: int) -> bool:
    return code in SELECTORS or code in MORE_SELECTORS


def _class(code: int) -> str:
    if code in TAGS:
        return "tag"
    if _is_selector(code):
        return "selector"
    return "bidi" if code in BIDI_CONTROLS else "zero-width"


def _hidden_code(code: int) -> bool:
    return code in TAGS or code in BIDI_CONTROLS or code in ZERO_WIDTH or _is_selector(code)


def selector_fits(base: str, code: int) -> bool:
    """Whether one variation selector ``code`` after ``base`` picks a glyph rather than
    hides a byte: U+FE0E/FE0F after an emoji or a keycap's digit, U+E0100-E01EF after a
    CJK ideograph, U+FE00-FE0D after any other non-ASCII character (standardized
    variation sequences: mathematical symbols, CJK compatibility ideographs, ...)."""
    if not base or base.isspace() or _hidden_code(ord(base)):
        return False
    if code in (0xFE0E, 0xFE0F):
        return not base.isascii() or base in "0123456789#*"
    if code in MORE_SELECTORS:
        return unicodedata.name(base, "").startswith("CJK")
    return not base.isascii()


def _selector_bytes(run: str) -> str:
    """What a run of variation selectors spells, read as the bytes they stand for (VS1-16
    are 0-15, VS17-256 are 16-255), printable characters only."""
    data = bytes((ord(c) - 0xFE00) if ord(c) in SELECTORS else (ord(c) - 0xE0100 + 16) for c in run)
    text = data.decode("utf-8", errors="replace")
    return "".join(c if c.isprintable() and c != "\ufffd" else "·" for c in text)


URL = linear_pattern(r"""\b(?:https?|wss?|ftp)://([^\s/\\?#<>"'`()*|{}^]+)""", ignore_case=True)
# A verb asking for data to leave, as a word of its own: not part of a compound
# ("post-quantum", "@send-email") nor of a path (_asks_to_send checks the characters
# around it); addresses are taken out of the line first (ADDRESSES), so
# "https://example.com/posts/" asks nothing to be sent.
SEND_WORDS = linear_pattern(
    r"\b(?:send|sends|sending|upload|uploads|uploading|post|posts|posting|forward|"
    r"forwards|submit|submits|transmit|transmits|exfiltrate|beacon|report\s+back|sync\s+to|"
    r"push\s+to|curl\s+(?:[^\n]*\s)?(?:-d|--data\S*|-F|--form|-T|--upload-file))\b",
    ignore_case=True,
)
ADDRESSES = linear_pattern(
    r"\b(?:https?|wss?|ftp)://\S*|[\w.-]+(?:/[\w.%~+-]+)+/?", ignore_case=True
)
CREDENTIAL_NAME = linear_pattern(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|"
    r"PRIVATE_KEY|PASSWORD|PASSWD|CREDENTIALS?|AUTH_TOKEN)\b"
)
HTML_COMMENT = linear_pattern(r"(?s)<!--(.*?)-->")
BACKTICKS = linear_pattern(r"`+")
FENCE = linear_pattern(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Rule:
    id: str
    source: str  # the pattern as written, matched ignoring case
    message: str
    severity: str = WARNING
    pattern: object = field(default=None, compare=False, repr=False)  # compiled (RE2)

    def __post_init__(self):
        if self.pattern is None:
            object.__setattr__(self, "pattern", linear_pattern(self.source, ignore_case=True))


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
    regular expression in RE2's syntax, matched ignoring case), ``message`` and optionally
    ``severity`` (warning or info). A bad rule raises ValueError naming it."""
    data = tomllib.loads(text)
    rules = []
    for index, item in enumerate(data.get("rule", []), start=1):
        where = f"{source}: rule {index}"
        if not isinstance(item, dict) or not {"id", "pattern", "message"} <= set(item):
            raise ValueError(f"{where} needs id, pattern and message")
        if not all(isinstance(item[key], str) for key in ("id", "pattern", "message")):
            raise ValueError(f"{where}: id, pattern and message must be strings")
        severity = item.get("severity", WARNING)
        if severity not in (WARNING, INFO):
            raise ValueError(f"{where}: severity must be warning or info")
        try:
            pattern = linear_pattern(item["pattern"], ignore_case=True)
        except re2.error as exc:
            reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
            raise ValueError(
                f"{where} ({item['id']}): bad pattern ({reason}); rules run on RE2, which "
                "has no look-arounds or back-references"
            ) from None
        rules.append(Rule(item["id"], item["pattern"], item["message"], severity, pattern))
    return rules


def visible(text: str) -> str:
    """The text with every character a reader would not see written out: ⟨U+XXXX NAME⟩,
    a run of tag characters as the ASCII it spells, ⟨tags: "…"⟩, and variation selectors
    that change no character as the bytes they stand for, ⟨3 variation selectors: "…"⟩
    (one that picks an emoji's glyph is left as it is). Linear in the text."""
    if not WRITTEN_OUT.search(text):
        return text
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        code = ord(char)
        if code in TAGS or _is_selector(code):
            end = index
            while end < length and _class(ord(text[end])) == _class(code):
                end += 1
            run = text[index:end]
            if code in TAGS:
                spelled = "".join(
                    chr(ord(c) - 0xE0000) if 0x20 <= ord(c) - 0xE0000 < 0x7F else "·" for c in run
                )
                out.append(f'⟨tags: "{spelled}"⟩')
            elif end - index == 1 and selector_fits(text[index - 1] if index else "", code):
                out.append(char)
            else:
                n = end - index
                plural = "s" if n > 1 else ""
                out.append(f'⟨{n} variation selector{plural}: "{_selector_bytes(run)}"⟩')
            index = end
            continue
        if code in INVISIBLE:
            name = BIDI_CONTROLS.get(code) or ZERO_WIDTH.get(code) or unicodedata.name(char, "")
            out.append(f"⟨U+{code:04X}{' ' + name if name else ''}⟩")
        else:
            out.append(char)
        index += 1
    return "".join(out)


class _Lines:
    """Where a text's lines start and end, found once: a line number or a line's bounds
    for any position in logarithmic time (counting from the start each time is quadratic
    in a text with many findings)."""

    def __init__(self, text: str):
        self.text = text
        self.breaks: list[int] = []
        at = text.find("\n")
        while at != -1:
            self.breaks.append(at)
            at = text.find("\n", at + 1)

    def number(self, index: int) -> int:
        return bisect.bisect_left(self.breaks, index) + 1

    def bounds(self, index: int) -> tuple[int, int]:
        k = bisect.bisect_left(self.breaks, index)
        start = self.breaks[k - 1] + 1 if k else 0
        return start, self.breaks[k] if k < len(self.breaks) else len(self.text)

    def excerpt(self, start: int, end: int) -> str:
        """The line where [start, end) starts, cut to about EXCERPT_CHARS each side (a
        long match to a few times that), made visible: one line, even for a match over
        several (an HTML comment)."""
        line_start, line_end = self.bounds(start)
        left = max(line_start, start - EXCERPT_CHARS)
        right = min(line_end, end + EXCERPT_CHARS, start + 4 * EXCERPT_CHARS)
        piece = visible(self.text[left:right])
        return ("…" if left > line_start else "") + piece + ("…" if right < line_end else "")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where code spans are (CommonMark: a run of backticks closed by the next run of the
    same length), each backtick run looked at twice: linear where a back-reference in a
    regular expression is not."""
    runs = [(m.start(), m.end()) for m in BACKTICKS.finditer(text)] if "`" in text else []
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        width = runs[i][1] - runs[i][0]
        following[i] = last.get(width)
        last[width] = i
    spans, i = [], 0
    while i < len(runs):
        j = following[i]
        if j is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[j][1]))
        i = j + 1
    return spans


def _outside_code(text: str) -> str:
    """The text with fenced code blocks and code spans blanked (same length, same lines),
    for the checks that concern what a rendered page hides."""
    pieces: list[str] = []
    fence = None
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
            body = line.rstrip("\n")
            pieces.append(" " * len(body) + line[len(body) :])
        else:
            pieces.append(line)
    blanked = "".join(pieces)
    spans = _code_spans(blanked)
    if not spans:
        return blanked
    out, at = [], 0
    for start, end in spans:
        out += [blanked[at:start], " " * (end - start)]
        at = end
    out.append(blanked[at:])
    return "".join(out)


# A finding before its line and excerpt are worked out (only for those listed, _listed):
# kind, severity, start, end, message.
Raw = tuple[str, str, int, int, str]


def _hidden(text: str) -> list[Raw]:
    found: list[Raw] = []

    def add(severity, start, end, message):
        found.append(("hidden_text", severity, start, end, message))

    length = len(text)
    for run in HIDDEN_RUN.finditer(text):  # one pass; a character loop only inside a run
        index, end = run.start(), run.end()
        while index < end:
            code = ord(text[index])
            kind_end = index
            while kind_end < end and _class(ord(text[kind_end])) == _class(code):
                kind_end += 1
            count = kind_end - index
            if code in TAGS:
                flag = (index > 0 and ord(text[index - 1]) == BLACK_FLAG
                        and ord(text[kind_end - 1]) == CANCEL_TAG)  # fmt: skip
                if not flag:
                    add(REFUSE, index, kind_end,
                        f"{count} Unicode tag character(s): text a reader does not see and "
                        "a model reads")  # fmt: skip
            elif _is_selector(code):
                base = text[index - 1] if index else ""
                if count > 1 or not selector_fits(base, code):
                    add(REFUSE, index, kind_end,
                        f"{count} variation selector(s) that change no character: each can "
                        "carry a byte a reader does not see and a model reads")  # fmt: skip
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
                if in_word or count >= ZERO_WIDTH_RUN:
                    where = "inside a word" if in_word else "in a row"
                    add(WARNING, index, kind_end,
                        f"{count} zero-width character(s) {where}: they can split a word "
                        "past a reader or carry a hidden message")  # fmt: skip
            index = kind_end
    return found


def _comments(text: str) -> list[Raw]:
    """HTML comments outside code: ASCII, so looked for in every text (not only in one
    holding the characters _hidden looks for)."""
    if "<!--" not in text:
        return []
    message = "an HTML comment: hidden when the Markdown is rendered, read by a model"
    return [
        ("hidden_text", WARNING, match.start(), match.end(), message)
        for match in HTML_COMMENT.finditer(_outside_code(text))
        if text[match.start(1) : match.end(1)].strip()
    ]


def _in_word(text: str, start: int) -> bool:
    """Whether ``start`` continues a word."""
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _asks_to_send(line: str) -> bool:
    """Whether a line holds a send word of its own (SEND_WORDS), addresses left out."""
    line = ADDRESSES.sub(" ", line)
    for match in SEND_WORDS.finditer(line):
        start, end = match.start(), match.end()
        before = line[start - 1] if start else ""
        after = line[end : end + 2]
        if before and (before in "-/" or before.isalnum() or before == "_"):
            continue
        if len(after) == 2 and after[0] in "-/" and (after[1].isalnum() or after[1] == "_"):
            continue
        return True
    return False


@dataclass(frozen=True)
class Link:
    """A URL's host as a browser reads it (after the last @, without the port)."""

    host: str  # lower case, as written (an IP address as written)
    userinfo: str  # what stands before the @, or ""
    ip: str  # the address in its usual form when the host is one, else ""
    reads_as: str  # what a host in lookalike letters reads as, else ""


def _ipv4(host: str) -> str | None:
    """A host a browser takes for an IPv4 address (WHATWG URL: its last label a number,
    decimal, octal or hex; 2130706433 and 0x7f.1 are 127.0.0.1), in dotted form, or None;
    "" when it is one but does not parse."""
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    if not labels[-1] or not (labels[-1].isdigit() or labels[-1].startswith("0x")):
        return None
    numbers = []
    for label in labels:
        try:
            if label.startswith("0x"):
                numbers.append(int(label[2:] or "0", 16))
            elif len(label) > 1 and label.startswith("0"):
                numbers.append(int(label, 8))
            else:
                numbers.append(int(label, 10))
        except ValueError:
            return ""
    if len(numbers) > 4 or any(n > 255 for n in numbers[:-1]):
        return ""
    value = numbers[-1]
    if value >= 256 ** (5 - len(numbers)):
        return ""
    for position, number in enumerate(numbers[:-1]):
        value += number * 256 ** (3 - position)
    return str(ipaddress.IPv4Address(value))


def _unicode_host(host: str) -> str:
    """A host with its punycode labels (xn--) decoded, as a person sees it."""
    labels = []
    for label in host.split("."):
        if label.startswith("xn--"):
            with contextlib.suppress(UnicodeError, ValueError):
                label = label[4:].encode("ascii").decode("punycode")
        labels.append(label)
    return ".".join(labels)


def _link(authority: str) -> Link | None:
    """The link in a URL's authority, or None when it names no host (``localhost``)."""
    userinfo, _at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        inside = hostport[1 : hostport.find("]")] if "]" in hostport else hostport[1:]
        try:
            return Link(f"[{inside.lower()}]", userinfo, str(ipaddress.IPv6Address(inside)), "")
        except ValueError:
            return None
    host = hostport.partition(":")[0].rstrip(".,;:!").lower()
    if not host:
        return None
    ip = _ipv4(host)
    if ip is not None:
        return Link(host, userinfo, ip or host, "")
    labels = host.split(".")
    if len(labels) < 2 or not all(
        label and all(c.isalnum() or c in "-_" for c in label) for label in labels
    ):
        return None
    top = labels[-1]
    if not (top.startswith("xn--") or (top.isalpha() and len(top) >= 2)):
        return None
    shown = _unicode_host(host)
    reads_as = ""
    if not shown.isascii():
        skeleton = "".join(_fold(c) for c in shown)
        reads_as = skeleton if skeleton.isascii() and skeleton != shown else ""
    return Link(host, userinfo, "", reads_as)


def _reach(text: str, lines: _Lines, file: str, hosts: set[str], credentials: set[str],
           named: dict[str, tuple[int, str]]) -> list[Raw]:  # fmt: skip
    """Warnings for links that mislead (a name before an @, an IP address, lookalike
    letters), for undeclared hosts in an instruction to send, and for undeclared
    credential names; every other undeclared host is collected into ``named`` (one info a
    skill)."""
    found: list[Raw] = []
    sends: dict[int, bool] = {}  # by line start: each line checked once

    def warn(match, message):
        found.append(("undeclared_host", WARNING, match.start(), match.end(), message))

    for match in URL.finditer(text):
        link = _link(match.group(1))
        if link is None:
            continue
        if link.userinfo:
            warn(match, f"a link that shows {link.userinfo[:60]!r} before an @: it goes to "
                        f"{link.host}, not there")  # fmt: skip
        if link.reads_as:
            warn(match, f"a host name written with letters that only look like others: "
                        f"{_unicode_host(link.host)} reads as {link.reads_as}")  # fmt: skip
        declared = link.host in hosts or (link.ip and link.ip in hosts)
        if link.ip and not declared:
            warn(match, f"a link to an IP address ({link.ip}): no host name a person can "
                        "check, and the bundle declares none such")  # fmt: skip
        if declared:
            continue
        line_start, line_end = lines.bounds(match.start())
        if line_start not in sends:
            sends[line_start] = _asks_to_send(text[line_start:line_end])
        if sends[line_start]:
            warn(match, f"an instruction to send data to {link.host}, which the bundle does "
                        "not declare among its hosts")  # fmt: skip
        elif not link.ip:
            named.setdefault(link.host, (lines.number(match.start()), file))
    seen = set()
    # Every credential name holds an underscore: text without one has none to find.
    for match in CREDENTIAL_NAME.finditer(text) if "_" in text else ():
        name = match.group(0)
        if _in_word(text, match.start()) or name in credentials or name in seen:
            continue
        seen.add(name)
        found.append((
            "undeclared_credential", WARNING, match.start(), match.end(),
            f"{name} looks like a credential, and the bundle declares no credential by that "
            "name: the plan will not ask for it",
        ))  # fmt: skip
    return found


@functools.lru_cache(maxsize=16384)
def _fold(char: str) -> str:
    """The one character ``char`` is read as, for matching rules: width and styled forms
    folded (NFKC: ｉ, 𝐢), any space a space, else the ASCII letter Unicode's confusables
    (UTS #39) say it looks like (a Cyrillic о, a dotless ı), named by the letter its name
    ends with when it has one (a Cyrillic І is read as an I, where UTS #39 says l); else
    itself. Always one
    character, so positions stay the same."""
    if char.isascii():
        return char
    if unicodedata.category(char) == "Zs":
        return " "
    normal = unicodedata.normalize("NFKC", char)
    if len(normal) == 1 and normal.isascii():
        return normal
    found = confusables.is_confusable(char, greedy=True, preferred_aliases=[])
    looks = {g["c"] for g in found[0]["homoglyphs"]} if found else set()
    looks = {c for c in looks if len(c) == 1 and c.isascii() and c.isalnum()}
    named = unicodedata.name(char, "").rsplit(" ", 1)[-1]
    if looks and len(named) == 1 and named.isascii() and named.isalpha():
        return named.lower() if char.islower() else named
    letters = sorted(looks, key=lambda c: (not c.isalpha(), c))
    return letters[0] if letters else char


def _folded(text: str) -> str | None:
    """The text with every non-ASCII character replaced by the one it is read as
    (_fold), or None when that changes nothing. One lookup per distinct character."""
    if text.isascii():
        return None
    table = {ord(c): f for c in set(text) if not c.isascii() and (f := _fold(c)) != c}
    return text.translate(table) if table else None


def _guardrails(text: str, folded: str | None, rules: Iterable[Rule]) -> list[Raw]:
    """Each rule's matches in the text and, when it holds lookalike letters, in the text
    as it reads (the match shown as written, said to be in lookalike letters)."""
    found = []
    for rule in rules:
        starts = set()
        for match in rule.pattern.finditer(text):
            starts.add(match.start())
            found.append(("guardrail", rule.severity, match.start(), match.end(),
                          f"{rule.message} ({rule.id})"))  # fmt: skip
        for match in rule.pattern.finditer(folded) if folded else ():
            if match.start() in starts:
                continue
            found.append(("guardrail", rule.severity, match.start(), match.end(),
                          f"{rule.message}, written with letters that only look like these "
                          f"({rule.id})"))  # fmt: skip
    return found


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def body_line_offset(skill_md: str, body: str) -> int:
    """How many lines of SKILL.md come before its body (the frontmatter), so a finding names
    the line a reader finds in the file; 0 when the file is not at hand."""
    text = skill_md.removeprefix("\ufeff").replace("\r\n", "\n")
    start = text.find(body[:200]) if body else -1
    return text.count("\n", 0, start) if start > 0 else 0


ORDER = {severity: i for i, severity in enumerate(SEVERITIES)}


def _listed(raw: list[Raw], lines: _Lines, skill: str, file: str) -> list[Finding]:
    """One file's findings: at most MAX_LISTED, the most severe first, each with its line
    and excerpt, and one more that counts the rest (worked out for those listed only)."""

    def finding(kind, severity, start, end, message):
        return Finding(kind, severity, skill, file, lines.number(start),
                       lines.excerpt(start, end), message)  # fmt: skip

    if len(raw) <= MAX_LISTED:
        return [finding(*r) for r in raw]
    raw = sorted(raw, key=lambda r: (ORDER[r[1]], r[2]))
    rest = raw[MAX_LISTED:]
    kind, _severity, start, end, _message = rest[0]
    worst = min((r[1] for r in rest), key=ORDER.__getitem__)
    more = (f"and {len(rest)} more findings in this file, not listed (the first on line "
            f"{lines.number(start)})")  # fmt: skip
    return [finding(*r) for r in raw[:MAX_LISTED]] + [finding(kind, worst, start, end, more)]


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
    ``body_offset``: the lines of SKILL.md before the body (body_line_offset). Linear in
    the length of the text."""
    hosts = {h.lower() for h in hosts}
    credentials = set(credentials)
    rules = list(rules)
    found: list[Finding] = []
    named: dict[str, tuple[int, str]] = {}
    for file, text in [("SKILL.md", body), *sorted(markdown)]:
        lines = _Lines(text)
        raw = [] if text.isascii() else _hidden(text)
        raw += _comments(text)
        raw += _reach(text, lines, file, hosts, credentials, named)
        raw += _guardrails(text, _folded(text), rules)
        here = _listed(raw, lines, skill, file)
        if file == "SKILL.md" and body_offset:
            here = [replace(f, line=f.line + body_offset) for f in here]
            named = {h: (line + body_offset if f == "SKILL.md" and line > 0 else line, f)
                     for h, (line, f) in named.items()}  # fmt: skip
        found += here
    if named:
        first_line, first_file = min(named.values(), key=lambda v: (v[1] != "SKILL.md", v))
        listed = ", ".join(sorted(named)[:MAX_LISTED])
        more = f" (the first {MAX_LISTED} listed)" if len(named) > MAX_LISTED else ""
        found.append(Finding(
            "undeclared_host", INFO, skill, first_file, first_line, listed,
            f"names {len(named)} host(s) the bundle does not declare{more} (links are often "
            "documentation; its agents cannot reach them without a rule)",
        ))  # fmt: skip
    return sorted(found, key=lambda f: (ORDER[f.severity], f.file != "SKILL.md", f.file, f.line))


def count_words(findings: list[dict]) -> str:
    """'2 findings to read' (or '' when there are none), for a summary line."""
    n = len(findings)
    return f"{n} finding{'' if n == 1 else 's'} to read" if n else ""
