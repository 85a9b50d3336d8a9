"""Sharing a skill through the admin, click by click, as the two owners see it."""

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from catalog.models import WorkspaceSkill
from pixie.sharing import services as sharing
from pixie.sharing.models import Contact, Message, ShareImport
from tests.factories import add_local_contact, make_user, make_workspace

from .conftest import BETA_MEETING_PREP, DAILY_BRIEF_BODY, add_skill, skills_of
from .pages import browser_for, link, submit, text_of

pytestmark = pytest.mark.django_db

FOOTER = (
    "The skill and every skill it references travel end-to-end encrypted as a message. "
    "They'll review it before anything is added on their side."
)


def test_ann_shares_daily_brief_and_bob_reviews_and_imports_it_with_a_rename(
    ann,
    bob,
    alpha,
    beta,
    daily_brief,
    beta_meeting_prep,
    contacts,
    django_capture_on_commit_callbacks,
):
    # Ann opens her skill and picks "Share with a contact".
    ann_browser = browser_for(ann)
    skill_page = ann_browser.get(
        reverse("admin:catalog_workspaceskill_change", args=[daily_brief.pk])
    )
    picker = ann_browser.get(link(skill_page, "Share with a contact"))
    assert picker.status_code == 200
    page = text_of(picker)
    assert FOOTER in page
    assert "Beta" in page
    assert "Travels: @daily-brief, @meeting-prep" in page

    # She picks Beta; the message is delivered once her request commits.
    with django_capture_on_commit_callbacks(execute=True):
        sent = submit(
            ann_browser,
            picker,
            picker.request["PATH_INFO"],
            {"contact": contacts["beta_at_alpha"].pk},
        )
    assert sent.status_code == 302
    outbox = ann_browser.get(sent["Location"])
    assert "You shared a skill" in text_of(outbox)
    assert "Daily Brief" in text_of(outbox)
    assert "Review & import" not in text_of(outbox)  # nothing to import from yourself

    # Bob's inbox shows it as a card.
    bob_browser = browser_for(bob)
    inbox = bob_browser.get(reverse("admin:pixie_message_changelist") + "?workspace=beta")
    card = text_of(inbox)
    assert "From Alpha" in card
    assert "Daily Brief" in card and "A one-page brief of the day." in card
    assert "+ 1 linked skill" in card
    assert "You shared a skill" not in card

    # The review shows every word, and warns about what will not resolve here.
    review = bob_browser.get(link(inbox, "Review & import"))
    page = text_of(review)
    assert "@daily-brief — Daily Brief" in page
    assert "@meeting-prep — Meeting Prep" in page
    assert DAILY_BRIEF_BODY in page
    # When it was sent reads one way, without a doubled stop after "p.m.".
    assert re.search(r"From Alpha, sent \d{4}-\d\d-\d\d \d\d:\d\d\.", page)
    assert ".." not in page.replace("...", "")
    assert re.search(
        r'<p class="pixie-unresolved"[^>]*>References not available here: @weather-report\. '
        r"Those steps will be skipped\.</p>",
        page,
    )
    assert 'value="Import"' in page and "Cancel" in page
    # A summary opens the page: who, how many, what arrives renamed, with Import at the top.
    html = review.content.decode()
    summary = html[html.index('id="share-summary"') : html.index("pixie-item")]
    assert "From Alpha" in summary and "2 skills: @daily-brief, @meeting-prep." in summary
    assert "@meeting-prep is taken here: it would arrive as @meeting-prep-2" in summary
    assert "Not available here: @weather-report" in summary
    assert 'id="share-import-top"' in summary
    assert not skills_of(beta).get("daily-brief")  # reading the preview imported nothing

    imported = submit(
        bob_browser, review, reverse("admin:pixie_message_import", args=[_inbox_pk(beta)])
    )
    summary = bob_browser.get(imported["Location"])
    page = text_of(summary)
    assert "@meeting-prep was taken — imported as @meeting-prep-2." in page
    assert "@daily-brief — Daily Brief" in page and "@meeting-prep-2 — Meeting Prep" in page
    assert "Imported skills are off the planner's menu until you promote them under" in page
    assert "Beta's skills" in page
    # The link opens the skills list through its workspace filter, selected in the sidebar.
    assert "/admin/catalog/workspaceskill/?workspace=beta&amp;advertised__exact=0" in (
        summary.content.decode()
    )

    skills = skills_of(beta)
    assert skills["meeting-prep"].head.body == BETA_MEETING_PREP  # Bob's own is untouched
    assert skills["meeting-prep"].head.number == 1
    assert "run @meeting-prep-2 for each meeting" in skills["daily-brief"].head.body
    for slug in ("daily-brief", "meeting-prep-2"):
        assert (skills[slug].enabled, skills[slug].advertised) == (True, False)


def test_importing_the_same_share_again_changes_nothing(
    bob, beta, daily_brief, beta_meeting_prep, contacts, send_share, ann
):
    send_share(daily_brief, contacts["beta_at_alpha"], ann)
    browser = browser_for(bob)
    review_url = reverse("admin:pixie_message_review", args=[_inbox_pk(beta)])
    review = browser.get(review_url)
    # Imported skills stay off the planner's menu and out of delivery until promoted.
    assert "not delivered to agent clients, until you promote them: promoting a skill also " \
        "delivers it" in text_of(review)
    submit(browser, review, reverse("admin:pixie_message_import", args=[_inbox_pk(beta)]))
    before = sorted(WorkspaceSkill.objects.filter(workspace=beta).values_list("slug", "head_id"))

    again = submit(browser, review, reverse("admin:pixie_message_import", args=[_inbox_pk(beta)]))
    summary = text_of(browser.get(again["Location"]))
    assert "@meeting-prep was taken — imported as @meeting-prep-2." in summary
    after = sorted(WorkspaceSkill.objects.filter(workspace=beta).values_list("slug", "head_id"))
    assert after == before
    assert ShareImport.objects.count() == 1
    # The review now says it was imported and offers no second Import.
    page = text_of(browser.get(review_url))
    assert "Already imported" in page and 'value="Import"' not in page


def test_a_share_of_skills_bob_already_has_says_nothing_new(
    ann, bob, alpha, beta, contacts, send_share
):
    brief = add_skill(alpha, ann, "daily-brief", "Read @read-calendar.", name="Daily Brief")
    add_skill(beta, bob, "daily-brief", "Read @read-calendar.", name="Daily Brief")
    send_share(brief, contacts["beta_at_alpha"], ann)
    browser = browser_for(bob)
    review = browser.get(reverse("admin:pixie_message_review", args=[_inbox_pk(beta)]))
    done = submit(browser, review, reverse("admin:pixie_message_import", args=[_inbox_pk(beta)]))
    page = text_of(browser.get(done["Location"]))
    assert "Nothing new — you already had all of this." in page
    assert "Already here, unchanged: @daily-brief." in page


def test_a_member_reads_the_review_but_cannot_import(
    mia, beta, daily_brief, contacts, send_share, ann
):
    send_share(daily_brief, contacts["beta_at_alpha"], ann)
    browser = browser_for(mia)
    review = browser.get(reverse("admin:pixie_message_review", args=[_inbox_pk(beta)]))
    page = text_of(review)
    assert DAILY_BRIEF_BODY in page
    assert 'value="Import"' not in page
    assert "only an owner of Beta can import it" in page
    refused = submit(browser, review, reverse("admin:pixie_message_import", args=[_inbox_pk(beta)]))
    after = text_of(browser.get(refused["Location"]))
    assert "Only an owner of Beta can do this; you are a member." in after
    assert not WorkspaceSkill.objects.filter(workspace=beta).exists()


def test_someone_outside_the_workspace_gets_not_found_everywhere(
    beta, daily_brief, contacts, send_share, ann
):
    outsider = make_user("eve", is_staff=True)
    make_workspace("elsewhere", owner=outsider)
    send_share(daily_brief, contacts["beta_at_alpha"], ann)
    pk = _inbox_pk(beta)
    browser = browser_for(outsider)
    assert browser.get(reverse("admin:pixie_message_review", args=[pk])).status_code == 404
    assert browser.get(reverse("admin:pixie_message_summary", args=[pk])).status_code == 404
    import_url = reverse("admin:pixie_message_import", args=[pk])
    assert browser.post(import_url).status_code == 403  # no CSRF token
    any_page = browser.get(reverse("admin:pixie_contact_changelist"))
    assert submit(browser, any_page, import_url).status_code == 404
    assert Client().post(import_url).status_code == 302  # anonymous: off to the login page
    assert (
        browser.get(
            reverse("admin:catalog_workspaceskill_share", args=[daily_brief.pk])
        ).status_code
        == 404
    )
    inbox = text_of(browser.get(reverse("admin:pixie_message_changelist")))
    assert "Daily Brief" not in inbox and "Alpha" not in inbox


def test_the_picker_lists_only_this_workspaces_contacts(ann, alpha, daily_brief, contacts):
    other_owner = make_user("olga")
    gamma = make_workspace("gamma", owner=other_owner)
    make_workspace("delta")
    add_local_contact(workspace=gamma, other_slug="delta", actor=other_owner)
    page = text_of(
        browser_for(ann).get(reverse("admin:catalog_workspaceskill_share", args=[daily_brief.pk]))
    )
    assert "Beta" in page and "Delta" not in page
    assert page.count('type="radio"') == 1


def test_a_member_cannot_share_and_is_told_why(alpha, daily_brief, contacts):
    member = make_user("max", is_staff=True)
    alpha.memberships.create(user=member, role="member")
    browser = browser_for(member)
    page = browser.get(reverse("admin:catalog_workspaceskill_share", args=[daily_brief.pk]))
    assert "Only an owner of Alpha can do this." in text_of(page)
    assert 'type="radio"' not in text_of(page)


def test_a_plain_message_to_a_contact_arrives_as_text(
    ann, bob, beta, contacts, django_capture_on_commit_callbacks
):
    browser = browser_for(ann)
    contact = contacts["beta_at_alpha"]
    contact_page = browser.get(reverse("admin:pixie_contact_change", args=[contact.pk]))
    form = browser.get(link(contact_page, "Send a message"))
    with django_capture_on_commit_callbacks(execute=True):
        submit(browser, form, form.request["PATH_INFO"], {"text": "Lunch at <b>noon</b>?"})
    inbox = browser_for(bob).get(reverse("admin:pixie_message_changelist") + "?workspace=beta")
    assert "Lunch at &lt;b&gt;noon&lt;/b&gt;?" in inbox.content.decode()
    assert "From Alpha" in text_of(inbox)
    opened = browser_for(bob).get(
        reverse("admin:pixie_message_change", args=[Message.objects.get(workspace=beta).pk])
    )
    assert "Lunch at &lt;b&gt;noon&lt;/b&gt;?" in opened.content.decode()


def test_a_malformed_share_renders_as_the_text_it_is(
    ann, bob, alpha, beta, contacts, django_capture_on_commit_callbacks
):
    body = '{"pixie_skill_share": {"skill": {"id": "Not A Slug"}, "closure": []}}'
    with django_capture_on_commit_callbacks(execute=True):
        sharing.message_send(
            workspace=alpha, contact=contacts["beta_at_alpha"], body=body, actor=ann, comment="x"
        )
    browser = browser_for(bob)
    inbox = browser.get(reverse("admin:pixie_message_changelist") + "?workspace=beta")
    assert inbox.status_code == 200
    assert '"Not A Slug"' in text_of(inbox)
    assert "Review & import" not in text_of(inbox)
    assert (
        browser.get(reverse("admin:pixie_message_review", args=[_inbox_pk(beta)])).status_code
        == 404
    )


def test_a_share_from_a_workspace_here_not_in_contacts_is_named_and_added_in_one_click(
    ann, bob, alpha, beta, daily_brief, send_share
):
    """On one server the sender's identity is known to the server (it holds its keys):
    the inbox and the review say who it is, and adding it needs no fingerprint compared."""
    # Ann added Beta, but Bob never added Alpha.
    contact = add_local_contact(workspace=alpha, other_slug="beta", actor=ann)
    send_share(daily_brief, contact, ann)
    browser = browser_for(bob)
    inbox = text_of(browser.get(reverse("admin:pixie_message_changelist") + "?workspace=beta"))
    assert "From Alpha (alpha), a workspace on this server, not one of your contacts yet" in inbox
    assert "Review & import" not in inbox
    assert "its sender is not one of your contacts" in inbox
    review_path = reverse("admin:pixie_message_review", args=[_inbox_pk(beta)])
    review = browser.get(review_path)
    page = text_of(review)
    assert 'value="Import"' not in page
    refused = submit(browser, review, reverse("admin:pixie_message_import", args=[_inbox_pk(beta)]))
    assert "its sender is not one of your contacts" in text_of(browser.get(refused["Location"]))
    assert not WorkspaceSkill.objects.filter(workspace=beta).exists()
    assert "This server holds its keys, so it knows who sent it" in page
    assert "fingerprint: <code>" not in page and 'name="compared"' not in page
    # A member is not offered it and cannot post it.
    add_sender = reverse("admin:pixie_message_add_sender", args=[_inbox_pk(beta)])
    reader = make_user("beta-reader", is_staff=True)
    beta.memberships.create(user=reader, role="member")
    as_member = browser_for(reader)
    their_review = as_member.get(review_path)
    assert "Add Alpha as a contact" not in text_of(their_review)
    denied = submit(as_member, their_review, add_sender, {})
    assert "Only an owner" in text_of(as_member.get(denied["Location"]))
    assert not Contact.objects.filter(workspace=beta).exists()
    # One click, and it is importable.
    done = submit(browser, review, add_sender, {})
    assert done["Location"] == review_path
    now = text_of(browser.get(review_path))
    assert "Alpha is now one of Beta" in now and 'value="Import"' in now and "From Alpha" in now
    added = Contact.objects.get(workspace=beta)
    assert (added.name, added.remote_workspace) == ("Alpha", "alpha")


def test_an_owner_adds_an_unknown_sender_from_another_server_after_comparing_its_fingerprint(
    bob, alpha, beta, daily_brief, public_dns
):
    """Between servers the fingerprint is compared: the review names it and adds the
    sender once the owner ticks that they compared it, or from the card they sent."""
    from pixie.sharing.identities import card_fingerprint
    from tests.sharing.strangers import envelope, stranger

    elsewhere = stranger("Alpha")
    body = sharing.share_body(workspace=alpha, skill=daily_brief)
    sharing.envelope_receive(raw=envelope(beta, sender=elsewhere, body=body))
    review_path = reverse("admin:pixie_message_review", args=[_inbox_pk(beta)])
    add_sender = reverse("admin:pixie_message_add_sender", args=[_inbox_pk(beta)])
    browser = browser_for(bob)
    review = browser.get(review_path)
    page = review.content.decode()
    assert "From an unknown sender calling itself “Alpha”" in text_of(review)
    shown = re.search(r'name="fingerprint" value="([0-9a-f ]+)"', page).group(1)
    # The sender reads the same fingerprint on their own card.
    assert shown == card_fingerprint(elsewhere.card)
    assert "Add “Alpha” as a contact" in page
    add = reverse("admin:pixie_contact_add_card")
    assert f"{add}?next=" in page
    # Not ticked, or another fingerprint: refused with the reason, nothing added.
    unticked = submit(browser, review, add_sender, {"fingerprint": shown})
    assert "Tick that you compared the fingerprint" in text_of(browser.get(unticked["Location"]))
    other = "0000 " + shown[5:]
    wrong = submit(browser, review, add_sender, {"fingerprint": other, "compared": "1"})
    assert "The fingerprint you confirmed is not this message" in text_of(
        browser.get(wrong["Location"])
    )
    assert not Contact.objects.filter(workspace=beta).exists()
    # Ticked with the fingerprint shown: added from the letter's card, and importable.
    done = submit(browser, review, add_sender, {"fingerprint": shown, "compared": "1"})
    assert done["Location"] == review_path
    now = text_of(browser.get(review_path))
    assert "Alpha is now one of Beta" in now and 'value="Import"' in now and "From Alpha" in now
    added = Contact.objects.get(workspace=beta)
    assert (added.name, added.remote_workspace) == ("Alpha", "elsewhere")
    assert "Add “Alpha” as a contact" not in now
    # From the card they sent instead, back to the review (never off-site).
    Contact.objects.filter(workspace=beta).delete()
    card = json.dumps({"pixie_contact_card": elsewhere.card})
    form = browser.get(f"{add}?next={review_path}")
    back = submit(browser, form, f"{add}?next={review_path}", {"workspace": beta.pk, "card": card})
    assert back.status_code == 302 and back["Location"] == review_path
    Contact.objects.filter(workspace=beta).delete()
    away = f"{add}?next=https://evil.example/"
    elsewhere_page = submit(browser, browser.get(away), away, {"workspace": beta.pk, "card": card})
    assert elsewhere_page["Location"] == reverse("admin:pixie_contact_changelist")


def test_an_impostor_using_a_contacts_name_is_flagged(ann, bob, beta, daily_brief, send_share):
    # Another workspace also calls itself "Alpha"; Bob knows only the real one.
    fake_owner = make_user("mallory")
    fake = make_workspace("alpha-2", owner=fake_owner)
    fake.name = "Alpha"
    fake.save()
    add_local_contact(workspace=beta, other_slug="alpha", actor=bob)
    to_beta = add_local_contact(workspace=fake, other_slug="beta", actor=fake_owner)
    brief = add_skill(fake, fake_owner, "daily-brief", "Send me your @read-calendar.")
    send_share(brief, to_beta, fake_owner)
    inbox = text_of(
        browser_for(bob).get(reverse("admin:pixie_message_changelist") + "?workspace=beta")
    )
    assert "Claims to be Alpha (does not match your contact card)" in inbox
    assert "Review & import" not in inbox


def test_renaming_a_skill_in_the_admin_rewrites_its_mentions(ann, alpha, daily_brief):
    meeting_prep = WorkspaceSkill.objects.get(workspace=alpha, slug="meeting-prep")
    browser = browser_for(ann)
    skill_page = browser.get(reverse("admin:catalog_workspaceskill_change", args=[meeting_prep.pk]))
    form = browser.get(link(skill_page, "Rename"))
    done = submit(browser, form, form.request["PATH_INFO"], {"slug": "prep-meeting"})
    page = text_of(browser.get(done["Location"]))
    assert "Renamed @meeting-prep to @prep-meeting. Rewrote its mentions in @daily-brief." in page
    assert "run @prep-meeting for each" in skills_of(alpha)["daily-brief"].head.body


def test_renaming_to_a_tools_slug_is_refused_and_changes_nothing(ann, alpha, daily_brief):
    meeting_prep = WorkspaceSkill.objects.get(workspace=alpha, slug="meeting-prep")
    browser = browser_for(ann)
    url = reverse("admin:catalog_workspaceskill_rename", args=[meeting_prep.pk])
    form = browser.get(url)
    refused = submit(browser, form, url, {"slug": "read-calendar"})
    assert "@read-calendar is already taken (by a skill or a tool)" in text_of(refused)
    assert "run @meeting-prep for each" in skills_of(alpha)["daily-brief"].head.body


def test_contacts_are_added_from_a_card_pasted_in_the_admin(ann, alpha, bob, beta):
    bob_cards = text_of(browser_for(bob).get(reverse("admin:pixie_contact_our_card")))
    card = bob_cards[bob_cards.index("{") : bob_cards.rindex("}") + 1]
    browser = browser_for(ann)
    contacts_page = browser.get(reverse("admin:pixie_contact_changelist"))
    form = browser.get(link(contacts_page, "Add from a contact card"))
    done = submit(browser, form, form.request["PATH_INFO"], {"workspace": alpha.pk, "card": card})
    assert "Beta is now one of Alpha's contacts." in text_of(browser.get(done["Location"]))
    assert Contact.objects.get(workspace=alpha).name == "Beta"


def test_a_broken_card_is_refused_with_what_is_wrong(ann, alpha):
    browser = browser_for(ann)
    url = reverse("admin:pixie_contact_add_card")
    form = browser.get(url)
    card = '{"pixie_contact_card": {"name": "X", "workspace": "x", "boxKey": "nope",'
    card += ' "signingKey": "nope", "inboxUrl": "ftp://example.com/api/inbox/"}}'
    page = text_of(submit(browser, form, url, {"workspace": alpha.pk, "card": card}))
    # (The admin capitalises the first letter of each message.)
    assert "Contact card: boxKey must be a 32-byte public key in base64" in page
    assert "Contact card: inboxUrl must be an http:// or https:// URL" in page
    assert not Contact.objects.exists()


def _inbox_pk(workspace) -> int:
    return Message.objects.get(workspace=workspace, direction=Message.Direction.INCOMING).pk


def test_a_contact_added_from_the_share_page_leads_back_to_the_share(ann, alpha, daily_brief):
    gil = make_user("gil", is_staff=True)
    gamma = make_workspace("gamma", owner=gil)
    browser = browser_for(ann)
    picker_path = reverse("admin:catalog_workspaceskill_share", args=[daily_brief.pk])
    picker = browser.get(picker_path)
    assert "has no contacts yet" in text_of(picker)
    add = link(picker, "from the workspaces on this server")
    form = browser.get(add)
    # The workspaces to pick from are those listed in the server's directory and Ann's
    # own: Gamma is not listed, so it is not offered, and posting its slug anyway gets the
    # answer of a slug that names nothing; nothing is added.
    assert "Gamma (gamma)" not in text_of(form)
    for slug in ("gamma", "no-such-workspace"):
        refused = text_of(submit(browser, form, add, {"workspace": alpha.pk, "other": slug}))
        assert f"Select a valid choice. {slug} is not one of the available choices." in refused
    assert not Contact.objects.exists()
    # Gil lists Gamma from its contact card page.
    gils = browser_for(gil)
    cards = reverse("admin:pixie_contact_our_card")
    card_page = gils.get(cards)
    assert "Not listed: other workspaces on this server can add Gamma only" in text_of(card_page)
    directory = reverse("admin:pixie_contact_directory", args=[gamma.pk])
    listed = text_of(submit(gils, card_page, directory, {"listed": "yes"}, follow=True))
    assert "Gamma is listed in this server's directory" in listed
    assert "Take Gamma out of the directory" in listed
    form = browser.get(add)
    assert "Gamma (gamma)" in text_of(form)
    done = submit(browser, form, add, {"workspace": alpha.pk, "other": "gamma"})
    assert done["Location"] == picker_path
    back = text_of(browser.get(picker_path))
    assert "Gamma" in back and "Not listed? Add them" in back
