"""The bundle versions list at 1,280 px, as an operator and a member read it, in both themes:
every column inside the window, each version's status a pill, a yanked version's reason
in a row of its own under it."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from catalog.models import Bundle, BundleVersion, CatalogReview, Publisher, Status
from catalog.roles import operators_group_ensure
from catalog.services.publishing import bundle_version_yank
from tests.e2e.axe import THEMES, axe_both_themes, show_theme
from tests.factories import make_bundle_version, make_skill_version, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = (
    "The invoice-chase skill wrote to customers who had already paid: it read the ledger "
    "after writing, not before. Upgrade to 2.2.0, which reads the ledger first, and tell "
    "anyone who was chased by mistake that their payment arrived on time."
)
LONG_NAME = "QuarterlyCloseAndReconciliationAssistantForMultiEntityGroupsAcrossRegions"


@pytest.fixture
def versions(demo_catalog):
    """The demo's two versions, 2.1.0 yanked; a draft whose names have no space to wrap at;
    one version awaiting review and one refused."""
    bundle_version_yank(
        bundle_version=demo_catalog["2.1.0"], actor=make_user("yara"), reason=REASON
    )
    draft = make_bundle_version(
        "quarterly-close", version="10.12.3-rc.1+build.20261207", skills=[make_skill_version()]
    )
    publisher = Publisher.objects.create(
        slug="globex-finance", name="GlobexInternationalFinanceOperationsAndTreasury"
    )
    Bundle.objects.filter(pk=draft.bundle_id).update(name=LONG_NAME, publisher=publisher)
    held = {}
    for version, review in (("3.0.0", CatalogReview.PENDING), ("3.0.1", CatalogReview.REFUSED)):
        held[review] = make_bundle_version("payables", version=version)
        BundleVersion.objects.filter(pk=held[review].pk).update(
            status=Status.PUBLISHED, published_at=timezone.now(), catalog_review=review
        )
    return {"yanked": demo_catalog["2.1.0"], "draft": draft, **held}


def overflowing(page) -> list[str]:
    """What of the results table reaches past the window or is clipped by the list's box."""
    return page.evaluate(
        """() => {
            const box = document.querySelector("#changelist-form .results");
            const edge = Math.min(
                document.documentElement.clientWidth, box.getBoundingClientRect().right);
            const past = [...document.querySelectorAll("#result_list, #result_list *")]
                .filter(e => e.getBoundingClientRect().right > edge + 0.5)
                .map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.trim()
                    .slice(0, 40)}`);
            if (box.scrollWidth > box.clientWidth) past.push(`scrolls ${box.scrollWidth}px`);
            return past;
        }"""
    )


def read_the_list(tab, where, versions, *, shown):
    page = tab.page
    tab.go("/admin/catalog/bundleversion/")
    rows = page.locator("#result_list tbody tr")
    yanked_row = rows.filter(has=page.get_by_role("link", name="Accounts Receivable")).filter(
        has_text="2.1.0"
    )
    for theme in THEMES:
        show_theme(page, theme)
        assert overflowing(page) == [], f"{where} [{theme}]"
        expect(yanked_row.locator(".status-pill")).to_have_text("Yanked")
        # The reason is the next row, across the table, not a column of the version's row.
        reason = yanked_row.locator("xpath=following-sibling::tr[1]")
        expect(reason).to_have_class(re.compile(r"\byank-reason\b"))
        # ...striped as its version's row.
        stripe = yanked_row.evaluate("tr => tr.className.match(/version-(odd|even)/)[0]")
        expect(reason).to_have_class(re.compile(rf"\b{stripe}\b"))
        expect(reason).to_contain_text(f"Yanked because: {REASON}")
        expect(yanked_row).not_to_contain_text(REASON)
        width = reason.locator("td[id^=yank-reason]").evaluate("td => td.offsetWidth")
        assert width > page.locator("#result_list").evaluate("t => t.offsetWidth") * 0.85
    for words, pills in shown.items():
        row = rows.filter(has_text=words)
        expect(row.locator(".status-pill")).to_have_text(pills)
    axe_both_themes(tab, where)


def test_an_operator_reads_every_version_at_1280_px_in_both_themes(versions, person):
    operator = make_user("opal", is_staff=True)
    operator.groups.add(operators_group_ensure())
    tab = person(operator)
    shown = {
        "2.2.0": ["Published"],
        LONG_NAME: ["Draft"],
        "3.0.0": ["Published", "Awaiting review"],
        "3.0.1": ["Published", "Refused for the catalog"],
    }
    read_the_list(tab, "bundle-versions-operator", versions, shown=shown)
    # A name with no space in it wraps inside its column.
    draft = tab.page.locator("#result_list").get_by_role("link", name=LONG_NAME)
    assert draft.evaluate("a => a.getClientRects().length") > 1


def test_a_member_reads_the_versions_their_workspace_may_install(acme, member, versions, person):
    member.is_staff = True  # a workspace's people sign in through the admin's login
    member.save(update_fields=["is_staff"])
    tab = person(member)
    read_the_list(tab, "bundle-versions-member", versions, shown={"2.2.0": ["Published"]})
    # Only what the workspace may install: no draft, nothing held back from the catalog.
    results = tab.page.locator("#result_list")
    expect(results).not_to_contain_text(LONG_NAME)
    expect(results).not_to_contain_text("Awaiting review")
    expect(tab.page.locator("#result_list tbody tr.yank-reason")).to_have_count(1)
