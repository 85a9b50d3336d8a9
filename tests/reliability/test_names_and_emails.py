"""A name is one line of text, and one email that cannot go never holds up the others.

An owner once promoted a bundle whose name held a line break: Django refused it in an
email's Subject, every later notification email queued behind that row, and with tasks
in-process any request that made a notification answered 500, in every workspace. Here,
through the doors a name comes in by (promote, load, upload, the API, the admin), a name
with a control character is refused with the character named; and the outbox sends each
email on its own, a failure kept on its row and tried again a bounded number of times.
"""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from agents.models import Agent, AgentSkill
from catalog.models import Bundle, BundleVersion, WorkspaceSkill
from catalog.services.workspace_skills import skill_create
from pixie.core.models import Membership, Notification, Workspace
from pixie.core.names import name_problem, one_line
from pixie.core.notifications.emails import EMAIL_ATTEMPTS
from pixie.core.tasks import send_notification_emails
from tests.admin_forms import change_form_data
from tests.catalog.bundle_archives import ledger_bundle, zip_of
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

BROKEN = [
    ("Ledger\nTools", "a line break (U+000A)"),
    ("Ledger\r\nBcc: victim@example.com", "a line break (U+000D)"),
    ("Ledger\u2028Tools", "a line break (U+2028)"),
    ("Ledger\tTools", "a control character (U+0009)"),
    ("Ledger\x1b[31mTools", "a control character (U+001B)"),
    ("Ledger\u202eslooT", "a bidirectional control (U+202E)"),
]


@pytest.mark.parametrize(("name", "named"), BROKEN, ids=[n for _, n in BROKEN])
def test_name_problem_names_the_character(name, named):
    assert named in name_problem(name)
    assert "\n" not in one_line(name) and "\r" not in one_line(name)


def test_ordinary_names_pass():
    for name in ("Ledger Tools", "Créances clients", "売掛金", "Ops 👩‍💻 kit", "A–Z (v2)"):
        assert name_problem(name) is None


# --- each door --------------------------------------------------------------------------


def test_promote_in_the_admin_refuses_a_name_with_a_line_break(acme, owner, agents):
    collections = agents[0]
    skill = skill_create(
        workspace=acme, slug="month-end", name="Month end", short_description="Close it.",
        body="At month end, list the open invoices.", actor=owner,
    )  # fmt: skip
    AgentSkill.objects.create(agent=collections, skill=skill, position=1)
    page = admin_for(owner).post(
        reverse("admin:agents_agent_promote", args=[collections.pk]),
        {"slug": "acme-kit", "name": "Acme kit\nBcc: everyone", "version": "1.0.0"},
    )
    assert page.status_code == 200
    assert "bundle name holds a line break (U+000A); a name is one line of text" in (
        page.content.decode()
    )
    assert not Bundle.objects.filter(slug="acme-kit").exists()


def test_bundle_load_refuses_a_manifest_name_with_a_line_break(tmp_path):
    folder = ledger_bundle(tmp_path / "ledger-tools")
    manifest = folder / "bundle.toml"
    manifest.write_text(manifest.read_text().replace('"Ledger Tools"', '"Ledger\\nTools"'))
    with pytest.raises(CommandError) as refused:
        call_command("bundle_load", str(folder))
    assert "bundle.toml: 'name' holds a line break (U+000A)" in str(refused.value)
    assert not BundleVersion.objects.exists()


def test_upload_refuses_a_skill_display_name_with_a_control_character(tmp_path, operator):
    folder = ledger_bundle(tmp_path / "ledger-tools")
    skill = folder / "skills" / "ledger-lookup" / "SKILL.md"
    skill.write_text(
        skill.read_text().replace("---\n", '---\nmetadata:\n  display-name: "Look\\rup"\n', 1)
    )
    page = admin_for(operator).post(
        "/admin/catalog/bundleversion/upload/",
        {"archive": SimpleUploadedFile("ledger.zip", zip_of(folder), "application/zip")},
    )
    assert page.status_code == 200
    assert "&#x27;metadata.display-name&#x27; holds a line break (U+000D)" in (
        page.content.decode()
    )
    assert not BundleVersion.objects.exists()


def test_the_api_refuses_a_promoted_bundle_name_with_a_line_break(acme, owner, agents):
    skill = skill_create(
        workspace=acme, slug="month-end", name="Month end", short_description="Close it.",
        body="At month end, list the open invoices.", actor=owner,
    )  # fmt: skip
    AgentSkill.objects.create(agent=agents[0], skill=skill, position=1)
    answer = api_for(owner).post(
        f"/api/workspaces/{acme.slug}/agents/{agents[0].slug}/promote/",
        {"slug": "acme-kit", "name": "Acme kit\nBcc: x@example.com"},
        format="json",
    )
    assert answer.status_code == 400, answer.content
    assert "bundle name holds a line break (U+000A); a name is one line of text" in str(
        answer.json()
    )
    assert not Bundle.objects.filter(slug="acme-kit").exists()


def test_the_admin_refuses_an_agent_name_with_a_line_break(acme, operator):
    operator.is_superuser = True  # who adds agents in the admin
    operator.save(update_fields=["is_superuser"])
    client = admin_for(operator)
    url = reverse("admin:agents_agent_add")
    data = change_form_data(client.get(url))
    page = client.post(
        url,
        {
            **data,
            "workspace": acme.pk,
            "slug": "closer",
            "name": "Closer\nBcc: x@example.com",
            "system_prompt": "Close.",
        },
    )
    assert page.status_code == 200
    assert "The name holds a line break (U+000A); a name is one line of text." in (
        page.content.decode()
    )
    assert not Agent.objects.filter(slug="closer").exists()


def test_the_api_refuses_a_skill_name_with_a_bidirectional_control(acme, owner):
    skill = skill_create(
        workspace=acme, slug="refunds", name="Refunds", short_description="Refund.",
        body="Refund within 30 days.", actor=owner,
    )  # fmt: skip
    answer = api_for(owner).patch(
        f"/api/workspaces/{acme.slug}/skills/refunds/", {"name": "Refunds\u202e"}, format="json"
    )
    assert answer.status_code == 400, answer.content
    assert "name holds a bidirectional control (U+202E)" in str(answer.json())
    assert WorkspaceSkill.objects.get(pk=skill.pk).head.name == "Refunds"


def test_the_admin_refuses_a_workspace_name_with_a_line_break(acme, operator):
    operator.is_superuser = True
    operator.save(update_fields=["is_superuser"])
    client = admin_for(operator)
    url = reverse("admin:pixie_workspace_change", args=[acme.pk])
    data = change_form_data(client.get(url))
    page = client.post(url, {**data, "name": "Acme\r\nLtd"})
    assert page.status_code == 200
    assert "The name holds a line break (U+000D); a name is one line of text." in (
        page.content.decode()
    )
    assert Workspace.objects.get(pk=acme.pk).name == acme.name


def test_a_token_name_with_a_control_character_is_refused(owner):
    answer = api_for(owner).post("/api/tokens/", {"name": "CI\x07"}, format="json")
    assert answer.status_code == 400
    assert "a control character (U+0007)" in str(answer.json())


# --- the outbox -------------------------------------------------------------------------


@pytest.fixture
def owners(db):
    """Acme's three owners; the first's address was stored before addresses were checked
    and holds a line break, which Django refuses in a To header."""
    people = [make_user(n, email=f"{n}@example.com", is_staff=True) for n in ("ann", "bo", "cy")]
    workspace = make_workspace("acme", owner=people[0])
    for person in people[1:]:
        Membership.objects.create(workspace=workspace, user=person, role="owner")
    type(people[0]).objects.filter(pk=people[0].pk).update(
        email="ann@example.com\nBcc: everyone@example.com"
    )
    return workspace, people


def notices(workspace, people, title="Plan 7 waits for your approval"):
    return Notification.objects.bulk_create(
        Notification(user=p, workspace=workspace, kind="plan_waiting", event=f"e:{p.pk}",
                     title=title, email_wanted=True)
        for p in people
    )  # fmt: skip


def test_one_email_that_cannot_go_does_not_hold_up_the_others(owners, mailoutbox):
    workspace, people = owners
    notices(workspace, people)
    assert send_notification_emails.delay().get() == 2
    assert sorted(m.to[0] for m in mailoutbox) == ["bo@example.com", "cy@example.com"]
    failed = Notification.objects.get(user=people[0])
    assert failed.emailed_at is None and failed.email_attempts == 1
    assert failed.email_error.startswith("BadHeaderError")
    assert failed.email_next_try > timezone.now() + timedelta(seconds=50)

    # Not tried again before its time; then tried, at most EMAIL_ATTEMPTS times in all.
    assert send_notification_emails.delay().get() == 0
    assert Notification.objects.get(pk=failed.pk).email_attempts == 1
    for _ in range(EMAIL_ATTEMPTS + 2):
        Notification.objects.filter(pk=failed.pk, email_next_try__isnull=False).update(
            email_next_try=timezone.now()
        )
        send_notification_emails.delay()
    given_up = Notification.objects.get(pk=failed.pk)
    assert given_up.email_attempts == EMAIL_ATTEMPTS and given_up.email_next_try is None
    assert len(mailoutbox) == 2

    # Fixed, the address no longer fails; a new notification goes at once.
    type(people[0]).objects.filter(pk=people[0].pk).update(email="ann@example.com")
    Notification.objects.create(user=people[0], workspace=workspace, kind="plan_waiting",
                                event="e:new", title="Plan 8 waits", email_wanted=True)  # fmt: skip
    assert send_notification_emails.delay().get() == 1
    assert mailoutbox[-1].to == ["ann@example.com"]


def test_a_title_stored_with_a_line_break_goes_out_on_one_line(owners, mailoutbox):
    workspace, people = owners
    notices(workspace, people[1:], title="Promoted Acme\nkit\r\nBcc: everyone@example.com")
    assert send_notification_emails.delay().get() == 2
    assert {m.subject for m in mailoutbox} == {
        "[Pixie] Promoted Acme kit  Bcc: everyone@example.com"
    }
    assert all(m.bcc == [] for m in mailoutbox)


def test_a_request_that_notifies_answers_when_an_email_cannot_go(
    owners, demo_catalog, mailoutbox, django_capture_on_commit_callbacks
):
    """Tasks in-process: asking for a plan mails the other owners inside the request."""
    workspace, people = owners
    with django_capture_on_commit_callbacks(execute=True):
        asked = admin_for(people[2]).post(
            reverse("admin:pixie_workspace_plan", args=[workspace.pk]),
            {"kind": "install", "bundle": "accounts-receivable", "version": "2.1.0"},
        )
    assert asked.status_code == 302
    assert [m.to for m in mailoutbox] == [["bo@example.com"]]
    assert Notification.objects.get(user=people[0]).email_attempts == 1
