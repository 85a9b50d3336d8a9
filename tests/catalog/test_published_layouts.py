"""A folder laid out as public Agent Skills collections publish theirs (skill folders,
no bundle.toml), or one skill folder on its own: the refusal says what it holds and what
to write, by the command and by the admin's upload; with that bundle.toml it loads."""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.models import BundleSkill, BundleVersion, SkillVersion

from .bundle_archives import zip_of
from .skill_folders import ledger_export_skill, ledger_lookup_skill, png_bytes, skill_md, write
from .test_bundle_upload import refused as upload_refused

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


def collection(root: Path) -> Path:
    """skills/<name>/ at the top, a README and a LICENSE beside them: no bundle.toml."""
    ledger_lookup_skill(root / "skills" / "ledger-lookup")
    ledger_export_skill(root / "skills" / "ledger-export")
    write(root / "README.md", "# Finance skills\n\nInstall with `npx skills add @acme/fin`.\n")
    write(root / "LICENSE", "Apache License 2.0 (summary written for this test)\n")
    return root


def plugin_collection(root: Path) -> Path:
    """Skills grouped by plugin, and a curated tier in a hidden folder."""
    write(
        root / "plugins" / "ledger" / "skills" / "ledger-audit" / "SKILL.md",
        skill_md("ledger-audit", "Audit a ledger's month-end close.", "# Audit\n\nCheck sums.\n"),
    )
    write(root / "plugins" / "ledger" / "skills" / "ledger-audit" / "assets" / "seal.png",
          png_bytes())  # fmt: skip
    write(
        root / "skills" / ".curated" / "dunning" / "SKILL.md",
        skill_md("dunning", "Chase an overdue invoice politely.", "# Dunning\n\nBe kind.\n"),
    )
    write(root / ".git" / "skills" / "not-a-skill" / "SKILL.md", "never looked at\n")
    return root


def command_refusal(path: Path) -> str:
    before = (BundleVersion.objects.count(), SkillVersion.objects.count())
    with pytest.raises(CommandError) as error:
        call_command("bundle_load", str(path), "--publish")
    assert (BundleVersion.objects.count(), SkillVersion.objects.count()) == before
    return str(error.value)


def test_a_collection_without_bundle_toml_is_refused_naming_its_skills(tmp_path):
    message = command_refusal(collection(tmp_path / "finance-skills"))
    assert "bundle.toml: file is missing: this folder holds 2 skill folders (SKILL.md)" in message
    assert 'skills = ["ledger-export", "ledger-lookup"]' in message
    assert "move each" not in message  # they are already where a bundle keeps them


def test_skills_in_plugin_or_hidden_folders_are_found_and_told_where_to_go(tmp_path):
    message = command_refusal(plugin_collection(tmp_path / "grouped"))
    assert "holds 2 skill folders (SKILL.md) (plugins/ledger/skills/ledger-audit, ...)" in message
    assert "move each to skills/<name>/" in message
    assert 'skills = ["ledger-audit", "dunning"]' in message
    assert "not-a-skill" not in message  # .git is not looked into


def test_one_skill_folder_on_its_own_is_told_how_a_bundle_holds_it(tmp_path):
    folder = ledger_export_skill(tmp_path / "ledger-export")
    message = command_refusal(folder)
    assert "this folder is one skill (SKILL.md at its top)" in message
    assert "skills/<name>/SKILL.md next to a bundle.toml" in message


def test_a_long_list_of_skills_is_shortened(tmp_path):
    root = tmp_path / "many"
    for i in range(14):
        write(root / "skills" / f"step-{i:02}" / "SKILL.md",
              skill_md(f"step-{i:02}", "A step.", "Do it.\n"))  # fmt: skip
    message = command_refusal(root)
    assert '"step-09", ... (4 more)]' in message
    assert "step-10" not in message


def test_a_folder_with_no_skill_keeps_the_plain_refusal(tmp_path):
    write(tmp_path / "notes" / "README.md", "Nothing here.\n")
    message = command_refusal(tmp_path / "notes")
    assert message.rstrip().endswith("bundle.toml: file is missing")


def test_with_the_bundle_toml_it_names_the_collection_loads(tmp_path):
    root = collection(tmp_path / "finance-skills")
    write(
        root / "bundle.toml",
        'slug = "finance"\nname = "Finance"\nversion = "1.0.0"\n'
        'skills = ["ledger-lookup", "ledger-export"]\n',
    )
    call_command("bundle_load", str(root), "--publish")
    version = BundleVersion.objects.get(bundle__slug="finance")
    skills = BundleSkill.objects.filter(bundle_version=version).order_by("position")
    assert [s.skill_version.package.slug for s in skills] == ["ledger-lookup", "ledger-export"]
    assert version.status == "published"


def test_an_uploaded_collection_without_bundle_toml_is_refused_naming_its_skills(
    operator_client, tmp_path, data_dir
):
    archive = zip_of(collection(tmp_path / "finance-skills"), prefix="finance-skills-main/")
    problems = upload_refused(
        operator_client, data_dir, "finance-skills-main.zip", archive, "no bundle.toml"
    )
    assert "it holds 2 skill folders (SKILL.md)" in problems[0]
    assert 'skills = ["ledger-export", "ledger-lookup"]' in problems[0]


def test_an_uploaded_skill_folder_is_told_how_a_bundle_holds_it(
    operator_client, tmp_path, data_dir
):
    archive = zip_of(ledger_export_skill(tmp_path / "ledger-export"), prefix="ledger-export/")
    problems = upload_refused(operator_client, data_dir, "ledger-export.zip", archive, "SKILL.md")
    assert "it is one skill (SKILL.md at its top)" in problems[0]
