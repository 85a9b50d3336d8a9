"""The admin's login pauses after too many wrong passwords, by account and by address,
says so plainly, and records each lock where staff read security events.

The attacker's try: 25-30 wrong passwords, then the right one worked."""

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from reversion.models import Version

from pixie.core.models import AuditEntry, LoginLockout
from tests.clients import admin_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
RIGHT = "a-long-test-password"


def try_login(username, password, address="203.0.113.7"):
    client = Client(REMOTE_ADDR=address)
    answer = client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"})
    return answer, "_auth_user_id" in client.session


@pytest.fixture
def olive(db):
    return make_user("olive", is_staff=True)


def test_five_wrong_passwords_pause_the_account_even_for_the_right_one(olive):
    for _ in range(5):
        answer, signed_in = try_login("olive", "guess")
        assert answer.status_code == 200 and not signed_in
        assert "Please enter the correct username and password" in answer.content.decode()
    answer, signed_in = try_login("olive", RIGHT)
    assert not signed_in
    page = answer.content.decode()
    # A fixed window of 15 minutes: what is left of it.
    assert re.search(
        r"Too many wrong passwords for this account or from this address: logging in is "
        r"paused for ([1-9]|1[0-5]) more minutes?\.",
        page,
    )
    # Another address, the same account: still paused (the account's own limit).
    assert try_login("olive", RIGHT, address="198.51.100.9")[1] is False
    # Someone else, from elsewhere, is not held up.
    make_user("piet", is_staff=True)
    assert try_login("piet", RIGHT, address="198.51.100.9")[1] is True

    [lockout] = LoginLockout.objects.all()
    assert (lockout.kind, lockout.username, lockout.address, lockout.failures) == (
        "account", "olive", "203.0.113.7", 5,
    )  # fmt: skip
    entry = AuditEntry.objects.select_related("revision").latest("revision_id")
    assert entry.revision.comment == "Login locked (account): 5 wrong passwords for 'olive'"
    assert Version.objects.get_for_object(lockout).count() == 1


def test_twenty_wrong_passwords_from_one_address_pause_that_address(olive):
    for n in range(20):
        try_login(f"nobody-{n}", "guess")  # a different account each time
    assert try_login("olive", RIGHT)[1] is False
    assert try_login("olive", RIGHT, address="198.51.100.9")[1] is True
    assert LoginLockout.objects.filter(kind="address", address="203.0.113.7").count() == 1


def test_auditors_read_the_lockouts_and_nobody_writes_them(olive):
    for _ in range(5):
        try_login("olive", "guess")
    auditor = make_user("audrey")
    auditor.groups.add(Group.objects.get(name="auditors"))
    page = admin_for(auditor).get("/admin/pixie/loginlockout/")
    assert page.status_code == 200 and "olive" in page.content.decode()
    assert admin_for(auditor).get("/admin/pixie/loginlockout/add/").status_code == 403
    member = make_user("mia")
    assert admin_for(member).get("/admin/pixie/loginlockout/").status_code == 403
