"""Ann picks Beta from the workspaces this server lists and shares a skill with it; Bob,
who never added Alpha, reviews it in his inbox, where the server says who sent it (a
workspace here: no fingerprint to compare), adds Alpha in one click, and imports it, in
Chromium."""

import pytest
from playwright.sync_api import expect

from catalog.models import WorkspaceSkill
from pixie.sharing.services import directory_listing_set
from tests.e2e.axe import axe_both_themes
from tests.factories import make_user, make_workspace
from tests.sharing.conftest import BETA_MEETING_PREP, DAILY_BRIEF_BODY, add_skill

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_shared_skill_is_reviewed_and_imported_with_a_rename(person):
    ann, bob = make_user("ann", is_staff=True), make_user("bob", is_staff=True)
    alpha, beta = make_workspace("alpha", owner=ann), make_workspace("beta", owner=bob)
    add_skill(alpha, ann, "meeting-prep", "List the attendees and the open questions.")
    daily_brief = add_skill(
        alpha, ann, "daily-brief", DAILY_BRIEF_BODY, short="A one-page brief of the day."
    )
    add_skill(beta, bob, "meeting-prep", BETA_MEETING_PREP)
    directory_listing_set(workspace=beta, listed=True, actor=bob)  # Bob's choice

    # Ann adds Beta, picked from the workspaces this server lists (no slug to type).
    ann_tab = person(ann)
    page = ann_tab.page
    ann_tab.go("/admin/pixie/contact/add-local/")
    page.get_by_label("Their workspace").select_option(label="Beta (beta)")
    page.get_by_role("button", name="Add contact").click()
    expect(page.locator(".messagelist")).to_contain_text("Beta is now one of Alpha's contacts.")

    # Ann shares @daily-brief from its page; @meeting-prep travels with it.
    ann_tab.go(f"/admin/catalog/workspaceskill/{daily_brief.pk}/change/")
    page.get_by_role("link", name="Share with a contact").click()
    expect(page.locator("#content-main")).to_contain_text("Travels: @daily-brief, @meeting-prep")
    page.get_by_label("Beta").check()
    ann_tab.shot("share-picker")
    page.get_by_role("button", name="Share").click()
    expect(page.locator("#content-main")).to_contain_text("You shared a skill")

    # Bob sees a card in his inbox, reviews every word, and imports.
    bob_tab = person(bob)
    page = bob_tab.page
    bob_tab.go("/admin/pixie/message/?workspace=beta")
    expect(page.locator("#content-main")).to_contain_text(
        "From Alpha (alpha), a workspace on this server, not one of your contacts yet"
    )
    expect(page.locator("#content-main")).to_contain_text("+ 1 linked skill")
    page.get_by_role("link", name="Review", exact=True).click()
    # Alpha is not one of Bob's contacts, but the server knows it: no fingerprint to
    # compare (that is for a sender on another server); one click adds it.
    expect(page.locator("#share-sender")).to_contain_text("it knows who sent it")
    adding = page.locator("#add-sender")
    expect(adding).to_contain_text("it is a workspace of this server")
    expect(adding.get_by_role("checkbox")).to_have_count(0)
    expect(page.get_by_role("button", name="Import")).to_have_count(0)
    axe_both_themes(bob_tab, "share-review-sender-here")
    adding.get_by_role("button", name="Add Alpha as a contact").click()
    expect(page.locator(".messagelist")).to_contain_text("Alpha is now one of Beta's contacts.")
    expect(page.locator("#share-sender")).to_contain_text("From Alpha")
    bob_tab.go("/admin/pixie/message/?workspace=beta")
    expect(page.locator("#content-main")).to_contain_text("From Alpha")
    bob_tab.shot("share-inbox")
    page.get_by_role("link", name="Review & import").click()
    unresolved = page.locator(".pixie-unresolved")
    expect(unresolved).to_contain_text("References not available here: @weather-report.")
    # Marked as the admin marks a warning (--message-warning-bg), legible in either theme.
    assert unresolved.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 255, 204)"
    expect(page.locator("#content-main")).to_contain_text("@meeting-prep — Meeting Prep")
    bob_tab.shot("share-review")
    # The summary opens the page, with Import at the top: no scrolling past every word.
    summary = page.locator("#share-summary")
    expect(summary).to_contain_text("it would arrive as @meeting-prep-2")
    summary.get_by_role("button", name="Import").click()
    expect(page.locator("#content-main")).to_contain_text(
        "@meeting-prep was taken — imported as @meeting-prep-2."
    )
    bob_tab.shot("share-summary")

    skills = {
        s.slug: s for s in WorkspaceSkill.objects.filter(workspace=beta).select_related("head")
    }
    assert skills["meeting-prep"].head.body == BETA_MEETING_PREP
    assert "run @meeting-prep-2 for each meeting" in skills["daily-brief"].head.body
