"""People who may read but not decide: a staff auditor, a member, and a stranger."""

import re

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.installer.plans import plan_approve, plan_create
from tests.factories import make_user, make_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def installed(acme, owner, demo_catalog):
    """2.1.0 applied on Acme (tasks run in-process), one local edit, and an upgrade asked for."""
    install = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    plan_approve(plan=install, actor=owner)  # autocommit: the task runs at once
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\nAlways be kind.")
    upgrade = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    return {"install": install, "upgrade": upgrade, "skill": chase}


def history_of(tab, path):
    tab.go(path + "history/")
    return tab.page.locator("#content-main")


def test_a_staff_auditor_reads_history_and_cannot_decide_or_see_other_workspaces(
    acme, owner, demo_catalog, installed, person
):
    auditor = make_user("audrey", is_staff=True, first_name="Audrey")
    # Reads the catalog (Django's view permissions) and Acme as a member; owns nothing.
    auditor.user_permissions.set(
        Permission.objects.filter(codename__in=["view_bundleversion", "view_bundle"])
    )
    acme.memberships.create(user=auditor, role="member")
    other = make_workspace("globex", owner=make_user("gus"))
    elsewhere = plan_create(
        workspace=other,
        kind="install",
        bundle_version=demo_catalog["2.1.0"],
        actor=other.memberships.get().user,
    )

    tab = person(auditor)
    page = tab.page
    install = installed["install"]
    history = history_of(tab, f"/admin/catalog/plan/{install.pk}/")
    expect(history).to_contain_text(f"Applied plan #{install.pk}")
    tab.shot("history-plan")
    history = history_of(tab, f"/admin/catalog/bundleversion/{demo_catalog['2.1.0'].pk}/")
    expect(history).to_contain_text("ublish")
    tab.shot("history-bundle-version")
    history = history_of(tab, f"/admin/catalog/workspaceskill/{installed['skill'].pk}/")
    expect(history).to_contain_text("owen")
    tab.shot("history-workspace-skill")

    tab.go(f"/admin/catalog/plan/{installed['upgrade'].pk}/review/")
    expect(page.locator("#group-forks")).to_contain_text("@invoice-chase")
    expect(page.get_by_role("button", name="Approve the whole plan")).to_have_count(0)
    expect(page.get_by_role("button", name="Recompute with this choice")).to_have_count(0)

    assert tab.refused_at(f"/admin/catalog/plan/{elsewhere.pk}/review/") == 404
    assert tab.refused_at(f"/admin/catalog/plan/{elsewhere.pk}/history/") == 404
    tab.go("/admin/catalog/plan/")
    expect(page.locator("#result_list")).to_contain_text("Acme")
    expect(page.locator("#result_list")).not_to_contain_text("Globex")


def test_a_member_reads_the_plan_and_a_stranger_gets_404(acme, member, installed, person):
    member.is_staff = True
    member.save()
    upgrade = installed["upgrade"]
    tab = person(member)
    page = tab.page
    tab.go(f"/admin/catalog/plan/{upgrade.pk}/review/")
    expect(page.locator(".plan-banner").first).to_be_visible()
    expect(page.locator("#content-main")).to_contain_text(
        "Only an owner of Acme can approve or reject this plan."
    )
    expect(page.get_by_role("button", name=re.compile("Approve|Reject|Recompute"))).to_have_count(0)
    expect(page.get_by_role("radio")).to_have_count(0)
    tab.shot("plan-member-read-only")

    stranger = make_user("sam", is_staff=True)
    make_workspace("initech", owner=stranger)
    outsider = person(stranger)
    assert outsider.refused_at(f"/admin/catalog/plan/{upgrade.pk}/review/") == 404
    assert outsider.refused_at(f"/admin/catalog/plan/{upgrade.pk}/status/") == 404


def test_an_upgrade_shows_each_changed_skill_side_by_side_with_changed_words_marked(
    acme, owner, demo_catalog, person
):
    owner.is_staff = True
    owner.save()
    install = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    plan_approve(plan=install, actor=owner)
    upgrade = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    tab = person(owner)
    page = tab.page
    tab.go(f"/admin/catalog/plan/{upgrade.pk}/review/")
    expect(page.locator(".plan-banner").first).to_contain_text("changes 1 skill")
    diff = page.locator("#group-skills table.diff")
    expect(diff).to_have_count(1)
    # Within a changed line only the words that changed are marked.
    changed = diff.locator("tr.changed").filter(has_text="Count calendar days from the due date.")
    expect(changed.locator("td.new ins")).to_have_text(
        "If a step falls on a weekend, send it on the next working day."
    )
    expect(changed.locator("td.old del")).to_have_count(0)
    expect(diff.locator("tr.added ins").first).to_be_visible()
    tab.shot("plan-upgrade-diff")
    # The owner can decide with the keyboard alone: Tab to the reason, type, Enter.
    page.get_by_role("button", name="Approve the whole plan").focus()
    for _ in range(5):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "reject-reason":
            break
    assert page.evaluate("document.activeElement.id") == "reject-reason"
    page.keyboard.type("Not before the quarter closes.")
    page.keyboard.press("Enter")
    expect(page.locator(".messagelist")).to_contain_text(f"Plan #{upgrade.pk} rejected.")
    expect(page.locator("#content-main")).to_contain_text(
        "Rejected: Not before the quarter closes."
    )
