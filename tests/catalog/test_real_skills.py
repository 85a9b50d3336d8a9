"""Skills as people publish them: long bodies, supporting files, client keys, BOM/CRLF.

Every test goes through `manage.py bundle_load` / `bundle_dump`, the operator's path.
"""

import os
import shutil
from pathlib import Path

import pytest
import skills_ref
from django.core.management import CommandError, call_command

from catalog.models import FileBlob, SkillFile, SkillVersion
from catalog.skill_content import skill_size

from .skill_folders import (
    bundle_folder,
    ledger_lookup_skill,
    png_bytes,
    tree,
    write,
)

pytestmark = pytest.mark.django_db


def load(path, *args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("bundle_load", str(path), *args, stdout=out)
    return out.getvalue()


def dump(slug, version, path):
    call_command("bundle_dump", slug, version, str(path))
    return path


def refused(path, *messages):
    before = (SkillVersion.objects.count(), SkillFile.objects.count(), FileBlob.objects.count())
    with pytest.raises(CommandError) as error:
        load(path, "--publish")
    for message in messages:
        assert message in str(error.value)
    assert (
        SkillVersion.objects.count(),
        SkillFile.objects.count(),
        FileBlob.objects.count(),
    ) == before
    return str(error.value)


@pytest.fixture
def bundle(tmp_path):
    return bundle_folder(tmp_path / "ledger-tools-1.0.0")


def test_a_long_skill_loads_with_every_supporting_file(bundle):
    out = load(bundle, "--publish")
    assert "2 skills, 3 supporting files" in out
    export = SkillVersion.objects.get(package__slug="ledger-export")
    assert len(export.body) > 30_000
    assert export.version == "1.0.0"  # metadata.version
    assert export.name == "ledger-export"
    assert export.frontmatter["license"] == "Apache-2.0"
    files = {f.path: f for f in export.files.all()}
    assert sorted(files) == [
        "assets/logo.png",
        "references/statement-fields.md",
        "scripts/export.py",
    ]
    script = files["scripts/export.py"]
    assert script.executable and script.media_type == "text/x-python"
    assert not files["references/statement-fields.md"].executable
    logo = files["assets/logo.png"]
    assert logo.media_type == "image/png" and logo.size == len(png_bytes())
    assert bytes(FileBlob.objects.get(pk=logo.sha256).content) == png_bytes()
    rule = "Sending a statement to a customer needs a person's yes."
    assert export.approvals == [{"operation": "send-statement", "rule": rule}]
    size = skill_size(export.body)
    assert size.over_guidance and "past the Agent Skills guidance" in size.warning


def test_at_signs_in_code_are_not_mentions(bundle):
    # `@acme/ledger-client`, @dataclass, @app.route, billing@example.com and an indented
    # @retry are code samples; only @ledger-lookup in prose is a mention, and it resolves.
    load(bundle, "--publish")
    assert SkillVersion.objects.filter(package__slug="ledger-export").exists()


def test_a_mention_in_prose_that_resolves_nowhere_is_still_refused(bundle):
    path = bundle / "skills/ledger-lookup/SKILL.md"
    path.write_text(path.read_text() + "\nThen hand over to @refund-wizard.\n")
    refused(bundle, "@refund-wizard is mentioned by @ledger-lookup")


def test_dump_gives_back_every_byte_and_mode_and_loads_back_to_the_same(bundle, tmp_path):
    load(bundle, "--publish")
    first = dump("ledger-tools", "1.0.0", tmp_path / "dump1")
    skills = bundle / "skills"
    assert tree(first / "skills") == tree(skills)
    # Load the dump under a new version: every skill version is reused, nothing new. The
    # publisher signed 1.0.0, so the renumbered folder goes without that signature and
    # is signed anew when it is published.
    (first / "bundle.signature.json").unlink()
    toml = first / "bundle.toml"
    toml.write_text(toml.read_text().replace('version = "1.0.0"', 'version = "1.0.1"'))
    out = load(first, "--publish")
    assert "0 new skill versions, 2 unchanged skill versions reused" in out
    # Loaded again, it is the version already there: nothing written, so no counts.
    again = load(first, "--publish")
    assert again == "Unchanged: ledger-tools 1.0.1 (published, 2 skills, 3 supporting files)\n"
    second = dump("ledger-tools", "1.0.1", tmp_path / "dump2")
    assert tree(second / "skills") == tree(first / "skills")


def test_a_dumped_folder_passes_the_reference_validator(bundle, tmp_path):
    for skill in ("ledger-export", "ledger-lookup"):
        assert skills_ref.validate(bundle / "skills" / skill) == []
    load(bundle, "--publish")
    out = dump("ledger-tools", "1.0.0", tmp_path / "dump")
    for skill in ("ledger-export", "ledger-lookup"):
        assert skills_ref.validate(out / "skills" / skill) == []


def test_the_demo_catalog_dumps_to_folders_the_validator_accepts(tmp_path):
    demo = Path(__file__).resolve().parents[2] / "catalog" / "demo"
    load(demo / "support-desk-1.0.0", "--publish")
    out = dump("support-desk", "1.0.0", tmp_path / "dump")
    for folder in sorted((out / "skills").iterdir()):
        assert skills_ref.validate(folder) == [], folder.name


def test_client_keys_are_kept_named_and_the_validator_verdict_is_unchanged(bundle, tmp_path):
    path = bundle / "skills/ledger-lookup/SKILL.md"
    text = path.read_text().replace(
        "---\n\n",
        "argument-hint: <account number>\ndisable-model-invocation: true\n"
        "user-invocable: true\nmodel: a-model-name\n---\n\n",
        1,
    )
    path.write_text(text)
    verdict = skills_ref.validate(path.parent)
    assert verdict and "Unexpected fields in frontmatter" in verdict[0]
    out = load(bundle, "--publish")
    assert (
        "notice: skills/ledger-lookup/SKILL.md: kept 'argument-hint', 'disable-model-invocation', "
        "'model', 'user-invocable' as written" in out
    )
    lookup = SkillVersion.objects.get(package__slug="ledger-lookup")
    assert lookup.frontmatter["disable-model-invocation"] is True
    assert lookup.frontmatter["argument-hint"] == "<account number>"
    dumped = dump("ledger-tools", "1.0.0", tmp_path / "dump")
    assert skills_ref.validate(dumped / "skills/ledger-lookup") == verdict


def test_a_bom_and_crlf_load_and_come_back_as_they_went_in(bundle, tmp_path):
    path = bundle / "skills/ledger-lookup/SKILL.md"
    raw = "\ufeff" + path.read_text().replace("\n", "\r\n")
    path.write_bytes(raw.encode("utf-8"))
    toml = bundle / "bundle.toml"
    toml.write_bytes(b"\xef\xbb\xbf" + toml.read_bytes().replace(b"\n", b"\r\n"))
    load(bundle, "--publish")
    lookup = SkillVersion.objects.get(package__slug="ledger-lookup")
    assert "\r" not in lookup.body and lookup.description.startswith("Look up a customer's")
    out = dump("ledger-tools", "1.0.0", tmp_path / "dump")
    assert (out / "skills/ledger-lookup/SKILL.md").read_bytes() == raw.encode("utf-8")


def test_a_multiline_description_of_1024_characters_loads(bundle):
    long = "x" * 900
    path = bundle / "skills/ledger-lookup/SKILL.md"
    path.write_text(path.read_text().replace("Use before writing anything about money.", long))
    load(bundle, "--publish")
    description = SkillVersion.objects.get(package__slug="ledger-lookup").description
    assert len(description) <= 1024 and description.endswith(long)


def test_a_description_over_the_format_limit_is_refused(bundle):
    path = bundle / "skills/ledger-lookup/SKILL.md"
    text = path.read_text()
    start, end = text.index("description:"), text.index("---\n\n")
    path.write_text(text[:start] + "description: " + "d" * 1068 + "\n" + text[end:])
    refused(
        bundle,
        "skills/ledger-lookup/SKILL.md: 'description' is 1,068 characters; "
        "the Agent Skills limit is 1,024",
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ledger-looker", "'name' 'ledger-looker' must equal the skill's folder name"),
        ("Ledger-Lookup", "may hold only lowercase letters, digits and hyphens"),
        ("ledger--lookup", "must not contain two hyphens in a row"),
        ("-ledger-lookup", "must not start or end with a hyphen"),
        ("grösse", "has non-ASCII letters; the Agent Skills format allows them, but Pixie's "
                   "slugs are ASCII"),
    ],
)  # fmt: skip
def test_names_follow_the_agent_skills_rule(bundle, name, message):
    path = bundle / "skills/ledger-lookup/SKILL.md"
    path.write_text(path.read_text().replace("name: ledger-lookup", f"name: {name}"))
    assert "skills/ledger-lookup/SKILL.md: 'name'" in refused(bundle, message)


def test_a_symlink_and_a_pipe_are_refused_naming_the_path(bundle):
    os.symlink("/etc/passwd", bundle / "skills/ledger-export/references/passwd")
    os.mkfifo(bundle / "skills/ledger-export/scripts/pipe")
    refused(
        bundle,
        "skills/ledger-export/references/passwd: is a symbolic link",
        "skills/ledger-export/scripts/pipe: is not a regular file",
    )


def test_the_safety_ceilings_refuse_with_the_limit_named(bundle, settings):
    settings.PIXIE_SKILL_MAX_FILES = 2
    refused(bundle, "skills/ledger-export: holds 3 files; the limit for one skill is 2")
    settings.PIXIE_SKILL_MAX_FILES = 100
    settings.PIXIE_BUNDLE_MAX_BYTES = 10_000
    refused(bundle, "more than 10,000 bytes, the limit for one bundle (PIXIE_BUNDLE_MAX_BYTES)")


def test_clutter_is_ignored_and_named(bundle):
    write(bundle / "skills/ledger-export/.DS_Store", b"\x00\x01junk")
    write(bundle / "skills/ledger-export/scripts/__pycache__/export.cpython-311.pyc", b"\x00")
    write(bundle / "README.md", "About this bundle.")
    out = load(bundle, "--publish")
    assert "notice: skills/ledger-export/.DS_Store: ignored" in out
    assert "notice: skills/ledger-export/scripts/__pycache__/: ignored" in out
    assert "notice: README.md: not part of any skill" in out
    paths = SkillFile.objects.values_list("path", flat=True)
    assert not [p for p in paths if "DS_Store" in p or "pycache" in p]


def test_the_same_bytes_are_stored_once(bundle):
    shutil.copy(bundle / "skills/ledger-export/assets/logo.png", bundle / "skills/ledger-lookup/")
    load(bundle, "--publish")
    assert SkillFile.objects.filter(path__endswith="logo.png").count() == 2
    assert FileBlob.objects.filter(size=len(png_bytes())).count() == 1


def test_a_new_bundle_version_reuses_every_unchanged_skill(bundle, tmp_path):
    load(bundle, "--publish")
    newer = bundle_folder(tmp_path / "ledger-tools-1.1.0", version="1.1.0")
    ledger_lookup_skill(newer / "skills/ledger-lookup", extra_line="\nAlso check credit notes.\n")
    out = load(newer, "--publish")
    assert "1 new skill versions, 1 unchanged skill versions reused" in out
    versions = dict(
        SkillVersion.objects.filter(bundle_entries__bundle_version__version="1.1.0").values_list(
            "package__slug", "version"
        )
    )
    # ledger-export is the 1.0.0 version itself; ledger-lookup takes the bundle's label.
    assert versions == {"ledger-export": "1.0.0", "ledger-lookup": "1.1.0"}


def test_a_change_to_a_supporting_file_alone_is_a_new_skill_version(bundle, tmp_path):
    load(bundle, "--publish")
    newer = bundle_folder(tmp_path / "ledger-tools-1.1.0", version="1.1.0")
    script = newer / "skills/ledger-export/scripts/export.py"
    script.write_text(script.read_text().replace("ok", "ready"))
    # The file says metadata.version 1.0.0, which now names other content.
    message = refused(newer, "@ledger-export 1.0.0 already exists with different content")
    assert "give the changed skill a new version" in message
    skill_md = newer / "skills/ledger-export/SKILL.md"
    skill_md.write_text(skill_md.read_text().replace('version: "1.0.0"', 'version: "1.0.1"'))
    assert "1 new skill versions" in load(newer, "--publish")
    assert SkillVersion.objects.filter(package__slug="ledger-export").count() == 2


LEGACY_SKILL = """---
name: Ledger Lookup
description: Look up a customer's invoices and balance in the ledger.
version: 0.9.0
approvals:
  - operation: read-ledger
    rule: Reading a customer's ledger needs a person's yes.
---

# Ledger lookup

Query the ledger by account number.
"""


def test_a_skill_in_pixies_earlier_shape_still_loads(bundle, capsys):
    write(bundle / "skills/ledger-lookup/SKILL.md", LEGACY_SKILL)
    out = load(bundle, "--publish")
    lookup = SkillVersion.objects.get(package__slug="ledger-lookup")
    assert (lookup.name, lookup.version) == ("Ledger Lookup", "0.9.0")
    assert lookup.approvals == [
        {"operation": "read-ledger", "rule": "Reading a customer's ledger needs a person's yes."}
    ]
    assert "skills/ledger-lookup/SKILL.md: written in Pixie's earlier shape" in out


def test_history_names_each_file_by_digest_and_never_holds_its_bytes(bundle):
    from reversion.models import Version

    load(bundle, "--publish")
    logo = SkillFile.objects.get(path="assets/logo.png")
    (version,) = Version.objects.get_for_object(logo)
    fields = version.field_dict
    assert (fields["path"], fields["blob_id"], fields["executable"]) == (
        "assets/logo.png",
        logo.sha256,
        False,
    )
    from django.contrib.contenttypes.models import ContentType

    blobs = ContentType.objects.get_for_model(FileBlob)
    assert not Version.objects.filter(content_type=blobs).exists()
    assert "content" not in version.serialized_data


def test_an_installed_skill_carries_its_files_and_a_local_edit_keeps_them(
    bundle, acme, owner, django_capture_on_commit_callbacks
):
    from catalog.models import BundleVersion, RevisionFile, WorkspaceSkill
    from catalog.services.workspace_skills import skill_edit
    from tests.installer.flow import install

    load(bundle, "--publish")
    version = BundleVersion.objects.get(bundle__slug="ledger-tools")
    plan = install(acme, version, owner, django_capture_on_commit_callbacks)
    assert plan.status == "applied", plan.error
    skill = WorkspaceSkill.objects.get(workspace=acme, slug="ledger-export")
    catalog_files = sorted(
        SkillFile.objects.filter(skill_version__package__slug="ledger-export").values_list(
            "path", "blob_id", "executable"
        )
    )
    assert sorted(skill.head.files.values_list("path", "blob_id", "executable")) == catalog_files
    edited = skill_edit(skill=skill, actor=owner, body=skill.head.body + "\nOne more line.\n")
    assert sorted(edited.files.values_list("path", "blob_id", "executable")) == catalog_files
    # Copies name the same stored bytes: nothing is stored twice.
    assert FileBlob.objects.count() == len({sha for _, sha, _ in catalog_files})
    assert RevisionFile.objects.filter(revision__skill=skill).count() == 2 * len(catalog_files)


def test_a_local_skill_with_the_same_prose_but_other_files_is_not_reused(
    bundle, tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    from catalog.models import BundleVersion, Plan
    from pixie.installer.plans import plan_create
    from tests.installer.flow import install

    load(bundle, "--publish")
    other = bundle_folder(tmp_path / "ledger-kit", slug="ledger-kit")
    script = other / "skills/ledger-export/scripts/export.py"
    script.write_text(script.read_text().replace("ok", "ready"))
    skill_md = other / "skills/ledger-export/SKILL.md"
    skill_md.write_text(skill_md.read_text().replace('version: "1.0.0"', 'version: "1.0.1"'))
    load(other, "--publish")
    first = install(acme, BundleVersion.objects.get(bundle__slug="ledger-tools"), owner,
                    django_capture_on_commit_callbacks)  # fmt: skip
    assert first.status == "applied", first.error
    plan = plan_create(
        workspace=acme, kind=Plan.Kind.INSTALL, actor=owner,
        bundle_version=BundleVersion.objects.get(bundle__slug="ledger-kit"),
    )  # fmt: skip
    by_type = {}
    for step in plan.steps:
        by_type.setdefault(step["type"], []).append(step)
    # ledger-lookup is the same in both (no files): reused. ledger-export's script differs.
    assert [s["slug"] for s in by_type["skill.reuse"]] == ["ledger-lookup"]
    assert [s["from"] for s in by_type["skill.reslug"]] == ["ledger-export"]


def test_an_install_plan_lists_the_files_each_new_skill_brings(bundle, acme, owner, client):
    from catalog.models import BundleVersion, Plan
    from pixie.installer.plans import plan_create

    load(bundle, "--publish")
    plan = plan_create(
        workspace=acme, kind=Plan.Kind.INSTALL, actor=owner,
        bundle_version=BundleVersion.objects.get(bundle__slug="ledger-tools"),
    )  # fmt: skip
    (export,) = [s for s in plan.steps if s.get("slug") == "ledger-export"]
    assert [(f["path"], f["executable"]) for f in export["files"]] == [
        ("assets/logo.png", False),
        ("references/statement-fields.md", False),
        ("scripts/export.py", True),
    ]
    owner.is_staff = True  # every admin login is staff; the role comes from the membership
    owner.save(update_fields=["is_staff"])
    client.force_login(owner)
    page = client.get(f"/admin/catalog/plan/{plan.pk}/review/").content.decode()
    assert "Supporting files that arrive with it" in page and "scripts/export.py" in page


def test_a_local_skill_without_the_files_of_an_incoming_one_is_not_reused(bundle, acme, owner):
    from catalog.models import BundleVersion, Plan, SkillVersion
    from catalog.services.workspace_skills import skill_create
    from pixie.installer.plans import plan_create

    load(bundle, "--publish")
    export = SkillVersion.objects.get(package__slug="ledger-export")
    # Same name, description and body by hand, but none of the files.
    skill_create(workspace=acme, slug="ledger-export", actor=owner, name=export.name,
                 short_description=export.description, body=export.body)  # fmt: skip
    plan = plan_create(
        workspace=acme, kind=Plan.Kind.INSTALL, actor=owner,
        bundle_version=BundleVersion.objects.get(bundle__slug="ledger-tools"),
    )  # fmt: skip
    assert not [s for s in plan.steps if s["type"] == "skill.reuse"]
    assert [s["from"] for s in plan.steps if s["type"] == "skill.reslug"] == ["ledger-export"]


def test_stored_file_bytes_cannot_be_rewritten(bundle):
    from pixie.core.errors import ImmutableError

    load(bundle, "--publish")
    logo = FileBlob.objects.get(size=len(png_bytes()))
    logo.content = b"other bytes"
    with pytest.raises(ImmutableError):
        logo.save()
    with pytest.raises(ImmutableError):
        FileBlob.objects.filter(pk=logo.pk).update(content=b"other bytes")
    assert bytes(FileBlob.objects.get(pk=logo.pk).content) == png_bytes()


def test_the_size_warning_names_only_the_limit_a_body_passes():
    many_short_lines = "\n".join(f"- step {n}" for n in range(600))
    few_long_lines = "\n\n".join("Reconcile the ledger against the bank feed. " * 60
                                 for _ in range(20))  # fmt: skip
    by_lines, by_tokens = skill_size(many_short_lines), skill_size(few_long_lines)

    assert by_lines.lines > 500 and by_lines.tokens < 5_000
    assert "guidance of 500 lines for SKILL.md" in by_lines.warning
    assert by_tokens.lines < 500 and by_tokens.tokens > 5_000
    assert "guidance of 5,000 tokens for SKILL.md" in by_tokens.warning
    both = skill_size(many_short_lines + "\n" + few_long_lines)
    assert "guidance of 500 lines and 5,000 tokens for SKILL.md" in both.warning
