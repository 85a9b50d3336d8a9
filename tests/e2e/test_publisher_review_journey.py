"""Globex promotes a bundle; Acme does not see it until the operator approves it in the
review queue; a refusal's reason reaches Globex (issue #13, section 3, in a browser)."""

import pytest
from playwright.sync_api import expect

from agents.models import Agent
from agents.services import agent_skill_attach
from catalog.services.workspace_skills import skill_create
from tests.factories import make_user, make_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def promote(tab, agent, slug, name, version):
    page = tab.page
    tab.go(f"/admin/agents/agent/{agent.pk}/promote/")
    page.get_by_label("Slug").fill(slug)
    page.get_by_label("Name").fill(name)
    page.get_by_label("Version").fill(version)
    page.get_by_role("button", name="Publish the bundle").click()


def offered(tab) -> list[str]:
    tab.go("/admin/catalog/plan/ask/")
    return tab.page.locator("#id_bundle_version option").all_inner_texts()


def test_a_workspaces_bundle_waits_for_the_operator_and_the_refusal_reaches_it(
    operator, demo_catalog, person
):
    gina, owen = make_user("gina", is_staff=True), make_user("owen", is_staff=True)
    globex, _acme = make_workspace("globex", owner=gina), make_workspace("acme", owner=owen)
    skill = skill_create(
        workspace=globex, slug="dun-politely", name="Dun politely",
        short_description="Chase an overdue invoice.",
        body="Write to the customer about the overdue invoice, politely.", actor=gina,
    )  # fmt: skip
    agent = Agent.objects.create(workspace=globex, slug="dunner", name="Dunner")
    agent_skill_attach(agent=agent, skill=skill, actor=gina)

    # The impostor's name is refused on the page, with the reason.
    globex_tab = person(gina)
    promote(globex_tab, agent, "ar-pro", "Accounts Receivable", "9.9.9")
    expect(globex_tab.page.locator(".errornote, .errorlist").first).to_contain_text(
        "is the name of Pixie's bundle accounts-receivable"
    )
    # A bundle of its own is published, for Globex alone.
    promote(globex_tab, agent, "globex-ar", "Globex receivables", "1.0.0")
    expect(globex_tab.page.locator(".messagelist")).to_contain_text(
        "Only Globex sees it until an operator approves it"
    )

    acme_tab = person(owen)
    options = offered(acme_tab)
    assert "Accounts Receivable 2.2.0 by Pixie (operator)" in options
    assert not [o for o in options if "Globex" in o]

    # The operator reads the queue, refuses with a reason.
    operator_tab = person(operator, password="operator-pass-1")
    page = operator_tab.page
    operator_tab.go("/admin/catalog/bundleversion/")
    page.get_by_role("link", name="Review queue (1)").click()
    row = page.locator('tr[data-bundle="globex-ar"]')
    expect(row).to_contain_text("Globex (workspace)")
    operator_tab.shot("catalog-review-queue")
    # No decision in the queue: each version opens as its review, the decision at its foot.
    expect(row.get_by_role("button")).to_have_count(0)
    row.get_by_role("link", name="Review 1.0.0").click()
    expect(page.locator("#changes")).to_contain_text("The first version of Globex receivables")
    expect(page.locator("#text-dun-politely")).to_contain_text("politely")
    page.get_by_label("Reason for refusing").fill("Sends the ledger token to a third host.")
    page.get_by_role("button", name="Refuse").click()
    expect(page.locator(".messagelist")).to_contain_text("Globex reads your reason")
    expect(page.locator("#content-main")).to_contain_text("Nothing awaits review.")

    assert [o for o in offered(globex_tab) if "Globex" in o] == [
        "Globex receivables 1.0.0 by Globex (workspace) "
        "[refused for the catalog: Sends the ledger token to a third host.]"
    ]

    # The next version is approved, and Acme is offered it with its publisher named.
    promote(globex_tab, agent, "globex-ar", "Globex receivables", "1.1.0")
    operator_tab.go("/admin/catalog/bundleversion/review/")
    page.locator('tr[data-version="1.1.0"]').get_by_role("link", name="Review 1.1.0").click()
    expect(page.locator("#change-summary")).to_contain_text("Against Globex receivables 1.0.0")
    page.get_by_role("button", name="Approve 1.1.0 for the catalog").click()
    expect(page.locator(".messagelist")).to_contain_text("every workspace sees it now")
    assert "Globex receivables 1.1.0 by Globex (workspace)" in offered(acme_tab)
