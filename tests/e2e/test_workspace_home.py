"""From login to an approved install and to an approved upgrade with a merge, from the
workspace home, in Chromium, counting the clicks; the home read by a member offers
nothing; both themes pass axe; a plan approved with the keyboard alone."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from agents.selectors import pins_behind
from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from tests.e2e.axe import axe_both_themes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWN_LINE = "Always copy the account manager."


def test_an_owner_installs_then_upgrades_with_a_merge_from_the_workspace_home(
    acme, owner, member, agents, demo_catalog, person, task_worker
):
    for user in (owner, member):
        user.is_staff = True
        user.save()
    # The owner opens the site ("/", also the admin's View site) and logs in: that click
    # is the first, and it lands on the workspace home.
    tab = person(owner, start="/")
    page = tab.page
    clicks = 1
    with task_worker():
        assert page.url == tab.base + reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
        expect(page.locator("#dashboard-catalog")).to_contain_text("Accounts Receivable")
        axe_both_themes(tab, "workspace-home")
        page.get_by_role("link", name="Install Accounts Receivable 2.2.0").click()
        clicks += 1
        # Every agent is ticked, pinned, and what pinning means is said; the owner lets
        # the front desk follow the latest instead (a choice, not a click of the journey).
        expect(page.locator("h1")).to_have_text("Install Accounts Receivable 2.2.0 in Acme")
        expect(page.locator("#install-pinning")).to_contain_text("only when you repoint it")
        for agent in agents:
            expect(page.get_by_label(agent.name, exact=True)).to_be_checked()
        axe_both_themes(tab, "workspace-install")
        page.get_by_label("How Front desk agent uses them").select_option(
            label="Follows the latest"
        )
        page.get_by_role("button", name="Compute the plan").click()
        clicks += 1
        expect(page.locator("h1")).to_contain_text("install Accounts Receivable 2.2.0")
        agents_group = page.locator("#group-agents")
        expect(agents_group).to_contain_text("Collections agent: ")
        expect(agents_group).to_contain_text("(pinned to these revisions)")
        expect(agents_group).to_contain_text("(following the latest)")
        page.get_by_role("button", name="Approve the whole plan").click()
        clicks += 1
        expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
        assert Installation.objects.get().bundle_version == demo_catalog["2.2.0"]
        install_clicks = clicks

        # An edit reaches the agent that follows; the pinned one's composed prompt says
        # it is behind, and by how much.
        chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
        skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\n" + OWN_LINE)
        collections, front_desk = agents
        tab.go(reverse("admin:agents_agent_prompt", args=[collections.pk]))
        expect(page.locator("#content-main")).to_contain_text("pinned behind the latest (r1 of r2)")
        expect(page.locator("#content-main")).not_to_contain_text(OWN_LINE)
        tab.go(reverse("admin:agents_agent_prompt", args=[front_desk.pk]))
        expect(page.locator("#content-main")).to_contain_text(OWN_LINE)

        tab.go("/")
        expect(page.locator("#dashboard-installations")).to_contain_text("up to date")
    assert install_clicks <= 4, install_clicks  # login, Install, Compute, Approve

    # A member reads the same home and is offered no action.
    reader = person(member)
    reader.go("/")
    expect(reader.page.locator("#dashboard-catalog")).to_contain_text("installed 2.2.0")
    expect(reader.page.locator("#content-main").get_by_role("button")).to_have_count(0)


def test_an_owner_upgrades_with_a_merge_in_five_clicks(
    acme, owner, agents, demo_catalog, person, task_worker, django_capture_on_commit_callbacks
):
    import time

    from tests.installer.flow import install

    owner.is_staff = True
    owner.save()
    with task_worker():
        # 2.1.0 installed, applied by the worker (on PostgreSQL and Redis, a real one).
        plan = install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
                       agents)  # fmt: skip
        deadline = time.monotonic() + 60
        while plan.status != Plan.State.APPLIED and time.monotonic() < deadline:
            time.sleep(0.2)
            plan.refresh_from_db()
        assert plan.status == Plan.State.APPLIED, plan.error
        chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
        skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\n" + OWN_LINE)
        tab = person(owner, start="/")  # opens the site and logs in: lands on the home
        page = tab.page
        clicks = 1  # the login
        page.get_by_role("button", name="Plan the upgrade to 2.2.0").click()
        clicks += 1
        fork = page.locator("#group-forks")
        expect(fork).to_contain_text("@invoice-chase")
        fork.get_by_label("Merge").check()
        clicks += 1
        page.get_by_role("button", name="Recompute the plan with these choices").click()
        clicks += 1
        expect(fork).to_contain_text("choice: merge")
        expect(page.locator("#group-agents")).to_contain_text("gains")
        page.get_by_role("button", name="Approve the whole plan").click()
        clicks += 1
        expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
        page.reload()  # the status polls by itself; the timeline is drawn with the page
        expect(page.locator("#plan-timeline")).to_contain_text("Applied")
        axe_both_themes(tab, "plan-upgrade-applied")
        upgrade_clicks = clicks
        # The pinned agents are behind: the applied plan says so at its top, one step.
        expect(page.locator("#repoint-backlog")).to_contain_text("pinned attachment")
        page.get_by_role("button", name="Repoint these agents").click()
        clicks += 1
        page.get_by_role("button", name="Approve the whole plan").click()
        clicks += 1
        expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
    chase.refresh_from_db()
    assert OWN_LINE in chase.head.body and "@payment-plan" in chase.head.body
    assert upgrade_clicks <= 5, upgrade_clicks
    # Login, Plan the upgrade, Merge, Recompute, Approve; Repoint these agents, Approve.
    assert clicks <= 7, clicks
    assert not pins_behind(acme).exists()


def test_an_owner_approves_a_plan_with_the_keyboard_alone(
    acme, owner, demo_catalog, person, task_worker
):
    """From the top of the plan page, Tab reaches Approve and Enter approves it."""
    from pixie.installer.plans import plan_create

    owner.is_staff = True
    owner.save()
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    with task_worker():
        tab = person(owner)
        page = tab.page
        tab.go(f"/admin/catalog/plan/{plan.pk}/review/")
        presses = 0
        while page.evaluate("document.activeElement.id") != "approve" and presses < 300:
            page.keyboard.press("Tab")
            presses += 1
        assert page.evaluate("document.activeElement.id") == "approve", presses
        page.keyboard.press("Enter")
        expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED and plan.decided_by == owner
