"""'Who changed @invoice-chase in Acme, when, and what did it look like before?' answered
in the browser by clicks from the admin index, then an owner restores the earlier text.

Acme installed Accounts Receivable 2.1.0 (revision 1 of @invoice-chase from the catalog)
and its owner edited the body (revision 2, with a comment).
"""

import pytest
from playwright.sync_api import expect

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.installer.plans import plan_approve, plan_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW_LINE = "Never chase an invoice that is under a payment plan."


@pytest.fixture
def edited(acme, owner, member, demo_catalog):
    for user in (owner, member):
        user.is_staff = True
        user.save()
    install = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    plan_approve(plan=install, actor=owner)  # autocommit: the task runs at once
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    body = chase.head.body.replace("\n\n", f"\n\n{NEW_LINE}\n\n", 1)
    skill_edit(skill=chase, actor=owner, body=body, comment="Payment plans first")
    return chase


def test_a_member_finds_who_changed_a_skill_and_what_it_said_before_in_three_clicks(
    edited, member, person
):
    tab = person(member)
    page = tab.page
    clicks = 0
    page.get_by_role("link", name="Workspace skills").first.click()
    clicks += 1
    page.get_by_role("link", name="@invoice-chase").click()
    clicks += 1
    revisions = page.locator(".inline-group")
    expect(revisions).to_contain_text("Payment plans first")  # who, when and why, listed
    expect(revisions).to_contain_text("owen")
    page.get_by_role("link", name="Compare two revisions").click()
    clicks += 1
    main = page.locator("#content-main")
    expect(main.locator("#compare-sides")).to_contain_text("Local edit")
    expect(main.locator("#compare-sides")).to_contain_text("Payment plans first")
    expect(main.locator("table.diff td.new ins").filter(has_text=NEW_LINE)).to_have_count(1)
    expect(main.locator("table.diff td.old").filter(has_text=NEW_LINE)).to_have_count(0)
    tab.shot("history-compare-revisions")
    assert clicks < 5
    # What it looked like before, whole, one click further.
    page.get_by_role("link", name="r1", exact=True).click()
    expect(main).to_contain_text("From the catalog as published")
    expect(main).not_to_contain_text(NEW_LINE)
    expect(page.get_by_role("button", name="Restore revision 1")).to_have_count(0)


def test_an_owner_restores_the_earlier_text_and_the_history_says_so(edited, owner, person):
    tab = person(owner)
    page = tab.page
    tab.go(f"/admin/catalog/workspaceskill/{edited.pk}/revision/1/")
    page.get_by_role("button", name="Restore revision 1").click()
    expect(page.locator(".messagelist")).to_contain_text(
        "@invoice-chase revision 1 is restored as revision 3."
    )
    expect(page.locator(".inline-group")).to_contain_text("Restored @invoice-chase revision 1")
    page.get_by_role("link", name="History").click()
    expect(page.locator("#change-history")).to_contain_text("Restored @invoice-chase revision 1")
    tab.shot("history-restored")
