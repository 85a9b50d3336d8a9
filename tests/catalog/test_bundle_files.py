"""Operators load bundle folders with manage.py; bad input names the file and writes nothing."""

import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.bundle_files import read_bundle_folder
from catalog.models import (
    Bundle,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillPackage,
    SkillVersion,
    Status,
)
from catalog.services.bundle_load import bundle_spec_of
from tests.ratio import ratio

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "catalog" / "demo"
AR_210 = DEMO / "accounts-receivable-2.1.0"
AR_220 = DEMO / "accounts-receivable-2.2.0"
CATALOG_MODELS = [Publisher, SkillPackage, SkillVersion, Bundle, BundleVersion, BundleSkill]


def counts():
    return {model.__name__: model.objects.count() for model in CATALOG_MODELS}


@pytest.fixture
def folder(tmp_path):
    """A writable copy of Accounts Receivable 2.1.0 to break in each test."""
    copy = tmp_path / "ar"
    shutil.copytree(AR_210, copy)
    return copy


def load(path, *args):
    call_command("bundle_load", str(path), *args)


def test_loading_a_bundle_creates_its_versions_in_order(capsys):
    load(AR_210, "--publish")
    bundle_version = BundleVersion.objects.get(bundle__slug="accounts-receivable", version="2.1.0")
    assert bundle_version.status == Status.PUBLISHED
    assert [e.skill_version.package.slug for e in bundle_version.skills.order_by("position")] == [
        "ar-ground-rules",
        "invoice-chase",
        "take-payment",
        "apply-credit-note",
    ]
    assert list(bundle_version.hosts.values_list("host", "port")) == [("ledger.example.com", 443)]
    assert list(bundle_version.credentials.values_list("name", flat=True)) == ["LEDGER_API_TOKEN"]
    take_payment = SkillVersion.objects.get(package__slug="take-payment")
    assert take_payment.approvals[0]["operation"] == "take-payment"
    assert "Loaded accounts-receivable 2.1.0 and published" in capsys.readouterr().out


def test_loading_the_same_folder_twice_changes_nothing():
    load(AR_210, "--publish")
    before = counts()
    load(AR_210, "--publish")
    assert counts() == before


def test_a_newer_version_reuses_unchanged_skill_versions():
    load(AR_210, "--publish")
    load(AR_220, "--publish")
    assert SkillVersion.objects.filter(package__slug="take-payment").count() == 1
    assert SkillVersion.objects.filter(package__slug="invoice-chase").count() == 2
    newer = BundleVersion.objects.get(version="2.2.0")
    assert newer.hosts.count() == 2 and newer.credentials.count() == 2


def test_dump_then_load_yields_identical_versions(tmp_path):
    load(AR_210, "--publish")
    load(AR_220, "--publish")
    original = bundle_spec_of(BundleVersion.objects.get(version="2.2.0"))
    out = tmp_path / "dumped"
    call_command("bundle_dump", "accounts-receivable", "2.2.0", str(out))
    assert read_bundle_folder(out) == original
    before = counts()
    load(out, "--publish")
    assert counts() == before


def test_dump_refuses_a_folder_that_is_not_empty(tmp_path):
    load(AR_210)
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(CommandError, match="not empty"):
        call_command("bundle_dump", "accounts-receivable", "2.1.0", str(tmp_path))


AGENT_SKILLS_FILE = """\
---
name: pdf-processing
description: Extract text and tables from PDF files, fill forms, merge documents.
license: Apache-2.0
compatibility: Needs a PDF library on the host.
metadata:
  author: example-org
  version: "1.4.0"
allowed-tools: Bash(pdftotext:*) Read
---

# PDF processing

Find the file with @find-file, then extract its text.
"""


def test_an_agent_skills_file_loads_as_is_and_keeps_its_fields(folder, tmp_path):
    skill_dir = folder / "skills" / "pdf-processing"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text(AGENT_SKILLS_FILE)
    manifest = folder / "bundle.toml"
    manifest.write_text(
        manifest.read_text().replace(
            '"apply-credit-note"]', '"apply-credit-note", "pdf-processing"]'
        )
    )
    load(folder)
    pdf = SkillVersion.objects.get(package__slug="pdf-processing")
    assert pdf.version == "1.4.0"
    assert pdf.frontmatter == {
        "license": "Apache-2.0",
        "compatibility": "Needs a PDF library on the host.",
        "metadata": {"author": "example-org", "version": "1.4.0"},
        "allowed-tools": "Bash(pdftotext:*) Read",
    }
    out = tmp_path / "out"
    call_command("bundle_dump", "accounts-receivable", "2.1.0", str(out))
    assert (
        "allowed-tools: Bash(pdftotext:*) Read"
        in (out / "skills/pdf-processing/SKILL.md").read_text()
    )


def _refused(path, *messages):
    before = counts()
    with pytest.raises(CommandError) as refused:
        load(path, "--publish")
    for message in messages:
        assert message in str(refused.value)
    assert "nothing was loaded" in str(refused.value)
    assert counts() == before


def _edit(path: Path, old: str, new: str):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_unknown_manifest_key_is_refused(folder):
    _edit(
        folder / "bundle.toml",
        'slug = "accounts-receivable"',
        'slug = "accounts-receivable"\nicon = "x"',
    )
    _refused(folder, "bundle.toml: unknown key icon")


def test_an_unknown_frontmatter_key_is_kept_and_named_as_a_notice(folder, capsys):
    _edit(
        folder / "skills/take-payment/SKILL.md", "version: 2.1.0", "version: 2.1.0\nauto_run: true"
    )
    load(folder, "--publish")
    assert SkillVersion.objects.get(package__slug="take-payment").frontmatter["auto_run"] is True
    out = capsys.readouterr().out
    assert "notice: skills/take-payment/SKILL.md: kept 'auto_run' as written" in out


@pytest.mark.parametrize("bad", ["Accounts Receivable", "accounts_receivable", "-ar", "a" * 65])
def test_a_bundle_slug_that_fails_the_regex_is_refused(folder, bad):
    _edit(folder / "bundle.toml", 'slug = "accounts-receivable"', f'slug = "{bad}"')
    _refused(folder, "bundle.toml: 'slug'")


def test_a_slug_with_a_trailing_newline_is_refused(folder):
    _edit(folder / "bundle.toml", 'slug = "accounts-receivable"', 'slug = "accounts-receivable\\n"')
    _refused(folder, "bundle.toml: 'slug' 'accounts-receivable\\n'")


def test_a_skill_folder_name_that_fails_the_regex_is_refused(folder):
    shutil.move(folder / "skills/take-payment", folder / "skills/Take_Payment")
    _edit(folder / "bundle.toml", '"take-payment"', '"Take_Payment"')
    _refused(folder, "skill 'Take_Payment' must match")


def test_a_file_over_the_safety_ceiling_is_refused(folder, settings):
    settings.PIXIE_SKILL_FILE_MAX_BYTES = 20_000
    path = folder / "skills/invoice-chase/SKILL.md"
    path.write_text(path.read_text() + "x" * 20_001)
    _refused(
        folder,
        "skills/invoice-chase/SKILL.md: is 2",
        "the limit for one file is 20,000 (PIXIE_SKILL_FILE_MAX_BYTES)",
    )


def test_a_mention_that_resolves_nowhere_is_refused(folder):
    _edit(folder / "skills/invoice-chase/SKILL.md", "\n\n", "\n\nFirst run @refund-wizard.\n\n")
    _refused(folder, "@refund-wizard is mentioned by @invoice-chase")


def test_a_missing_skill_file_is_refused(folder):
    (folder / "skills/apply-credit-note/SKILL.md").unlink()
    _refused(folder, "skills/apply-credit-note/SKILL.md: file is missing")


def test_a_version_that_exists_with_different_content_is_refused(folder):
    load(AR_210, "--publish")
    _edit(folder / "skills/take-payment/SKILL.md", "\n\n", "\n\nA quiet change.\n\n")
    _refused(folder, "@take-payment 2.1.0 already exists with different content")


def test_a_bundle_version_that_exists_with_different_content_is_refused(folder):
    load(AR_210, "--publish")
    _edit(folder / "bundle.toml", "port = 443", "port = 8443")
    _refused(folder, "accounts-receivable 2.1.0 already exists with different content")


def test_duplicate_yaml_keys_and_bad_hosts_and_credentials_are_refused(folder):
    _edit(folder / "skills/take-payment/SKILL.md", "version: 2.1.0", "version: 2.1.0\nname: Again")
    _edit(
        folder / "bundle.toml", 'host = "ledger.example.com"\nport', 'host = "https://ledger"\nport'
    )
    _edit(folder / "bundle.toml", 'name = "LEDGER_API_TOKEN"', 'name = "ledger token"')
    _refused(
        folder,
        "skills/take-payment/SKILL.md: frontmatter is not valid YAML",
        "'host' 'https://ledger' must be a lower-case DNS name",
        "'name' 'ledger token' must be an environment variable name",
    )


def test_a_skill_named_like_a_tool_is_refused(folder):
    shutil.move(folder / "skills/take-payment", folder / "skills/send-email")
    toml = folder / "bundle.toml"
    toml.write_text(toml.read_text().replace('"take-payment"', '"send-email"'))
    _edit(folder / "skills/send-email/SKILL.md", "name: take-payment", "name: send-email")
    _refused(folder, "@send-email is a built-in tool")


# --- what would expand out of all proportion: aliases, deep nesting, odd shapes ---------


def alias_bomb(levels: int) -> str:
    """YAML whose each level names the one before ten times: 10**levels values from a few
    dozen bytes a level (a 'billion laughs')."""
    lines = ['  l0: &l0 ["lol"]']
    for n in range(1, levels + 1):
        lines.append(f"  l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]")
    return "laughs:\n" + "\n".join(lines) + "\n"


def with_frontmatter(folder, extra: str) -> Path:
    skill = folder / "skills" / "take-payment" / "SKILL.md"
    skill.write_text(skill.read_text().replace("---\n", "---\n" + extra, 1))
    return skill


def test_a_yaml_alias_bomb_is_refused_before_it_expands(folder):
    with_frontmatter(folder, alias_bomb(6))  # a million values, were it expanded
    before = counts()
    with pytest.raises(CommandError) as refused:
        load(folder)
    assert (
        "skills/take-payment/SKILL.md: frontmatter is not valid YAML (an alias (*l0) at line 3: "
        "Pixie does not expand YAML aliases; write the value out)"
    ) in str(refused.value)
    assert counts() == before


@pytest.mark.xdist_group("timing")
def test_refusing_an_alias_bomb_costs_time_in_proportion_to_its_bytes(tmp_path):
    """Twice the levels (twice the bytes; were it expanded, 1,000 times the values) take
    about as long or twice as long: the ratio, so a fast machine cannot hide a blow-up."""
    from catalog.bundle_files import parse_skill_md

    def refusing(levels):
        text = ("---\nname: take-payment\ndescription: Take a payment.\n" + alias_bomb(levels)
                + "---\n\nTake it.\n")  # fmt: skip

        def parse():
            problems = []
            assert parse_skill_md(text, "take-payment", "1.0.0", problems, [], "SKILL.md") is None
            assert "an alias (*l0)" in problems[0]

        return parse

    assert ratio(refusing(6), refusing(3)) < 4


def test_nesting_past_the_limit_is_refused_naming_the_file(folder):
    with_frontmatter(folder, "metadata:\n  deep: " + "[" * 5_000 + "]" * 5_000 + "\n")
    with pytest.raises(CommandError) as refused:
        load(folder)
    assert "skills/take-payment/SKILL.md: frontmatter is not valid YAML (nested more than 20 " in (
        str(refused.value)
    )
    manifest = folder / "bundle.toml"
    manifest.write_text(manifest.read_text() + "\ndeep = " + "[" * 5_000 + "]" * 5_000 + "\n")
    (folder / "skills" / "take-payment" / "SKILL.md").write_text(
        (AR_210 / "skills" / "take-payment" / "SKILL.md").read_text()
    )
    with pytest.raises(CommandError) as refused:
        load(folder)
    assert "bundle.toml: not valid TOML (nested more than 20 levels deep)" in str(refused.value)


@pytest.mark.parametrize(
    "skills",
    ['[["ar-ground-rules"], ["invoice-chase"]]', "[{ a = 1 }]", "[1, 2]", '"take-payment"'],
)
def test_skills_of_the_wrong_shape_are_named_not_a_server_error(folder, skills):
    manifest = folder / "bundle.toml"
    text = manifest.read_text()
    start = text.index("skills = ")
    manifest.write_text(text[:start] + f"skills = {skills}" + text[text.index("\n", start) :])
    with pytest.raises(CommandError) as refused:
        load(folder)
    assert "bundle.toml: " in str(refused.value) and "skill" in str(refused.value)
