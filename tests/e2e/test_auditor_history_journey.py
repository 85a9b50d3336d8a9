"""An auditor in Chromium reads what one change did: an agent's History, one entry, and
what it changed against the version recorded before (old → new, the prompt as a line
diff, the workspace by its name); then checks the audit log's chains with *Verify now*
and reads the result on the page."""

import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from agents.services import agent_create, agent_update
from pixie.core.models import AuditCheck
from pixie.core.people.permissions import AUDITORS_GROUP
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROMPT = "You chase unpaid invoices.\nBe polite.\nNever threaten.\nSign as Acme."
EDITED = "You chase unpaid invoices.\nBe polite and brief.\nNever threaten.\nSign as Acme."


@pytest.fixture
def auditor(db):
    person = make_user("aud", is_staff=True)
    person.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    return person


@pytest.fixture
def edited_agent(acme, owner):
    agent = agent_create(
        workspace=acme, slug="collections", name="Collections", actor=owner, system_prompt=PROMPT
    )
    agent_update(agent=agent, actor=owner, name="Debt collection", system_prompt=EDITED)
    return agent


def test_an_auditor_reads_what_a_change_did_against_the_version_before(
    edited_agent, auditor, person
):
    tab = person(auditor)
    page = tab.page
    tab.go(f"/admin/agents/agent/{edited_agent.pk}/change/")
    page.get_by_role("link", name="History").click()
    history = page.locator("#change-history")
    expect(history).to_contain_text("renamed Collections to Debt collection")
    # Times as the rest of the admin writes them.
    expect(history.locator("tbody th a").first).to_have_text(
        re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d$")
    )
    history.locator("tr", has_text="renamed Collections").get_by_role("link").click()

    main = page.locator("#content-main")
    expect(main.locator("#compared-with")).to_be_visible()
    changes = main.locator("#recorded-changes")
    expect(changes.locator("tr", has_text="Name")).to_contain_text("Collections → Debt collection")
    prompt = changes.locator("tr", has_text="System prompt")
    expect(prompt.locator("table.diff td.old del")).to_have_text("polite.")
    expect(prompt.locator("table.diff td.new ins")).to_have_text("polite and brief.")
    # What did not change, a click away, the workspace named, not "Workspace (id) 1".
    main.locator("#recorded-unchanged summary").click()
    workspace_row = main.locator("#recorded-fields tr", has_text="Workspace")
    expect(workspace_row).to_contain_text("Acme")
    expect(main).not_to_contain_text("(id)")
    tab.shot("history-recorded-version")

    # The version before is the first: it says so.
    main.locator("#compared-with + p a").click()
    expect(main.locator("#recorded-first")).to_contain_text(
        "This is the first recorded version of Debt collection"
    )
    expect(main.locator("#recorded-fields tr", has_text="Name")).to_contain_text("Collections")


def test_an_auditor_verifies_the_audit_chains_from_the_page(edited_agent, auditor, person):
    tab = person(auditor)
    page = tab.page
    page.get_by_role("link", name="Audit entries").click()
    chain = page.locator("#audit-chain")
    expect(chain).to_contain_text("have not been checked yet")
    page.get_by_role("button", name="Verify now").click()
    expect(page.locator(".messagelist")).to_contain_text("The chains were checked just now")
    expect(chain.locator("#audit-check-result")).to_contain_text("Every digest matched")
    expect(chain.locator("#audit-check-result")).to_contain_text("by aud")
    check = AuditCheck.objects.get()
    assert check.ok and check.requested_by == auditor
    tab.shot("audit-log-verified")
