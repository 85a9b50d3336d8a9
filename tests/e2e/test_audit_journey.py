"""Staff audit in Chromium: an auditor answers "who changed @invoice-chase in Acme, when,
and what did it look like before?" from the admin index through the audit log; an owner
rolls an upgrade back from the installation page."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.core.people.permissions import AUDITORS_GROUP
from pixie.installer.plans import plan_approve, plan_create
from tests.e2e.test_owner_journey import approve_and_watch
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW_LINE = "Never chase an invoice that is under a payment plan."


@pytest.fixture
def installed(acme, owner, demo_catalog):
    owner.is_staff = True
    owner.save()
    install = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    plan_approve(plan=install, actor=owner)  # autocommit: the task runs at once
    return Installation.objects.get(workspace=acme)


def test_an_auditor_finds_who_changed_a_skill_and_compares_it_in_three_clicks(
    installed, owner, person
):
    chase = WorkspaceSkill.objects.get(workspace=installed.workspace, slug="invoice-chase")
    body = chase.head.body.replace("\n\n", f"\n\n{NEW_LINE}\n\n", 1)
    skill_edit(skill=chase, actor=owner, body=body, comment="Payment plans first")
    auditor = make_user("aud", is_staff=True)
    auditor.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    tab = person(auditor)
    page = tab.page
    clicks = 0
    page.get_by_role("link", name="Audit entries").click()
    clicks += 1
    newest = page.locator("#audit-log tbody tr").first
    expect(newest).to_contain_text("Payment plans first")  # why
    expect(newest).to_contain_text(owner.username)  # who
    expect(newest).to_contain_text("Acme")  # where
    expect(page.locator("#audit-chain")).to_be_visible()
    tab.shot("audit-log")
    newest.get_by_role("link", name="@invoice-chase").first.click()
    clicks += 1
    page.get_by_role("link", name="Compare two revisions").click()
    clicks += 1
    main = page.locator("#content-main")
    expect(main.locator("#compare-sides")).to_contain_text("Payment plans first")
    expect(main.locator("table.diff td.new ins").filter(has_text=NEW_LINE)).to_have_count(1)
    assert clicks < 5
    # An auditor changes nothing: no edit or restore is offered.
    expect(page.get_by_role("button", name="Restore revision 1")).to_have_count(0)


def test_an_owner_rolls_back_an_upgrade_from_the_installation_page(
    installed, owner, demo_catalog, person
):
    upgrade = plan_create(
        workspace=installed.workspace, kind="upgrade", bundle_version=demo_catalog["2.2.0"],
        actor=owner,
    )  # fmt: skip
    plan_approve(plan=upgrade, actor=owner)
    tab = person(owner)
    page = tab.page
    tab.go(f"/admin/catalog/installation/{installed.pk}/change/")
    generations = page.locator("#generations")
    expect(generations.locator("#generation-2")).to_contain_text("2.2.0")
    tab.shot("installation-generations")
    page.get_by_role("button", name="Roll back to generation 1").click()
    expect(page.locator("h1")).to_contain_text("roll back Accounts Receivable to generation 1")
    expect(page.locator("#content-main")).to_contain_text("payment-plan")  # what goes
    approve_and_watch(tab)
    rollback = Plan.objects.get(kind="rollback")
    assert rollback.status == Plan.State.APPLIED
    tab.go(f"/admin/catalog/installation/{installed.pk}/change/")
    expect(generations.locator("#generation-3")).to_contain_text("2.1.0")
    expect(generations.locator("#generation-3")).to_contain_text("(now)")
    assert not WorkspaceSkill.objects.filter(
        workspace=installed.workspace, slug="payment-plan", archived_at=None
    ).exists()
