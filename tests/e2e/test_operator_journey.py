"""An operator curates the catalog in the admin: draft, refused publish, fix, publish, yank."""

import re

import pytest
from playwright.sync_api import expect

from catalog.models import BundleVersion
from tests.e2e.axe import axe_both_themes
from tests.factories import make_publisher

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def pick_autocomplete(page, field, text):
    """Choose in one of the admin's autocomplete (select2) fields, as a person types."""
    page.locator(f"#id_{field} + .select2").click()
    page.locator(".select2-search__field").fill(text)
    page.locator(".select2-results__option", has_text=text).first.click()


def run_action(page, row_label, action, **fields):
    page.get_by_role("checkbox", name=re.compile(re.escape(row_label))).check()
    page.get_by_label("Action:").select_option(value=action)
    for label, value in fields.items():
        page.get_by_role("textbox", name=label).fill(value)
    page.get_by_role("button", name="Go").click()


def test_operator_drafts_is_refused_fixes_publishes_yanks_and_reads_history(
    operator, demo_catalog, person
):
    make_publisher()
    tab = person(operator, password="operator-pass-1")
    page = tab.page
    messages = page.locator(".messagelist")

    # A new skill package and a draft version whose body mentions a skill nobody has.
    tab.go("/admin/catalog/skillpackage/add/")
    page.get_by_label("Slug").fill("refund-check")
    pick_autocomplete(page, "publisher", "Acme Ops")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(messages).to_contain_text("was added successfully")

    tab.go("/admin/catalog/skillversion/add/")
    pick_autocomplete(page, "package", "refund-check")
    page.get_by_label("Version").fill("1.0.0")
    page.get_by_label("Name").fill("Refund check")
    page.get_by_label("Description").fill("Check a refund against the ledger before promising it.")
    page.get_by_label("Body").fill(
        "Before promising a refund, read @refund-policy and look the payment up "
        "with @query-ledger at ledger.example.com."
    )
    page.get_by_role("button", name="Save", exact=True).click()
    expect(messages).to_contain_text("was added successfully")

    # A bundle version with its skills in order, a host and a credential name.
    tab.go("/admin/catalog/bundleversion/add/")
    pick_autocomplete(page, "bundle", "Accounts Receivable")
    page.get_by_label("Version").fill("3.0.0")
    page.get_by_label("Description").fill("Refunds, checked first.")
    skills = ["ar-ground-rules", "invoice-chase", "take-payment", "apply-credit-note"]
    for n, skill in enumerate([f"{s} 2.1.0" for s in skills] + ["refund-check 1.0.0"]):
        page.get_by_text("Add another Bundle skill").click()
        page.locator(f"#id_skills-{n}-position").fill(str(n + 1))
        options = page.locator(f"#id_skills-{n}-skill_version option", has_text=skill)
        page.locator(f"#id_skills-{n}-skill_version").select_option(
            value=options.first.get_attribute("value")
        )
    page.get_by_text("Add another Bundle host").click()
    page.locator("#id_hosts-0-host").fill("ledger.example.com")
    page.locator("#id_hosts-0-port").fill("443")
    page.locator("#id_hosts-0-purpose").fill("Read payments.")
    page.get_by_text("Add another Bundle credential").click()
    page.locator("#id_credentials-0-name").fill("LEDGER_API_TOKEN")
    page.locator("#id_credentials-0-host").fill("ledger.example.com")
    page.locator("#id_credentials-0-purpose").fill("Read scope.")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(messages).to_contain_text("was added successfully")
    picture = page.locator("#bundle-picture svg")
    expect(picture).to_contain_text("5. @refund-check")
    expect(picture).to_contain_text("key LEDGER_API_TOKEN")
    tab.shot("bundle-version-draft")
    draft = BundleVersion.objects.get(version="3.0.0")

    # Publishing is refused, naming the mention that resolves nowhere.
    tab.go("/admin/catalog/bundleversion/")
    run_action(page, "3.0.0", "publish")
    page.get_by_role("button", name="Yes, publish 1 version").click()
    expect(page.locator(".messagelist .error")).to_have_text(
        "Accounts Receivable 3.0.0 cannot be published: @refund-policy is mentioned by "
        "@refund-check but is neither a skill in this bundle nor a tool"
    )
    tab.shot("bundle-version-publish-refused")
    draft.refresh_from_db()
    assert draft.status == "draft"

    # The operator fixes the draft skill and publishes.
    tab.go("/admin/catalog/skillversion/?q=refund-check")
    page.get_by_role("link", name="refund-check", exact=False).first.click()
    body = page.get_by_label("Body")
    body.fill(body.input_value().replace("@refund-policy", "@ar-ground-rules"))
    page.get_by_role("button", name="Save", exact=True).click()
    tab.go("/admin/catalog/bundleversion/")
    run_action(page, "3.0.0", "publish")
    expect(page.locator("#release-impact")).to_contain_text("3.0.0")
    page.get_by_role("button", name="Yes, publish 1 version").click()
    expect(messages).to_contain_text("Published Accounts Receivable 3.0.0.")

    # An older version is yanked from its own page, with a reason, after reading who runs it.
    older = BundleVersion.objects.get(version="2.1.0")
    tab.go(f"/admin/catalog/bundleversion/{older.pk}/change/")
    page.get_by_role("button", name="Yank…").click()
    expect(page.locator("#release-impact")).to_contain_text("Accounts Receivable 2.1.0")
    axe_both_themes(tab, "bundle-version-yank-confirm")
    page.get_by_role("button", name="Yes, yank 1 version").click()
    expect(page.locator("#release-impact")).to_be_visible()  # the browser asks first
    page.get_by_label("Why it is yanked").fill("Chases invoices under a payment plan.")
    page.get_by_role("button", name="Yes, yank 1 version").click()
    expect(messages).to_contain_text("Yanked Accounts Receivable 2.1.0.")
    assert BundleVersion.objects.get(version="2.1.0").status == "yanked"

    # History names the operator and the comments.
    tab.go(f"/admin/catalog/bundleversion/{draft.pk}/history/")
    history = page.locator("#change-history")
    expect(history).to_contain_text("olivia")
    expect(history).to_contain_text("Published")
    tab.shot("bundle-version-history")
    tab.go(f"/admin/catalog/bundleversion/{draft.pk}/change/")
    expect(page.locator("#bundle-picture svg")).to_contain_text("1. @ar-ground-rules")
    tab.shot("bundle-version-published")
