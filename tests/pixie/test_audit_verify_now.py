"""*Verify now* on the audit log: an auditor checks the chains of digests from the page,
as a task, and reads the result there (when, by whom, ok or the first entry that fails);
a check running is shown and not started twice; the command's checks show there too."""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from pixie.core.audit.checks import RUNNING_AT_MOST, chain_check_run, verify_chains
from pixie.core.models import AuditCheck, AuditEntry
from pixie.core.people.permissions import AUDITORS_GROUP
from tests.factories import make_user

pytestmark = pytest.mark.django_db

LOG = reverse("admin:pixie_auditentry_changelist")
VERIFY = reverse("admin:pixie_auditentry_verify")


@pytest.fixture
def auditor(db):
    person = make_user("aud", is_staff=True)
    person.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    return person


@pytest.fixture
def recorded(demo_catalog):
    """Changes in the catalog's chain (the demo catalog's loads)."""
    return AuditEntry.objects.count()


def signed_in(user) -> Client:
    """A browser's client: CSRF checked, as on the real page."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def press_verify_now(client, capture) -> str:
    """Open the log, press *Verify now* with the form's CSRF token; the page it leads to."""
    page = client.get(LOG).content.decode()
    form = page.split('id="audit-verify"', 1)[1].split("</form>", 1)[0]
    assert f'action="{VERIFY}"' in form and 'value="Verify now"' in form
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    with capture(execute=True):  # the task runs once the request's work commits
        response = client.post(VERIFY, {"csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response["Location"].startswith(LOG)
    return client.get(response["Location"]).content.decode()


def chain_box(page: str) -> str:
    """The words of the page's box on the chains, tags dropped."""
    box = page.split('id="audit-chain"', 1)[1].split("</div>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", "", box).split())


def test_an_auditor_verifies_the_chains_from_the_page_and_reads_the_result(
    recorded, auditor, django_capture_on_commit_callbacks
):
    client = signed_in(auditor)
    first = chain_box(client.get(LOG).content.decode())
    assert "have not been checked yet" in first
    # The page no longer sends an auditor to a shell: the command is the operators' other way.
    assert "Operators can also run manage.py audit_verify" in first

    page = press_verify_now(client, django_capture_on_commit_callbacks)

    # (A worker's walk ends after the answer; one run in-process, before it: "just now".)
    assert "Checking every chain now, in the background" in page
    check = AuditCheck.objects.get()
    assert (check.via, check.requested_by, check.ok) == ("page", auditor, True)
    assert check.entries == recorded
    box = chain_box(page)
    when = timezone.localtime(check.finished_at).strftime("%Y-%m-%d %H:%M")
    assert f"Every digest matched when the chains were last checked, {when} by aud" in box
    assert f"{recorded} entries in 1 chain" in box


def test_a_broken_chain_is_named_with_the_first_entry_that_fails(
    recorded, auditor, django_capture_on_commit_callbacks
):
    entry = AuditEntry.objects.order_by("revision_id")[1]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE reversion_revision SET comment = 'Nothing to see' WHERE id = %s",
            [entry.revision_id],
        )
    page = press_verify_now(signed_in(auditor), django_capture_on_commit_callbacks)
    box = chain_box(page)
    assert "1 chain no longer matches when last checked" in box and "by aud" in box
    assert (
        f"Chain catalog: the entry of revision #{entry.revision_id} (place {entry.sequence}) "
        "no longer matches its digest"
    ) in box
    assert not AuditCheck.objects.get().ok


def test_a_check_running_is_shown_and_not_started_twice(recorded, auditor, operator):
    """Queued and not yet walked (a worker busy elsewhere): the page says so, and asking
    again starts nothing new."""
    client = signed_in(auditor)
    page = client.get(LOG).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    client.post(VERIFY, {"csrfmiddlewaretoken": token})  # its task waits for the commit
    running = AuditCheck.objects.get()
    assert running.finished_at is None

    other = signed_in(operator)
    page = other.get(LOG).content.decode()
    box = chain_box(page)
    assert "A check is running, asked for by aud at" in box
    assert 'id="audit-verify"' not in page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    told = other.post(VERIFY, {"csrfmiddlewaretoken": token}, follow=True).content.decode()
    assert "A check of the chains is already running, asked for by aud at" in told
    assert AuditCheck.objects.count() == 1

    # Its task walks once; delivered again, it walks no more.
    assert verify_chains(running.pk) is True
    assert chain_check_run(check_id=running.pk) is None
    box = chain_box(other.get(LOG).content.decode())
    assert "Every digest matched" in box and "by aud" in box
    assert "A check is running" not in box


def test_a_check_whose_worker_stopped_does_not_block_the_next(
    recorded, auditor, django_capture_on_commit_callbacks
):
    stale = AuditCheck.objects.create(via="page", requested_by=auditor)
    AuditCheck.objects.filter(pk=stale.pk).update(
        at=timezone.now() - RUNNING_AT_MOST - timedelta(minutes=1)
    )
    page = press_verify_now(signed_in(auditor), django_capture_on_commit_callbacks)
    assert "Checking every chain now" in page
    assert AuditCheck.objects.filter(finished_at__isnull=False).count() == 1


def test_the_command_s_check_shows_on_the_page_as_the_command_s(recorded, auditor):
    call_command("audit_verify", stdout=StringIO())
    check = AuditCheck.objects.get()
    assert (check.via, check.requested_by, check.ok) == ("command", None, True)
    box = chain_box(signed_in(auditor).get(LOG).content.decode())
    assert "Every digest matched" in box and "by manage.py audit_verify" in box


def test_verify_now_answers_a_get_with_405_and_starts_nothing(recorded, auditor):
    assert signed_in(auditor).get(VERIFY).status_code == 405
    assert not AuditCheck.objects.exists()


def test_the_log_reads_its_checks_in_a_bounded_number_of_queries(
    recorded, auditor, django_assert_max_num_queries
):
    client = signed_in(auditor)
    client.get(LOG)
    for _ in range(20):
        call_command("audit_verify", stdout=StringIO())
    AuditCheck.objects.create(via="page", requested_by=auditor)  # one running
    with django_assert_max_num_queries(20) as counted:
        client.get(LOG)
    few = len(counted.captured_queries)
    for _ in range(20):
        call_command("audit_verify", stdout=StringIO())
    with django_assert_max_num_queries(few):
        client.get(LOG)
