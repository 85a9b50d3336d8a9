"""The kinds of plan are one registry (pixie.installer.plan_kinds): every kind a plan can
have has its module, and what a kind needs asked is refused in its own words wherever an
owner asks (the API, the admin's ask form, the service), changing nothing."""

import re

import pytest
from django.urls import reverse

from catalog.models import Plan
from pixie.core.errors import ValidationFailed
from pixie.installer.plan_kinds import KINDS, PlanKind, register
from pixie.installer.plans import plan_create
from tests.clients import api_for
from tests.installer.test_plan_pages import browser

pytestmark = pytest.mark.django_db


def test_every_kind_a_plan_can_have_has_its_module_and_no_other_is_registered():
    assert set(KINDS) == set(Plan.Kind.values)
    for value, kind in KINDS.items():
        assert kind.value == value and kind.a and kind.effect, value


def test_a_kind_not_among_the_plan_kinds_is_refused_when_it_registers():
    class Reinstall(PlanKind):
        value = "reinstall"

    with pytest.raises(ValueError, match="'reinstall' is not a Plan.Kind: add it there first"):
        register(Reinstall)
    assert "reinstall" not in KINDS


@pytest.mark.parametrize(
    ("asked", "problems"),
    [
        ({"kind": "install"}, {"bundle": ["Required for an install."],
                               "version": ["Required for an install."]}),
        ({"kind": "upgrade", "bundle": "accounts-receivable"},
         {"version": ["Required for an upgrade."]}),
        ({"kind": "uninstall"}, {"bundle": ["Required for an uninstall."]}),
        ({"kind": "install", "bundle": "accounts-receivable", "version": "2.1.0",
          "generation": 1}, {"generation": ["Only a rollback names one."]}),
        ({"kind": "rollback", "bundle": "accounts-receivable", "version": "2.1.0"},
         {"version": ["A rollback names a generation, not a version."],
          "generation": ["Required for a rollback."]}),
    ],
)  # fmt: skip
def test_the_api_names_every_field_a_kind_lacks_or_does_not_take(
    acme, owner, demo_catalog, asked, problems
):
    answer = api_for(owner).post("/api/workspaces/acme/plans/", asked, format="json")
    assert answer.status_code == 400
    assert answer.json()["fields"] == problems, answer.json()
    assert not Plan.objects.exists()


def test_a_repoint_needs_no_bundle_and_says_when_nothing_is_behind(acme, owner):
    answer = api_for(owner).post("/api/workspaces/acme/plans/", {"kind": "repoint"}, format="json")
    assert answer.status_code == 400
    assert "nothing to repoint" in answer.json()["detail"]


def test_the_service_refuses_a_kind_it_does_not_know_and_lists_those_it_does(acme, owner):
    with pytest.raises(ValidationFailed) as refused:
        plan_create(workspace=acme, kind="reinstall", actor=owner)
    assert str(refused.value) == (
        "kind must be one of install, upgrade, uninstall, repoint, rollback; got 'reinstall'"
    )
    with pytest.raises(ValidationFailed, match="A repoint is not planned from a bundle version"):
        plan_create(workspace=acme, kind="repoint", actor=owner)
    assert not Plan.objects.exists()


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("install", "Choose a bundle version: it is required for an install"),
        ("uninstall", "Choose a bundle version: it is required for an uninstall"),
        ("rollback", "Select a valid choice. rollback is not one of the available choices."),
    ],
)  # fmt: skip
def test_the_ask_form_says_what_a_kind_needs_in_its_own_words(acme, owner, kind, words):
    page = browser(owner).post(
        reverse("admin:catalog_plan_ask"), {"workspace": acme.pk, "kind": kind}, follow=True
    )
    assert page.status_code == 200
    assert words in page.content.decode()
    assert not Plan.objects.exists()


def test_the_ask_form_offers_no_kind_it_cannot_ask_for(acme, owner):
    page = browser(owner).get(reverse("admin:catalog_plan_ask")).content.decode()
    offered = re.findall(
        r'<option value="(\w+)"', page.split('name="kind"', 1)[1].split("</select>")[0]
    )
    assert offered == ["install", "upgrade", "uninstall", "repoint"]  # a rollback: its page


def test_the_ask_form_chooses_the_only_workspace_its_owner_has(acme, owner):
    page = browser(owner).get(reverse("admin:catalog_plan_ask")).content.decode()
    assert f'<option value="{acme.pk}" selected>Acme</option>' in page
