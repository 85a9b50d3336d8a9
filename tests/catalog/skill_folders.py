"""Realistic skill folders for tests, written for Pixie (no published skill's text).

They have what published Agent Skills have: long bodies, scripts/ with an
executable, references/, a binary asset, code samples full of `@`, client-specific
frontmatter keys, BOMs and CRLF line ends.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def png_bytes(width: int = 4, height: int = 4) -> bytes:
    """A small valid PNG (binary, not UTF-8)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([200, 30, 90, 255]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


LEDGER_EXPORT_INTRO = """\
# Export ledger statements

Use this skill when someone asks for a statement of account, an aged-debt report or a
PDF copy of invoices for a customer. The ledger is the only source of truth: read it
with @ledger-lookup, never from memory or an earlier conversation.

## Before you start

1. Confirm the customer and the period. If the request names a company that has two
   accounts, ask which one.
2. Run `scripts/export.py --check` to make sure the export service answers.
3. Read `references/statement-fields.md` for what each column means.

The client library is published as `@acme/ledger-client`; install it with
`npm install @acme/ledger-client@2` only in the sandbox, never on a customer's machine.

```python
from dataclasses import dataclass

from ledger import app


@dataclass
class Statement:
    customer: str
    lines: list


@app.route("/statements/<customer>")
@app.requires_scope("ledger:read")
def statement(customer):
    # Replies go to billing@example.com, never to the customer directly.
    return Statement(customer=customer, lines=[])
```

    # An indented sample: the decorator below is code, not a mention.
    @retry(times=3)
    def fetch(): ...

"""

SECTION = """\
## Error {code}: {title}

When the export service answers `{code}`, {advice} Write down the request id from the
`X-Request-Id` header and the time, then tell the person who asked what happened in one
sentence. Do not retry more than twice; the second failure goes to the finance team with
the request id. If the statement was already sent, say so and do not send it again.

| field | what to check |
| --- | --- |
| customer | the account number matches the ledger |
| period | the end date is not in the future |
| currency | one currency per statement; never convert |

"""

TITLES = [
    ("timeout", "the service is slow; wait a minute before the one retry you are allowed."),
    ("unknown customer", "the account number is wrong; look it up again with @ledger-lookup."),
    ("period too long", "split the period into quarters and export each one."),
    ("locked", "month-end close is running; try again after it finishes."),
    ("forbidden", "the token lacks the read scope; ask the finance team, never work around it."),
]


def long_body(target_chars: int = 30_000) -> str:
    parts = [LEDGER_EXPORT_INTRO]
    code = 400
    while sum(map(len, parts)) < target_chars:
        title, advice = TITLES[code % len(TITLES)]
        parts.append(SECTION.format(code=code, title=title, advice=advice))
        code += 1
    return "".join(parts)


EXPORT_SCRIPT = """\
#!/usr/bin/env python3
\"\"\"Export a statement of account as PDF.\"\"\"
import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.check:
        print("export service: ok")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
"""

FIELDS_REFERENCE = """\
# Statement fields

- **Opening balance**: what was owed at the start of the period.
- **Invoices**: each invoice raised in the period, with its due date.
- **Payments**: money received, by date; contact ar-team@example.com about gaps.
- **Closing balance**: opening balance plus invoices minus payments and credit notes.
"""


def write(path: Path, data: str | bytes, *, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    path.chmod(0o755 if executable else 0o644)
    return path


def skill_md(name: str, description: str, body: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}"


def ledger_export_skill(folder: Path, *, body: str | None = None) -> Path:
    """A long Agent Skills folder: SKILL.md, scripts/ (executable), references/, assets/."""
    write(
        folder / "SKILL.md",
        skill_md(
            "ledger-export",
            "Export statements of account and aged-debt reports from the ledger as PDF. Use "
            "when someone asks for a statement, a copy of invoices or what a customer owes.",
            body if body is not None else long_body(),
            'license: Apache-2.0\nmetadata:\n  author: acme-finance\n  version: "1.0.0"\n',
        ),
    )
    write(folder / "scripts" / "export.py", EXPORT_SCRIPT, executable=True)
    write(folder / "references" / "statement-fields.md", FIELDS_REFERENCE)
    write(folder / "assets" / "logo.png", png_bytes())
    return folder


def ledger_lookup_skill(folder: Path, *, extra_line: str = "") -> Path:
    """A short skill the long one mentions, with a multi-line (block scalar) description."""
    write(
        folder / "SKILL.md",
        "---\nname: ledger-lookup\ndescription: >-\n  Look up a customer's invoices, payments "
        "and balance in the ledger.\n  Use before writing anything about money.\n---\n\n"
        "# Ledger lookup\n\nQuery the ledger by account number; never guess an amount.\n"
        + extra_line,
    )
    return folder


def bundle_folder(root: Path, *, version: str = "1.0.0", skills=("ledger-lookup", "ledger-export"),
                  slug: str = "ledger-tools") -> Path:  # fmt: skip
    """A bundle with the two skills above, written in the Agent Skills shape."""
    write(
        root / "bundle.toml",
        f'slug = "{slug}"\nname = "Ledger Tools"\nversion = "{version}"\n'
        'description = "Look up and export ledger statements."\n'
        f"skills = {list(skills)!r}\n".replace("'", '"')
        + '\n[[hosts]]\nhost = "ledger.example.com"\nport = 443\npurpose = "Read the ledger."\n'
        '\n[[approvals]]\nskill = "ledger-export"\noperation = "send-statement"\n'
        'rule = "Sending a statement to a customer needs a person\'s yes."\n',
    )
    if "ledger-lookup" in skills:
        ledger_lookup_skill(root / "skills" / "ledger-lookup")
    if "ledger-export" in skills:
        ledger_export_skill(root / "skills" / "ledger-export")
    return root


def tree(folder: Path) -> dict[str, tuple[bytes, bool]]:
    """Every file under ``folder``: relative path -> (bytes, executable)."""
    return {
        str(path.relative_to(folder)): (path.read_bytes(), bool(path.stat().st_mode & 0o111))
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
