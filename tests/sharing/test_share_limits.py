"""A share carries prose only, within the specification's limits, whatever the catalog allows.

Ann's workspace has Ledger Tools installed: @ledger-export is a 30,000-character skill
with scripts/, references/ and a PNG; @ledger-lookup is short and has no files.
"""

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_create
from pixie.core.skillshare import decode
from pixie.sharing import services as sharing
from pixie.sharing.models import Message
from tests.catalog.ledger_install import LEDGER_EXPORT_FILES, install_ledger_tools

from .pages import browser_for, submit, text_of

pytestmark = pytest.mark.django_db

FILES_STAY = "Supporting files never travel in a share: the recipient gets the prose only."
SHORT_EXPORT = "# Export ledger statements\n\nRead the ledger with @ledger-lookup first.\n"


@pytest.fixture
def ledger(tmp_path, alpha, ann, django_capture_on_commit_callbacks):
    return install_ledger_tools(tmp_path, alpha, ann, django_capture_on_commit_callbacks)


@pytest.fixture
def short_ledger(tmp_path, alpha, ann, django_capture_on_commit_callbacks):
    return install_ledger_tools(
        tmp_path, alpha, ann, django_capture_on_commit_callbacks, body=SHORT_EXPORT
    )


def share_page(user, skill):
    browser = browser_for(user)
    url = reverse("admin:catalog_workspaceskill_share", args=[skill.pk])
    return browser, url, browser.get(url)


def body_refusal(skill) -> str:
    return (
        f"@{skill.slug} cannot be shared: its body is {len(skill.head.body):,} characters; "
        "a share carries at most 8,000 per skill."
    )


def test_the_share_page_refuses_a_long_skill_by_name_and_offers_no_send(
    ann, ledger, contacts, django_capture_on_commit_callbacks
):
    export = ledger["ledger-export"]
    assert len(export.head.body) > 20_000
    browser, url, response = share_page(ann, export)
    page = text_of(response)
    assert body_refusal(export) in page
    assert "Travels: @ledger-export, @ledger-lookup" in page
    assert "Files that stay behind" in page and FILES_STAY in page
    for path in LEDGER_EXPORT_FILES:
        assert f"<code>{path}</code>" in page
    assert 'value="Share"' not in page and 'type="radio"' not in page

    # Pressing send anyway (a stale page, a script) changes nothing.
    with django_capture_on_commit_callbacks(execute=True):
        again = submit(browser, response, url, {"contact": contacts["beta_at_alpha"].pk})
    assert again.status_code == 200
    assert body_refusal(export) in text_of(again)
    assert not Message.objects.exists()


def test_a_skill_that_mentions_a_long_one_is_refused_naming_the_long_one(
    ann, alpha, ledger, contacts
):
    skill_create(
        workspace=alpha, slug="month-end", name="Month end", short_description="Close it.",
        body="Close the month; send statements with @ledger-export.", actor=ann,
    )  # fmt: skip
    month_end = WorkspaceSkill.objects.get(workspace=alpha, slug="month-end")
    page = text_of(share_page(ann, month_end)[2])
    assert body_refusal(ledger["ledger-export"]) in page
    assert "@month-end cannot be shared" not in page
    assert "Travels: @month-end, @ledger-export, @ledger-lookup" in page
    assert 'value="Share"' not in page


def test_the_api_refuses_every_skill_over_the_limits_one_message_each_and_sends_nothing(
    ann, alpha, ledger, contacts
):
    skill_create(
        workspace=alpha, slug="month-end", name="Month end", short_description="x" * 500,
        body="Close the month; send statements with @ledger-export.\n" + "y" * 9_000, actor=ann,
    )  # fmt: skip
    client = APIClient()
    client.force_authenticate(ann)
    response = client.post(
        "/api/workspaces/alpha/shares/",
        {"contact": contacts["beta_at_alpha"].pk, "skill": "month-end"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "over_share_limits"
    month_end_body = len("Close the month; send statements with @ledger-export.\n") + 9_000
    assert response.json()["detail"] == "; ".join(
        [
            f"@month-end cannot be shared: its description is 500 characters and its body is "
            f"{month_end_body:,} characters; a share carries at most 400 characters of "
            "description and 8,000 characters of body per skill.",
            body_refusal(ledger["ledger-export"]),
        ]
    )
    assert not Message.objects.exists()


def test_a_skill_with_files_travels_as_prose_and_the_page_names_the_files_left_behind(
    ann, short_ledger, contacts, django_capture_on_commit_callbacks
):
    export = short_ledger["ledger-export"]
    browser, url, response = share_page(ann, export)
    page = text_of(response)
    assert "cannot be shared" not in page
    assert "Travels: @ledger-export, @ledger-lookup" in page
    assert FILES_STAY in page
    assert [path for path in LEDGER_EXPORT_FILES if f"<code>{path}</code>" in page] == (
        LEDGER_EXPORT_FILES
    )
    assert 'value="Share"' in page

    with django_capture_on_commit_callbacks(execute=True):
        sent = submit(browser, response, url, {"contact": contacts["beta_at_alpha"].pk})
    assert sent.status_code == 302
    body = sharing.message_open(message=Message.objects.get(workspace__slug="alpha")).text
    share = decode(body)
    assert [item.id for item in share.items] == ["ledger-export", "ledger-lookup"]
    assert share.skill.detailed_body == export.head.body == SHORT_EXPORT.strip()
    wire = json.loads(body)["pixie_skill_share"]
    for item in [wire["skill"], *wire["closure"]]:
        assert sorted(item) == ["detailedBody", "id", "name", "shortDescription"]
    for path in LEDGER_EXPORT_FILES:
        assert path not in body


def test_a_skill_without_files_says_nothing_about_files(ann, daily_brief, contacts):
    page = text_of(share_page(ann, daily_brief)[2])
    assert "Files that stay behind" not in page
    assert 'value="Share"' in page
