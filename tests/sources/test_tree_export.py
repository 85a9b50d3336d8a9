"""A repository's skill folders at a commit, written out for the catalog's own reader:
real layouts, links never followed, submodules empty, names and sizes checked as in an
upload."""

import hashlib
import os
import stat

import pytest

from catalog.bundle_files import BundleFileError, read_bundle_folder
from pixie.sources.git_mirror import Movement, mirror_fetch
from pixie.sources.tree_export import folder_tree, tree_export

BUNDLE_TOML = """slug = "receivables"
name = "Receivables"
version = "1.0.0"
skills = ["invoice-chase", "payment-reminder"]
"""


def fetched(upstream, mirror):
    result = mirror_fetch(mirror, upstream.url, "main")
    return result.commit.sha


def exported(mirror, commit, tmp_path, label="export", **choice):
    into = tmp_path / label
    into.mkdir()
    return tree_export(mirror=mirror, commit=commit, into=into, **choice), into


def folder_digests(into) -> dict[str, str]:
    """Each exported skill folder's digest over its files' paths, modes and bytes."""
    digests = {}
    for skill in sorted((into / "skills").iterdir()):
        content = hashlib.sha256()
        for path in sorted(p for p in skill.rglob("*") if p.is_file()):
            content.update(f"{path.relative_to(skill)}\0{path.stat().st_mode:o}\0".encode())
            content.update(path.read_bytes())
        digests[skill.name] = content.hexdigest()
    return digests


def no_links_in(folder) -> bool:
    return not any(
        os.path.islink(os.path.join(here, name))
        for here, folders, files in os.walk(folder)
        for name in folders + files
    )


def test_a_commit_that_changes_one_skill_changes_exactly_that_folder(upstream, mirror, tmp_path):
    for name in ("invoice-chase", "payment-reminder", "dunning-letter"):
        upstream.skill(name)
    upstream.commit("Three skills")
    upstream.push()
    before, _ = exported(mirror, fetched(upstream, mirror), tmp_path, "before")
    upstream.skill("payment-reminder", "Remind the customer, once, politely.")
    upstream.commit("Reword payment-reminder")
    upstream.push()

    result = mirror_fetch(mirror, upstream.url, "main")
    after, _ = exported(mirror, result.commit.sha, tmp_path, "after")

    assert result.movement == Movement.FORWARD
    old, new = folder_digests(tmp_path / "before"), folder_digests(tmp_path / "after")
    assert sorted(old) == sorted(new) == ["dunning-letter", "invoice-chase", "payment-reminder"]
    assert [name for name in old if old[name] != new[name]] == ["payment-reminder"]
    assert before.tree != after.tree


def test_a_commit_that_changes_nothing_in_the_folder_keeps_its_tree(upstream, mirror):
    upstream.skill("invoice-chase")
    upstream.write("README.md", "Our skills.\n")
    first = upstream.commit()
    upstream.write("README.md", "Our skills, reviewed.\n")
    second = upstream.commit("Reword the README")
    third = upstream.commit("Nothing at all", allow_empty=True)
    upstream.push()
    fetched(upstream, mirror)

    assert folder_tree(mirror, first, "skills") == folder_tree(mirror, second, "skills")
    assert folder_tree(mirror, first) != folder_tree(mirror, second)
    assert folder_tree(mirror, second) == folder_tree(mirror, third)
    assert folder_tree(mirror, first, "README.md") is None  # a file, not a folder
    assert folder_tree(mirror, first, "nowhere") is None


def test_the_export_is_a_bundle_folder_the_catalog_reads(upstream, mirror, tmp_path):
    upstream.write("bundle.toml", BUNDLE_TOML)
    upstream.skill("invoice-chase")
    upstream.skill("payment-reminder")
    upstream.write("skills/invoice-chase/scripts/chase.sh", "#!/bin/sh\necho chase\n",
                   executable=True)  # fmt: skip
    upstream.write("docs/guide.md", "Not a skill.\n")
    upstream.commit()
    upstream.push()

    export, into = exported(mirror, fetched(upstream, mirror), tmp_path)
    bundle = read_bundle_folder(into)

    assert export.manifest == "bundle.toml"
    assert [s.path for s in export.skills] == ["skills/invoice-chase", "skills/payment-reminder"]
    assert (export.files, export.notices) == (4, [])
    assert [s.slug for s in bundle.skills] == ["invoice-chase", "payment-reminder"]
    script = into / "skills/invoice-chase/scripts/chase.sh"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert stat.S_IMODE((into / "bundle.toml").stat().st_mode) == 0o644
    assert sorted(os.listdir(into)) == ["bundle.toml", "skills"]


def test_skills_under_dot_folders_and_categories_are_found(upstream, mirror, tmp_path):
    upstream.skill("alpha", folder="skills/.curated")
    upstream.skill("beta", folder="skills/.system")
    upstream.skill("gamma", folder="plugins/finance/skills")
    # A SKILL.md inside a skill folder is one of its files (a template), not a skill.
    upstream.skill("template", folder="skills/.curated/alpha/assets")
    upstream.commit()
    upstream.push()

    export, into = exported(mirror, fetched(upstream, mirror), tmp_path)

    assert [(s.name, s.path) for s in export.skills] == [
        ("gamma", "plugins/finance/skills/gamma"),
        ("alpha", "skills/.curated/alpha"),
        ("beta", "skills/.system/beta"),
    ]
    assert (into / "skills/alpha/assets/template/SKILL.md").is_file()


def test_a_list_of_names_chooses_the_folders_in_its_order(upstream, mirror, tmp_path):
    for name in ("alpha", "beta", "gamma"):
        upstream.skill(name, folder="skills/.curated")
    upstream.write("other/README.md", "Not here.\n")
    upstream.commit()
    upstream.push()
    commit = fetched(upstream, mirror)

    export, into = exported(mirror, commit, tmp_path, folder="skills", names=["gamma", "alpha"])
    with pytest.raises(BundleFileError) as missing:
        exported(mirror, commit, tmp_path, "missing", folder="skills", names=["alpha", "delta"])

    assert [s.name for s in export.skills] == ["gamma", "alpha"]
    assert sorted(os.listdir(into / "skills")) == ["alpha", "gamma"]
    assert missing.value.problems == [
        "delta: no skill folder (a folder holding SKILL.md) of that name is in the repository "
        "at this commit"
    ]
    assert os.listdir(tmp_path / "missing") == []


def test_links_are_never_followed_nor_written(upstream, mirror, tmp_path):
    upstream.skill("alpha")
    upstream.link("skills/alpha/itself", ".")  # a folder linked to itself
    upstream.link("skills/alpha/passwords", "/etc/passwd")
    upstream.link("skills/beta", "alpha")  # a skill folder that is only a link
    upstream.write("skills/gamma/notes.md", "Linked in.\n")
    upstream.link("skills/gamma/SKILL.md", "../alpha/SKILL.md")
    upstream.commit()
    upstream.push()

    export, into = exported(mirror, fetched(upstream, mirror), tmp_path)

    assert [s.name for s in export.skills] == ["alpha"]
    assert export.notices == [
        "skills/alpha/itself: a symbolic link; not followed and not written (a bundle holds files)",
        "skills/alpha/passwords: a symbolic link; not followed and not written (a bundle holds "
        "files)",
        "skills/gamma/SKILL.md: a symbolic link; not followed, so its folder is not a skill folder",
    ]
    assert no_links_in(into)
    assert sorted(os.listdir(into / "skills/alpha")) == ["SKILL.md"]


def test_a_submodule_stays_empty_and_is_named(upstream, mirror, tmp_path):
    upstream.skill("alpha")
    upstream.submodule("skills/alpha/vendor/toolkit")
    upstream.commit()
    upstream.push()

    export, into = exported(mirror, fetched(upstream, mirror), tmp_path)

    assert export.notices == ["skills/alpha/vendor/toolkit: a submodule; left empty"]
    assert not (into / "skills/alpha/vendor").exists()


def test_files_over_the_ceilings_are_refused_before_anything_is_written(
    upstream, mirror, tmp_path, settings
):
    upstream.skill("alpha")
    upstream.write("skills/alpha/assets/scan.bin", b"x" * 2_000)
    upstream.write("skills/alpha/assets/small.txt", "small\n")
    upstream.commit()
    upstream.push()
    commit = fetched(upstream, mirror)
    settings.PIXIE_SKILL_FILE_MAX_BYTES = 1_000
    settings.PIXIE_BUNDLE_MAX_FILES = 1

    with pytest.raises(BundleFileError) as refused:
        exported(mirror, commit, tmp_path)

    assert refused.value.problems == [
        "skills/alpha/assets/scan.bin: is 2,000 bytes; the limit for one file is 1,000 "
        "(PIXIE_SKILL_FILE_MAX_BYTES)",
        "The skill folders hold 2 files; the limit for one bundle is 1 (PIXIE_BUNDLE_MAX_FILES)",
    ]
    assert os.listdir(tmp_path / "export") == []


def test_names_are_checked_as_an_upload_s_are(upstream, mirror, tmp_path):
    upstream.skill("alpha")
    upstream.write("skills/alpha/bad\x1bname.md", "hidden escape\n")
    upstream.write("skills/alpha/back\\slash.md", "a folder on some systems\n")
    upstream.write("skills/alpha/ok\u202egpj.md", "shown, not refused: as in an upload\n")
    upstream.commit()
    upstream.push()

    with pytest.raises(BundleFileError) as refused:
        exported(mirror, fetched(upstream, mirror), tmp_path)

    assert refused.value.problems == [
        "skills/alpha/back\\slash.md: refused: its name holds a backslash, which names a folder "
        "on some systems",
        "skills/alpha/bad⟨U+001B⟩name.md: refused: its name holds a control character",
    ]


def test_two_skill_folders_of_one_name_are_refused(upstream, mirror, tmp_path):
    upstream.skill("alpha", folder="skills/.curated")
    upstream.skill("alpha", folder="skills/.experimental")
    upstream.commit()
    upstream.push()
    commit = fetched(upstream, mirror)

    with pytest.raises(BundleFileError) as refused:
        exported(mirror, commit, tmp_path)
    export, _ = exported(mirror, commit, tmp_path, "one", names=["skills/.curated/alpha"])

    assert refused.value.problems == [
        "skills/.curated/alpha and skills/.experimental/alpha would both be skills/alpha: "
        "choose one"
    ]
    assert [s.path for s in export.skills] == ["skills/.curated/alpha"]


def test_a_folder_that_is_not_in_the_repository_is_refused(upstream, mirror, tmp_path):
    upstream.skill("alpha")
    upstream.commit()
    upstream.push()
    commit = fetched(upstream, mirror)

    with pytest.raises(BundleFileError) as missing:
        exported(mirror, commit, tmp_path, folder="plugins")
    with pytest.raises(BundleFileError) as climbing:
        exported(mirror, commit, tmp_path, "climbing", folder="skills/../..")

    assert str(missing.value) == f"The folder plugins is not a folder at commit {commit[:12]}"
    assert "must be a relative path without empty, '.' or '..' parts" in str(climbing.value)
