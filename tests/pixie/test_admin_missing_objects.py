"""An admin address of an object that is not there: the admin's own warning and its home
page, or, where some readers may not see an object, a 404 that says nothing of it."""

import pytest
from django.contrib.admin.templatetags.admin_urls import admin_urlquote
from django.contrib.auth import get_user_model
from django.urls import reverse

from pixie.core.audit.admin_history import admin_quote, admin_unquote
from tests.clients import admin_for

pytestmark = pytest.mark.django_db


def test_a_history_entry_of_a_publisher_not_there_says_so_and_leads_home():
    superuser = get_user_model().objects.create_superuser("sue", password="pw-super-1")
    url = reverse("admin:catalog_publisher_revision", args=["no_5Fsuch", 1])
    answer = admin_for(superuser).get(url, follow=True)
    assert answer.redirect_chain == [(reverse("admin:index"), 302)]
    assert [str(message) for message in answer.context["messages"]] == [
        "publisher with ID “no_such” doesn’t exist. Perhaps it was deleted?"
    ]


def test_a_member_asking_for_a_bundle_version_not_there_gets_a_404(acme, member):
    url = reverse("admin:catalog_bundleversion_change", args=[987654])
    assert admin_for(member).get(url).status_code == 404


def test_a_workspace_object_not_there_is_a_404_on_every_page_of_it(acme, owner):
    client = admin_for(owner)
    for url in (
        reverse("admin:catalog_plan_revision", args=[987654, 1]),
        reverse("admin:catalog_plan_history", args=[987654]),
        reverse("admin:agents_agent_change", args=[987654]),
    ):
        assert client.get(url).status_code == 404, url


@pytest.mark.parametrize("pk", ["a/b_c:d", 'odd "key"?#&=%\n\\[]<>;@+$,', "plain", "_5F"])
def test_history_links_quote_a_key_as_the_admin_pages_do(pk):
    assert admin_quote(pk) == admin_urlquote(pk)
    assert admin_unquote(admin_quote(pk)) == pk


def test_a_numeric_key_is_left_as_it_is():
    assert admin_quote(42) == 42
