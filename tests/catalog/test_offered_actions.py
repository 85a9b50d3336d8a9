"""Pages offer a member only what a member may do: asking for a plan and confirming a
credential are an owner's, so a member is told who can, instead of meeting a form whose
workspace list is empty or an action refused after the click."""

import pytest
from django.urls import reverse

from tests.clients import admin_for
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


@pytest.fixture
def installed(acme, owner, demo_catalog, django_capture_on_commit_callbacks):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    return acme


def test_a_member_is_told_who_asks_for_plans_instead_of_an_empty_form(installed, member, owner):
    ask = reverse("admin:catalog_plan_ask")
    page = admin_for(member).get(ask).content.decode()
    assert "Only a workspace's owners ask for plans, and you own none." in page
    assert "You are a member of Acme: ask one of its owners" in page
    assert "Compute the plan" not in page
    plans = admin_for(member).get(reverse("admin:catalog_plan_changelist")).content.decode()
    assert f'href="{ask}"' not in plans
    as_owner = admin_for(owner)
    assert "Compute the plan" in as_owner.get(ask).content.decode()
    owners_plans = as_owner.get(reverse("admin:catalog_plan_changelist")).content.decode()
    assert f'href="{ask}"' in owners_plans


def test_a_member_is_not_offered_to_confirm_a_credential(installed, member, owner):
    listing = reverse("admin:egress_credentialrequirement_changelist")
    assert "confirm_supplied" not in admin_for(member).get(listing).content.decode()
    assert "confirm_supplied" in admin_for(owner).get(listing).content.decode()
