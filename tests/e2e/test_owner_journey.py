"""A workspace owner installs, edits, upgrades with a fork merge and repoints, in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from agents.models import AgentSkill
from catalog.models import Installation, Plan, WorkspaceSkill
from egress.models import CredentialRequirement

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWN_LINE = "Always copy the account manager."


def ask_for_plan(tab, kind, bundle_version=None, agents=()):
    page = tab.page
    tab.go("/admin/catalog/plan/ask/")
    page.get_by_label("Workspace").select_option(label="Acme")
    page.get_by_label("Kind").select_option(value=kind)
    if bundle_version:
        page.get_by_label("Bundle version").select_option(label=bundle_version)
    if agents:
        page.get_by_label("Agents").select_option(label=list(agents))
    page.get_by_role("button", name="Compute the plan").click()
    page.wait_for_url(re.compile(r"/admin/catalog/plan/\d+/review/$"))
    return Plan.objects.get(pk=int(page.url.rstrip("/").split("/")[-2]))


def approve_and_watch(tab):
    page = tab.page
    page.get_by_role("button", name="Approve the whole plan").click()
    # Applied already when tasks run in-process (the message says so), else on its way.
    expect(page.locator(".messagelist")).to_contain_text(
        re.compile(r"Plan #\d+ approved(; applying it now| and applied)\.")
    )
    # The page polls the plan's status by itself and stops on the outcome.
    expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
    expect(page.locator("#plan-progress")).to_have_count(0)


def test_owner_installs_edits_upgrades_with_a_merge_and_repoints(
    acme, owner, agents, demo_catalog, person, task_worker
):
    owner.is_staff = True
    owner.save()
    tab = person(owner)
    page = tab.page

    with task_worker():
        # Install 2.1.0 on both agents: the plan is read whole before anything changes.
        ask_for_plan(
            tab, "install", "Accounts Receivable 2.1.0 by Pixie (operator)",
            agents=["Collections agent (acme)", "Front desk agent (acme)"],
        )  # fmt: skip
        banner = page.locator(".plan-banner").first
        expect(banner).to_be_visible()
        for group in ("Skills", "Network", "Credentials", "Approval rules", "Agents"):
            expect(page.get_by_role("heading", name=group, exact=True)).to_be_visible()
        expect(page.locator("#group-network")).to_contain_text("ledger.example.com:443")
        expect(page.locator("#group-credentials")).to_contain_text("LEDGER_API_TOKEN")
        expect(page.locator("#group-credentials")).to_contain_text("not confirmed yet")
        tab.shot("plan-install")
        approve_and_watch(tab)
        tab.shot("plan-install-applied")
        assert Installation.objects.get().bundle_version == demo_catalog["2.1.0"]

        # The credential is supplied outside Pixie; the owner confirms it.
        tab.go("/admin/egress/credentialrequirement/")
        page.get_by_role("checkbox", name=re.compile("Select this object")).first.check()
        page.get_by_label("Action:").select_option(value="confirm_supplied")
        page.get_by_role("button", name="Go").click()
        expect(page.locator(".messagelist")).to_contain_text(
            "LEDGER_API_TOKEN confirmed as supplied."
        )
        assert CredentialRequirement.objects.get().confirmed_by == owner

        # A local edit of @invoice-chase makes it a fork.
        chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
        tab.go(f"/admin/catalog/workspaceskill/{chase.pk}/edit/")
        body = page.get_by_label("Body")
        body.fill(body.input_value() + "\n\n" + OWN_LINE)
        page.get_by_role("button", name="Save as a new revision").click()
        expect(page.locator(".messagelist")).to_be_visible()
        chase.refresh_from_db()
        assert OWN_LINE in chase.head.body

        # The upgrade shows the fork with its three choices; the owner picks merge.
        first = ask_for_plan(tab, "upgrade", "Accounts Receivable 2.2.0 by Pixie (operator)")
        fork = page.locator("#group-forks")
        expect(fork).to_contain_text("@invoice-chase")
        for choice in ("Keep my version", "Take the new version", "Merge"):
            expect(fork.get_by_label(choice)).to_be_visible()
        # The choice is part of the approval: another one turns Approve into Recompute,
        # and the recomputed plan is shown again before anything is approved.
        approve = page.get_by_role("button", name="Approve the whole plan")
        fork.get_by_label("Merge").check()
        expect(approve).to_have_count(0)
        page.get_by_role("button", name="Recompute the plan with these choices").click()
        expect(page.locator(".messagelist")).to_contain_text(f"replaces #{first.pk}")
        assert Plan.objects.get(pk=first.pk).status == Plan.State.SUPERSEDED
        assert not Plan.objects.filter(status=Plan.State.APPROVED).exists()
        expect(fork).to_contain_text("choice: merge")
        marked = fork.locator(".fork-diffs ins").all_inner_texts()
        assert any(OWN_LINE.split()[0] in words for words in marked), marked  # words marked
        # The merge, open as it is the choice, reads as what it does to the text here:
        # the catalog's new lines come in (the owner's own line stays, unchanged).
        expect(fork.locator(".merge")).to_contain_text("What merging does to the text here")
        expect(fork.locator(".merge")).to_contain_text("@payment-plan")
        tab.shot("plan-upgrade-fork-merge")
        approve_and_watch(tab)
        chase.refresh_from_db()
        assert OWN_LINE in chase.head.body and "@payment-plan" in chase.head.body
        assert Installation.objects.get().bundle_version == demo_catalog["2.2.0"]
        tab.shot("plan-upgrade-applied")

        # Pins stay where they were; the owner repoints one agent and watches the bar fill.
        collections, front_desk = agents
        before = dict(
            AgentSkill.objects.filter(agent=front_desk).values_list(
                "skill__slug", "pinned_revision"
            )
        )
        ask_for_plan(tab, "repoint", agents=["Collections agent (acme)"])
        expect(page.locator("#group-repoint")).to_contain_text("@invoice-chase")
        page.get_by_role("button", name="Approve the whole plan").click()
        bar = page.locator("#progress-bar")
        expect(bar).to_be_visible()
        expect(page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
        total = bar.get_attribute("max")
        expect(bar).to_have_attribute("value", total)
        expect(page.locator("#progress-text")).to_contain_text(f"{total} / {total}")
        tab.shot("plan-repoint-done")
    moved = AgentSkill.objects.get(agent=collections, skill__slug="invoice-chase")
    assert moved.pinned_revision_id == chase.head_id
    after = dict(
        AgentSkill.objects.filter(agent=front_desk).values_list("skill__slug", "pinned_revision")
    )
    assert after == before  # the agent not chosen keeps its pins

    # The dashboard sums it up: up to date, one credential to confirm, one agent behind.
    tab.go("/admin/pixie/workspace/")
    page.get_by_role("link", name="Dashboard of Acme").click()
    expect(page.locator("#dashboard-installations")).to_contain_text("2.2.0")
    expect(page.locator("#dashboard-installations")).to_contain_text("up to date")
    expect(page.locator("#dashboard-credentials")).to_contain_text("PAYMENTS_API_KEY")
    expect(page.locator("#dashboard-credentials")).not_to_contain_text("LEDGER_API_TOKEN")
    expect(page.locator("#dashboard-agents")).to_contain_text("Front desk agent")
    expect(page.locator("#dashboard-agents")).not_to_contain_text("Collections agent")
    tab.shot("workspace-dashboard")
