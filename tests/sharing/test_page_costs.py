"""The inbox and the review cost a fixed number of queries however many messages there are."""

import pytest
from django.urls import reverse

from pixie.sharing import services as sharing
from pixie.sharing.models import Message
from tests.factories import add_local_contact, make_user, make_workspace

from .conftest import add_skill
from .pages import browser_for, text_of
from .test_api_sharing import api_for

pytestmark = pytest.mark.django_db
MESSAGES = 60
MAX_QUERIES = 20


@pytest.fixture
def busy_inbox(
    ann, alpha, beta, daily_brief, contacts, django_capture_on_commit_callbacks, settings
):
    """Sixty messages for Beta: shares and notes from Alpha, and some from a stranger."""
    settings.PIXIE_INBOX_UNKNOWN_RATE_PER_SENDER = "100/h"  # a chatty stranger, not a flood
    stranger = make_user("sam")
    gamma = make_workspace("gamma", owner=stranger)
    to_beta = add_local_contact(workspace=gamma, other_slug="beta", actor=stranger)
    stranger_skill = add_skill(gamma, stranger, "hello", "Say hello.")
    with django_capture_on_commit_callbacks(execute=True):
        for i in range(MESSAGES):
            if i % 3 == 0:
                sharing.share_send(
                    workspace=alpha, skill=daily_brief, contact=contacts["beta_at_alpha"], actor=ann
                )
            elif i % 3 == 1:
                sharing.text_send(
                    workspace=alpha, contact=contacts["beta_at_alpha"], text=f"Note {i}", actor=ann
                )
            else:
                sharing.share_send(
                    workspace=gamma, skill=stranger_skill, contact=to_beta, actor=stranger
                )
    assert Message.objects.filter(workspace=beta).count() == MESSAGES


def test_the_admin_inbox_page_is_bounded(bob, busy_inbox, django_assert_max_num_queries):
    browser = browser_for(bob)
    url = reverse("admin:pixie_message_changelist") + "?workspace=beta"
    with django_assert_max_num_queries(MAX_QUERIES):
        page = browser.get(url)
    text = text_of(page)
    assert text.count("Review & import") == 16  # Alpha's shares among the newest 50
    assert "Note 58" in text


def test_the_review_page_is_bounded(bob, beta, busy_inbox, django_assert_max_num_queries):
    browser = browser_for(bob)
    share = Message.objects.filter(workspace=beta).order_by("id").first()
    with django_assert_max_num_queries(MAX_QUERIES):
        page = browser.get(reverse("admin:pixie_message_review", args=[share.pk]))
    assert "@daily-brief — Daily Brief" in text_of(page)


def test_the_api_inbox_is_bounded(bob, busy_inbox, django_assert_max_num_queries):
    client = api_for(bob)
    with django_assert_max_num_queries(MAX_QUERIES):
        body = client.get("/api/workspaces/beta/messages/").json()
    assert body["count"] == MESSAGES
    assert len(body["results"]) == 50
    assert sum(m["can_import"] for m in body["results"]) == 16  # Alpha's shares among the newest 50


def test_the_senders_outbox_is_bounded(ann, busy_inbox, django_assert_max_num_queries):
    browser = browser_for(ann)
    with django_assert_max_num_queries(MAX_QUERIES):
        page = browser.get(reverse("admin:pixie_message_changelist") + "?workspace=alpha")
    assert text_of(page).count("You shared a skill") == 20  # and 20 notes
