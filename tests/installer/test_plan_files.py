"""Upgrades of whole skill folders: what changed (body, frontmatter, supporting files) is
what the plan shows, what did not change shows as unchanged, and a fork merges every field.

Bundles are loaded the operator's way (`manage.py bundle_load --publish`) from folders in
the Agent Skills shape; plans go through the owner's path (plan, approve, apply).
"""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from catalog.content_diff import TEXT_DIFF_MAX_BYTES
from catalog.models import BundleVersion, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.core.errors import ValidationFailed
from pixie.installer.plans import plan_create
from tests.catalog.skill_folders import SECTION, TITLES, ledger_export_skill, png_bytes, write
from tests.clients import admin_for
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db

EXPORT_BODY = "# Export\n\nLook the customer up with @ledger-lookup first.\n\nThen export.\n"
LOOKUP_DESCRIPTION = (
    "Look up a customer's invoices, payments and balance in the ledger. Use before writing "
    "anything about money."
)
LOOKUP_BODY = "# Ledger lookup\n\nQuery the ledger by account number; never guess an amount.\n"


def bundle_toml(root: Path, version: str) -> None:
    write(
        root / "bundle.toml",
        f'slug = "ledger-tools"\nname = "Ledger Tools"\nversion = "{version}"\n'
        'description = "Look up and export ledger statements."\n'
        'skills = ["ledger-lookup", "ledger-export"]\n'
        '\n[[hosts]]\nhost = "ledger.example.com"\nport = 443\npurpose = "Read the ledger."\n'
        '\n[[approvals]]\nskill = "ledger-export"\noperation = "send-statement"\n'
        'rule = "Sending a statement to a customer needs a person\'s yes."\n',
    )


def lookup_skill(
    folder: Path, *, description=LOOKUP_DESCRIPTION, body=LOOKUP_BODY, license="MIT"
) -> None:
    write(
        folder / "SKILL.md",
        f"---\nname: ledger-lookup\ndescription: {description}\nlicense: {license}\n---\n\n" + body,
    )


def ledger_bundle(root: Path, version: str, *, export_body=EXPORT_BODY, **lookup) -> Path:
    """Ledger Tools in the Agent Skills shape: a short lookup skill, and an export skill
    with scripts/ (an executable), references/ and a binary asset."""
    folder = root / f"ledger-tools-{version}"
    bundle_toml(folder, version)
    lookup_skill(folder / "skills" / "ledger-lookup", **lookup)
    export = ledger_export_skill(folder / "skills" / "ledger-export", body=export_body)
    # The skill's own version label follows the bundle's; a label is not content.
    text = (export / "SKILL.md").read_text().replace('version: "1.0.0"', f'version: "{version}"')
    write(export / "SKILL.md", text)
    return folder


def publish(folder: Path) -> BundleVersion:
    call_command("bundle_load", str(folder), "--publish")
    version = folder.name.rsplit("-", 1)[-1]
    return BundleVersion.objects.get(bundle__slug="ledger-tools", version=version)


def upgrade(acme, owner, version, **options):
    return plan_create(
        workspace=acme, kind="upgrade", bundle_version=version, actor=owner, **options
    )


def plan_page(user, plan) -> str:
    """The plan page as the owner reads it in the admin."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    client = Client()
    client.force_login(user)
    response = client.get(reverse("admin:catalog_plan_review", args=[plan.pk]))
    assert response.status_code == 200
    return response.content.decode()


def steps_of(plan, kind):
    return [s for s in plan.steps if s["type"] == kind]


def head_files(slug):
    head = WorkspaceSkill.objects.get(slug=slug).head
    return {f.path: (f.blob_id, f.executable) for f in head.files.all()}


def test_an_upgrade_that_changes_one_skill_shows_exactly_one_changed_skill(
    tmp_path, acme, owner, agents, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    second = publish(
        ledger_bundle(tmp_path, "1.1.0", body=LOOKUP_BODY + "\nRound nothing; quote pence.\n")
    )
    install(acme, first, owner, django_capture_on_commit_callbacks, agents)
    # A local edit of the skill the release does not change: base = new, so no fork.
    export = WorkspaceSkill.objects.get(slug="ledger-export")
    skill_edit(skill=export, actor=owner, short_description="Acme's statements, as PDF.")
    revisions_before = {s.slug: s.revisions.count() for s in WorkspaceSkill.objects.all()}

    plan = upgrade(acme, owner, second)

    assert "changes 1 skill;" in plan.summary or plan.summary.endswith("changes 1 skill.")
    assert "fork" not in plan.summary
    (update,) = steps_of(plan, "skill.update")
    assert update["slug"] == "ledger-lookup"
    assert "+Round nothing; quote pence." in update["body_diff"]
    assert update["files"] == []
    (unchanged,) = steps_of(plan, "skill.unchanged")
    assert (unchanged["slug"], unchanged["forked"]) == ("ledger-export", True)
    assert steps_of(plan, "skill.fork") == []
    for step in steps_of(plan, "skill.update"):  # no step with an empty diff
        assert step["body_diff"] or step["files"] or step["frontmatter_diff"]
    # Only the changed skill's pins are named: nothing else is left behind.
    assert {s["slug"] for s in steps_of(plan, "agent.pinned")} == {"ledger-lookup"}

    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
    after = {s.slug: s.revisions.count() for s in WorkspaceSkill.objects.all()}
    assert after == {"ledger-lookup": revisions_before["ledger-lookup"] + 1,
                     "ledger-export": revisions_before["ledger-export"]}  # fmt: skip

    # Planning the next release, which repeats the same content, offers no fork either.
    third = publish(
        ledger_bundle(tmp_path, "1.2.0", body=LOOKUP_BODY + "\nRound nothing; quote pence.\n")
    )
    plan = upgrade(acme, owner, third)
    assert steps_of(plan, "skill.fork") == [] and steps_of(plan, "skill.update") == []
    assert plan.summary.endswith("changes no skills.")


def test_a_change_to_supporting_files_alone_is_a_change_the_plan_shows(
    tmp_path, acme, owner, agents, django_capture_on_commit_callbacks
):
    old = ledger_bundle(tmp_path, "1.0.0")
    export = old / "skills" / "ledger-export"
    write(export / "references" / "retired.md", "# Retired\n\nNo longer used.\n")
    write(export / "references" / "codes.txt", "A" * (TEXT_DIFF_MAX_BYTES + 10) + "\n")
    first = publish(old)
    new = ledger_bundle(tmp_path, "1.1.0")
    export = new / "skills" / "ledger-export"
    fields = (export / "references" / "statement-fields.md").read_text()
    write(export / "references" / "statement-fields.md", fields + "- **Credit notes**: each.\n")
    write(export / "references" / "codes.txt", "B" * (TEXT_DIFF_MAX_BYTES + 10) + "\n")
    write(export / "assets" / "logo.png", png_bytes(8, 8))
    script = (export / "scripts" / "export.py").read_text()
    write(export / "scripts" / "export.py", script, executable=False)
    write(export / "scripts" / "check.sh", "#!/bin/sh\necho ok\n", executable=True)
    second = publish(new)
    install(acme, first, owner, django_capture_on_commit_callbacks, agents)

    plan = upgrade(acme, owner, second)

    assert "changes 1 skill" in plan.summary
    # scripts/check.sh is new and executable (export.py only lost its bit): said, as code.
    assert "Adds no hosts, credentials or approvals; 1 executable file new or changed" in (
        plan.summary
    )
    (update,) = steps_of(plan, "skill.update")
    assert update["slug"] == "ledger-export"
    assert update["body_diff"] == []
    files = {f["path"]: f for f in update["files"]}
    assert {path: f["change"] for path, f in files.items()} == {
        "assets/logo.png": "changed",
        "references/codes.txt": "changed",
        "references/retired.md": "removed",
        "references/statement-fields.md": "changed",
        "scripts/check.sh": "added",
        "scripts/export.py": "changed",
    }
    text = files["references/statement-fields.md"]
    assert text["content"] == "text"
    assert "+- **Credit notes**: each." in text["diff"]
    logo = files["assets/logo.png"]
    assert logo["content"] == "binary" and logo["diff"] == []
    assert logo["old"]["sha256"] != logo["new"]["sha256"]
    assert (logo["old"]["size"], logo["new"]["size"]) == (len(png_bytes()), len(png_bytes(8, 8)))
    assert files["references/codes.txt"]["content"] == "too_long"
    assert (files["scripts/export.py"]["content"], files["scripts/export.py"]["mode"]) == (
        "same",
        "no longer executable",
    )
    added = files["scripts/check.sh"]
    assert (added["mode"], added["content"]) == ("executable", "text")
    assert "+echo ok" in added["diff"]

    page = plan_page(owner, plan)
    for text in [
        "Supporting files",
        "scripts/check.sh",
        "no longer executable",
        "+- **Credit notes**: each.",
        f"sha256 {logo['new']['sha256']}",
        "Binary file: compared by size and digest.",
        "Text too long to show here",
        "SKILL.md body unchanged.",
        "references/retired.md",
    ]:
        assert text in page, text

    response = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert response.status == Plan.State.APPLIED, response.error
    version = second.skills.get(skill_version__package__slug="ledger-export").skill_version
    assert head_files("ledger-export") == {
        f.path: (f.blob_id, f.executable) for f in version.files.all()
    }
    assert head_files("ledger-export")["scripts/export.py"][1] is False


def test_merge_keeps_a_local_name_and_description_and_takes_the_catalogs_body_and_files(
    tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    new = ledger_bundle(
        tmp_path, "1.1.0", body=LOOKUP_BODY + "\nRound nothing; quote pence.\n", license="MIT-0"
    )
    write(new / "skills" / "ledger-lookup" / "references" / "codes.md", "# Codes\n\nA1: paid\n")
    second = publish(new)
    install(acme, first, owner, django_capture_on_commit_callbacks)
    lookup = WorkspaceSkill.objects.get(slug="ledger-lookup")
    skill_edit(
        skill=lookup, actor=owner, name="Acme ledger lookup",
        short_description="Look up Acme's ledger; the finance team's rules apply.",
    )  # fmt: skip

    plan = upgrade(acme, owner, second, fork_choices={"ledger-lookup": "merge"})

    (fork,) = steps_of(plan, "skill.fork")
    assert fork["choice"] == "merge" and fork["conflicts"] == []
    rows = {row["field"]: row for row in fork["fields"]}
    assert rows["name"]["outcome"] == "yours"
    assert rows["name"]["yours"] == "Acme ledger lookup"
    assert rows["description"]["outcome"] == "yours"
    assert rows["description"]["base"] == LOOKUP_DESCRIPTION
    assert (rows["license"]["yours"], rows["license"]["new"], rows["license"]["outcome"]) == (
        "MIT", "MIT-0", "new",
    )  # fmt: skip
    (codes,) = fork["file_merge"]
    assert (codes["path"], codes["base"], codes["yours"], codes["outcome"]) == (
        "references/codes.md", None, None, "new",
    )  # fmt: skip
    assert "changes 1 skill" in plan.summary
    page = plan_page(owner, plan)
    for text in [
        "Fields and files that differ",
        "Acme ledger lookup",
        LOOKUP_DESCRIPTION,
        "references/codes.md",
        "What merging does to the text here",
        "Round nothing; quote pence.",
    ]:
        assert text.replace("'", "&#x27;") in page, text  # fmt: skip

    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
    head = WorkspaceSkill.objects.get(slug="ledger-lookup").head
    assert head.name == "Acme ledger lookup"
    assert head.short_description == "Look up Acme's ledger; the finance team's rules apply."
    assert head.body.endswith("Round nothing; quote pence.")
    assert head.frontmatter["license"] == "MIT-0"  # changed only in the catalog: taken
    assert set(head_files("ledger-lookup")) == {"references/codes.md"}
    assert head.upstream.bundle_entries.filter(bundle_version=second).exists()


def test_a_description_changed_on_both_sides_makes_merge_not_offered_naming_it(
    tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    second = publish(
        ledger_bundle(tmp_path, "1.1.0", description="Look up a customer's ledger entries.")
    )
    install(acme, first, owner, django_capture_on_commit_callbacks)
    lookup = WorkspaceSkill.objects.get(slug="ledger-lookup")
    skill_edit(skill=lookup, actor=owner, short_description="Acme's own ledger lookup.")

    plan = upgrade(acme, owner, second)

    (fork,) = steps_of(plan, "skill.fork")
    assert fork["choices"] == ["keep", "take"]
    assert fork["conflicts"] == ["description"]
    assert "merge is not offered: description" in fork["reason"]
    (row,) = [row for row in fork["fields"] if row["field"] == "description"]
    assert (row["base"], row["yours"], row["new"], row["outcome"]) == (
        LOOKUP_DESCRIPTION, "Acme's own ledger lookup.", "Look up a customer's ledger entries.",
        "conflict",
    )  # fmt: skip
    page = plan_page(owner, plan)
    assert "Merge is not offered: description changed both here and in the catalog" in page
    assert "Acme&#x27;s own ledger lookup." in page
    with pytest.raises(ValidationFailed, match="merge is not offered for @ledger-lookup: desc"):
        upgrade(acme, owner, second, fork_choices={"ledger-lookup": "merge"})
    # Take is still there, and takes the catalog's description.
    plan = upgrade(acme, owner, second, fork_choices={"ledger-lookup": "take"})
    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
    head = WorkspaceSkill.objects.get(slug="ledger-lookup").head
    assert head.short_description == "Look up a customer's ledger entries."


def long_export_body(chars: int = 30_000) -> str:
    parts, code = ["# Export\n\nLook the customer up with @ledger-lookup first.\n\n"], 400
    while sum(map(len, parts)) < chars:
        title, advice = TITLES[code % len(TITLES)]
        parts.append(SECTION.format(code=code, title=title, advice=advice))
        code += 1
    return "".join(parts)


def test_each_skills_size_and_the_bundles_total_are_in_the_plan(tmp_path, acme, owner):
    first = publish(ledger_bundle(tmp_path, "1.0.0", export_body=long_export_body()))

    plan = plan_create(workspace=acme, kind="install", bundle_version=first, actor=owner)

    sizes = {s["slug"]: s["size"] for s in steps_of(plan, "skill.create")}
    assert sizes["ledger-lookup"]["over_guidance"] is False
    assert sizes["ledger-lookup"]["warning"] == ""
    export = sizes["ledger-export"]
    assert export["over_guidance"] is True and export["estimated_tokens"] > 5000
    assert "past the Agent Skills guidance" in export["warning"]
    (total,) = steps_of(plan, "bundle.size")
    assert total["skills"] == 2
    assert total["estimated_tokens"] == sum(s["estimated_tokens"] for s in sizes.values())
    assert total["lines"] == sum(s["lines"] for s in sizes.values())
    assert total["over_guidance"] == ["ledger-export"]
    page = plan_page(owner, plan)
    assert f"about {export['estimated_tokens']:,} tokens" in page
    assert "past the Agent Skills guidance" in page
    assert f"about {total['estimated_tokens']:,} tokens in all" in page


def test_files_that_only_moved_are_moves_and_the_plans_file_diffs_stay_bounded(
    tmp_path, acme, owner, agents, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    new = ledger_bundle(tmp_path, "1.1.0")
    export = new / "skills" / "ledger-export"
    fields = export / "references" / "statement-fields.md"
    write(export / "references" / "fields" / "statement-fields.md", fields.read_text())
    fields.unlink()
    # Three long references, each added whole: together past the plan's 5,000 lines.
    for name in ("ledger-codes", "tax-codes", "region-codes"):
        rows = "".join(f"| {name}-{n:04d} | posted to account {n} |\n" for n in range(2_200))
        write(export / "references" / f"{name}.md", f"# {name}\n\n| code | meaning |\n{rows}")
    second = publish(new)
    install(acme, first, owner, django_capture_on_commit_callbacks, agents)

    plan = upgrade(acme, owner, second)

    (update,) = steps_of(plan, "skill.update")
    files = {f["path"]: f for f in update["files"]}
    moved = files["references/fields/statement-fields.md"]
    assert (moved["change"], moved["from_path"], moved["content"], moved["diff"]) == (
        "moved", "references/statement-fields.md", "same", [],
    )  # fmt: skip
    assert "references/statement-fields.md" not in files  # not also a removal
    long = [files[f"references/{n}.md"] for n in ("ledger-codes", "region-codes", "tax-codes")]
    assert [f["content"] for f in long] == ["text", "text", "not_shown"]
    assert sum(len(f["diff"]) for f in update["files"]) <= 5_000

    page = plan_page(owner, plan)
    assert "from <code>references/statement-fields.md</code>" in page
    assert "moved, content unchanged" in page
    assert "Diff not shown: this page shows 5,000 lines of file diffs in all" in page
    assert "tax-codes-2199" not in page and "region-codes-2199" in page
    api = APIClient()
    api.force_authenticate(owner)
    listed = api.get(f"/api/workspaces/acme/plans/{plan.pk}/").json()
    (step,) = [s for s in listed["steps"] if s["type"] == "skill.update"]
    assert {f["path"]: f["change"] for f in step["files"]}[
        "references/fields/statement-fields.md"
    ] == "moved"

    plan = approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.APPLIED, plan.error
    version = second.skills.get(skill_version__package__slug="ledger-export").skill_version
    assert head_files("ledger-export") == {
        f.path: (f.blob_id, f.executable) for f in version.files.all()
    }


def test_the_plans_skill_page_shows_the_text_each_fork_choice_leaves(
    tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    second = publish(
        ledger_bundle(tmp_path, "1.1.0", body=LOOKUP_BODY + "\nRound nothing; quote pence.\n")
    )
    install(acme, first, owner, django_capture_on_commit_callbacks)
    lookup = WorkspaceSkill.objects.get(slug="ledger-lookup")
    skill_edit(skill=lookup, actor=owner, name="Acme ledger lookup",
               body="# Acme ledger lookup\n\nAsk finance before quoting a balance.\n")  # fmt: skip
    page_of = {}
    for choice in ("keep", "take"):
        plan = upgrade(acme, owner, second, fork_choices={"ledger-lookup": choice})
        url = reverse("admin:catalog_plan_skill", args=[plan.pk, "ledger-lookup"])
        assert f'href="{url}"' in plan_page(owner, plan)  # linked from the fork
        page_of[choice] = admin_for(owner).get(url).content.decode()

    keep, take = page_of["keep"], page_of["take"]
    assert "your own version, kept as you chose (1.1.0 from" in keep
    assert "Ask finance before quoting a balance." in keep and "Round nothing" not in keep
    assert "<h2>Acme ledger lookup</h2>" in keep
    assert "taken in place of your version as you chose" in take
    assert "Round nothing; quote pence." in take and "Ask finance" not in take


def test_the_plans_skill_page_shows_a_merge_with_its_merged_fields(
    tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    second = publish(
        ledger_bundle(tmp_path, "1.1.0", body=LOOKUP_BODY + "\nRound nothing; quote pence.\n")
    )
    install(acme, first, owner, django_capture_on_commit_callbacks)
    lookup = WorkspaceSkill.objects.get(slug="ledger-lookup")
    rest = LOOKUP_BODY.split("\n\n", 1)[1].rstrip()  # the catalog's text under its heading
    skill_edit(skill=lookup, actor=owner, name="Acme ledger lookup",
               body="# Acme ledger lookup\n\n" + rest)  # fmt: skip
    plan = upgrade(acme, owner, second, fork_choices={"ledger-lookup": "merge"})
    (fork,) = steps_of(plan, "skill.fork")
    assert fork["choice"] == "merge", fork["reason"]

    page = (
        admin_for(owner)
        .get(reverse("admin:catalog_plan_skill", args=[plan.pk, "ledger-lookup"]))
        .content.decode()
    )

    assert "the merge of your version and 1.1.0 from" in page
    assert "# Acme ledger lookup" in page and "Round nothing; quote pence." in page
    assert "<h2>Acme ledger lookup</h2>" in page


def test_the_plans_skill_page_of_an_update_reads_the_new_version_and_others_are_404(
    tmp_path, acme, owner, member, django_capture_on_commit_callbacks
):
    first = publish(ledger_bundle(tmp_path, "1.0.0"))
    second = publish(
        ledger_bundle(tmp_path, "1.1.0", body=LOOKUP_BODY + "\nRound nothing; quote pence.\n")
    )
    install(acme, first, owner, django_capture_on_commit_callbacks)
    plan = upgrade(acme, owner, second)
    url = reverse("admin:catalog_plan_skill", args=[plan.pk, "ledger-lookup"])

    assert f'href="{url}"' in plan_page(owner, plan)
    page = admin_for(member).get(url).content.decode()
    assert "1.1.0 from" in page and "replacing 1.0.0" in page
    assert "Round nothing; quote pence." in page
    # ledger-export is unchanged by this plan: it sets no text, so it has no such page.
    unchanged = reverse("admin:catalog_plan_skill", args=[plan.pk, "ledger-export"])
    assert admin_for(member).get(unchanged).status_code == 404
