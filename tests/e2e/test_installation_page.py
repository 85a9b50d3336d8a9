"""The installation page, as its owner reads it after an upgrade: what was installed, by
whom, as names (the catalog's pages are operators'), and the pins an upgrade left behind
with the button that plans their repoint."""

import pytest
from playwright.sync_api import expect

from catalog.models import Installation, Plan
from pixie.installer.plans import plan_approve, plan_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_owner_plans_a_repoint_from_the_installation_page(
    acme, owner, member, agents, demo_catalog, person
):
    for user in (owner, member):
        user.is_staff = True
        user.save()
    for version in ("2.1.0", "2.2.0"):
        plan = plan_create(
            workspace=acme,
            kind="install" if version == "2.1.0" else "upgrade",
            bundle_version=demo_catalog[version],
            actor=owner,
            agents=agents if version == "2.1.0" else (),
        )
        plan_approve(plan=plan, actor=owner)  # autocommit: the task runs at once
    installation = Installation.objects.get()
    url = f"/admin/catalog/installation/{installation.pk}/change/"

    reader = person(member)
    reader.go(url)
    backlog = reader.page.locator("#repoint-backlog")
    expect(backlog).to_contain_text("2 pinned attachments on 2 agents")
    expect(reader.page.get_by_role("button", name="Plan a repoint")).to_have_count(0)
    expect(reader.page.locator("#content-main")).not_to_contain_text("403")

    tab = person(owner)
    tab.go(url)
    main = tab.page.locator("#content-main")
    expect(main.locator(".field-bundle_name")).to_contain_text("Accounts Receivable")
    expect(main.locator(".field-installed")).to_contain_text("owen")
    # The pins read with the installation's facts, above the page's Close.
    below = tab.page.evaluate(
        "() => document.querySelector('.submit-row').getBoundingClientRect().top"
        " - document.querySelector('#repoint-backlog').getBoundingClientRect().bottom"
    )
    assert below > 0
    tab.shot("installation-owner")
    tab.page.get_by_role("button", name="Plan a repoint").click()
    tab.page.wait_for_url("**/review/")
    repoint = Plan.objects.get(kind=Plan.Kind.REPOINT)
    assert tab.page.url.endswith(f"/admin/catalog/plan/{repoint.pk}/review/")
