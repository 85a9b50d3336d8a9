"""A number in an address or a cursor is a whole number of ASCII digits or nothing:
"²" and "١" pass str.isdigit() but not int(), and once crashed the pages below (500)."""

from base64 import b64encode
from urllib.parse import urlencode

import pytest

from pixie.core.web.whole_numbers import whole_number
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

NOT_NUMBERS = ["²", "١", "-5", " 5", "1e3", "abc", "9" * 19]


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_only_ascii_digits_of_a_bounded_length_are_a_whole_number(text):
    assert whole_number(text) is None
    assert whole_number("0") == 0 and whole_number("9" * 18) == 10**18 - 1


@pytest.fixture
def root():
    user = make_user("root")
    user.is_superuser = user.is_staff = True
    user.save()
    make_workspace("acme", owner=user)
    return user


@pytest.mark.parametrize("text", ["²", "١٢", "9" * 30])
def test_the_audit_log_names_a_position_or_plan_that_is_not_a_number(root, text):
    log = admin_for(root)
    for name, words in [("before", "is not a position"), ("after", "is not a position"),
                        ("plan", "is not a plan number")]:  # fmt: skip
        page = log.get("/admin/pixie/auditentry/", {name: text})
        assert page.status_code == 200 and words in page.content.decode()
        assert 'id="audit-log"' not in page.content.decode()
    assert log.get(f"/admin/pixie/auditentry/{text}/change/").status_code == 404
    assert log.get(f"/admin/catalog/plan/{text}/change/").status_code == 404
    export = log.get("/admin/pixie/auditentry/export.csv", {"plan": text})
    assert export.status_code == 302  # back to the log, the problem named there


@pytest.mark.parametrize("position", ["abc", "²", "-5", "1e3", "9" * 30])
def test_a_made_up_cursor_is_refused_by_every_history_list(root, position):
    cursor = b64encode(urlencode({"p": position}).encode()).decode()
    client = api_for(root)
    for url in ["/api/audit/", "/api/workspaces/acme/history/"]:
        answer = client.get(url, {"cursor": cursor})
        assert answer.status_code == 404, (url, answer.content[:200])
        assert answer.json()["detail"] == "Invalid cursor"
