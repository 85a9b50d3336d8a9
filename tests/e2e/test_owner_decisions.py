"""Decisions an owner must not miss, in Chromium: after a yank, the home says so to every
reader and links the plan Pixie prepared, whose edited skill waits for a choice (the
recommended one marked) before Approve is offered; a rollback waits the same way, its
columns saying what they are; a second owner required where there is one is warned of,
and the blocked plan says how to unblock it; a bundle's many findings read by rule,
collapsed and filterable, with the decision in view."""

import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services import bundle_version_yank
from catalog.services.workspace_skills import skill_edit
from pixie.installer.plans import plan_approve, plan_create
from tests.catalog.skill_folders import bundle_folder, ledger_lookup_skill
from tests.e2e.axe import axe_both_themes
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWN_LINE = "Always copy the account manager."


def staff(*users):
    for user in users:
        user.is_staff = True
        user.save()


def applied(workspace, kind, version, owner, **kwargs):
    plan = plan_create(
        workspace=workspace, kind=kind, bundle_version=version, actor=owner, **kwargs
    )
    plan_approve(plan=plan, actor=owner)  # autocommit: the task runs at once
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED, plan.error
    return plan


def edit_chase(workspace, owner):
    chase = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\n" + OWN_LINE)


def test_after_a_yank_the_edited_skill_waits_for_the_owners_choice(
    acme, owner, member, agents, demo_catalog, person
):
    staff(owner, member)
    applied(acme, "install", demo_catalog["2.1.0"], owner, agents=agents)
    edit_chase(acme, owner)
    bundle_version_yank(
        bundle_version=demo_catalog["2.1.0"], actor=make_user("opal", is_superuser=True),
        reason="Charges twice",
    )  # fmt: skip
    prepared = Plan.objects.get(status=Plan.State.PROPOSED)

    reader = person(member, start="/")
    installed = reader.page.locator("#dashboard-installations")
    expect(installed).to_contain_text("Yanked: Charges twice")
    expect(installed).to_contain_text(f"Plan #{prepared.pk} waits for an owner's approval")

    tab = person(owner, start="/")
    page = tab.page
    expect(page.locator("#dashboard-installations")).to_contain_text("Yanked: Charges twice")
    expect(page.get_by_role("button", name="Plan the upgrade to 2.2.0")).to_have_count(0)
    page.get_by_role("link", name=f"Plan #{prepared.pk} waits for your approval").click()
    approve = page.locator("#approve")
    expect(approve).to_be_disabled()
    expect(page.locator("#approve-waiting")).to_contain_text(
        "Approving waits for your choice for @invoice-chase"
    )
    choice = page.locator("fieldset.fork-choice")
    expect(choice).to_contain_text("needed before approving")
    expect(choice.get_by_role("radio", checked=True)).to_have_count(0)
    axe_both_themes(tab, "plan-after-yank-waiting")
    choice.locator("label", has_text="(recommended)").get_by_role("radio").check()
    expect(approve).to_be_enabled()
    expect(approve).to_have_value("Recompute the plan with these choices")
    approve.click()
    page.wait_for_url(re.compile(r"/review/$"))
    again = Plan.objects.get(status=Plan.State.PROPOSED)
    assert again.pk != prepared.pk and page.url.endswith(f"/plan/{again.pk}/review/")
    expect(page.locator("#approve")).to_be_enabled()
    page.locator("#approve").click()
    expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
    assert Installation.objects.get().bundle_version == demo_catalog["2.2.0"]


def test_a_rollback_waits_for_a_choice_on_what_pixie_merged_and_says_so(
    acme, owner, demo_catalog, person
):
    staff(owner)
    applied(acme, "install", demo_catalog["2.1.0"], owner)
    edit_chase(acme, owner)
    applied(acme, "upgrade", demo_catalog["2.2.0"], owner, fork_choices={"invoice-chase": "merge"})
    installation = Installation.objects.get()
    tab = person(owner)
    page = tab.page
    tab.go(reverse("admin:catalog_installation_change", args=[installation.pk]))
    page.get_by_role("button", name="Roll back to generation 1").click()
    page.wait_for_url(re.compile(r"/review/$"))
    forks = page.locator("#group-forks")
    expect(forks).to_contain_text("Now, r3 (a merge Pixie made)")
    expect(forks).to_contain_text("Incoming (2.1.0)")
    expect(page.locator("#approve")).to_be_disabled()
    restore = forks.locator("label", has_text="Restore generation 1's text")
    expect(restore).to_contain_text("(recommended)")
    restore.get_by_role("radio").check()
    page.locator("#approve").click()  # recomputed with the choice, to be read again
    page.wait_for_url(re.compile(r"/review/$"))
    page.locator("#approve").click()
    expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    assert OWN_LINE not in chase.head.body
    assert Installation.objects.get().bundle_version == demo_catalog["2.1.0"]


def test_a_rule_nobody_can_satisfy_is_said_and_many_findings_read_by_rule(
    tmp_path, acme, owner, person
):
    staff(owner)
    folder = bundle_folder(tmp_path / "ledger")
    notes = "".join(f"Step {n}. <!-- note {n} -->\n" for n in range(30))
    ledger_lookup_skill(folder / "skills" / "ledger-lookup", extra_line=notes)
    call_command("bundle_load", str(folder), "--publish")

    tab = person(owner)
    page = tab.page
    tab.go(reverse("admin:pixie_workspace_policy", args=[acme.pk]))
    page.get_by_label("A plan that expands reach needs a second owner").select_option("required")
    page.get_by_role("button", name="Save the approval policy").click()
    expect(page.locator("#policy-warning")).to_contain_text(
        "Acme has one owner: no plan that adds a host or a credential can be approved"
    )

    plan = plan_create(
        workspace=acme, kind="install", bundle_version=_ledger_version(), actor=owner
    )
    tab.go(reverse("admin:catalog_plan_review", args=[plan.pk]))
    expect(page.locator("#approve")).to_be_disabled()
    expect(page.locator("#approve-blocked")).to_contain_text("Nobody can now")
    expect(page.locator("#approve-blocked")).to_contain_text("Add an owner on People")
    # The decision stays in view at the top of a long plan.
    box = page.locator("#approve").bounding_box()
    assert box is not None and box["y"] + box["height"] <= page.viewport_size["height"]
    rules = page.locator("details.finding-rule")
    expect(rules).to_have_count(1)
    expect(rules.first).to_contain_text("30 times in 1 skill")
    expect(rules.first.locator("li").first).not_to_be_visible()  # collapsed
    rules.first.locator("summary").click()
    expect(rules.first.locator("li")).to_have_count(30)
    expect(rules.first.locator("li").first).to_be_visible()
    axe_both_themes(tab, "plan-findings-by-rule")
    page.locator("#plan-findings-show").get_by_label(re.compile("warning")).uncheck()
    expect(rules.first).to_be_hidden()


def _ledger_version():
    from catalog.models import BundleVersion

    return BundleVersion.objects.get(bundle__slug="ledger-tools", version="1.0.0")
