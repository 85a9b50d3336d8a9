"""An owner runs their workspace without an operator, in Chromium: adds a member, makes a
read-only token, sets "reach-expanding plans need a second owner", asks for an upgrade
that adds a host, is refused the approval, and a second owner, told by email, approves."""

import re
import time

import pytest
from django.core import mail
from playwright.sync_api import expect
from rest_framework.test import APIClient

from catalog.models import Installation, Plan
from pixie.core.models import ApiToken, Membership
from tests.e2e.axe import axe_both_themes
from tests.factories import make_user
from tests.installer.flow import install

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def wait_for(plan, status, seconds=60):
    deadline = time.monotonic() + seconds
    while plan.status != status and time.monotonic() < deadline:
        time.sleep(0.2)
        plan.refresh_from_db()
    assert plan.status == status, plan.error


def test_an_owner_runs_the_workspace_and_a_second_owner_approves_what_expands_reach(
    acme, owner, member, agents, demo_catalog, person, task_worker,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    for user in (owner, member):
        user.is_staff = True
        user.email = f"{user.username}@acme.example"
        user.save()
    Membership.objects.filter(workspace=acme, user=member).update(role="owner")
    rita = make_user("rita", is_staff=True)
    with task_worker():
        wait_for(install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
                         agents), Plan.State.APPLIED)  # fmt: skip

        tab = person(owner, start="/")
        page = tab.page

        # People: rita has a login, so she is invited, and joins when she accepts.
        page.get_by_role("link", name=re.compile("Members, roles and the tokens")).click()
        expect(page.locator("h1")).to_contain_text("People of Acme")
        form = page.locator("#invite")
        form.get_by_label("Email address").fill("rita@example.com")
        form.get_by_role("button", name="Invite to Acme").click()
        link = page.locator("#invitation-link code").inner_text()
        expect(page.locator("#invitations")).to_contain_text("rita@example.com")
        expect(page.locator("#member-rita")).to_have_count(0)
        axe_both_themes(tab, "workspace-people")
        invited = person(rita)
        invited.go("/accounts/" + link.split("/accounts/", 1)[1])
        expect(invited.page.locator("#invited")).to_contain_text("join Acme as a member")
        axe_both_themes(invited, "invitation")
        invited.page.get_by_role("button", name="Join Acme as rita").click()
        expect(invited.page.locator(".messagelist")).to_contain_text("Welcome to Acme, rita.")
        tab.go(f"/admin/pixie/workspace/{acme.pk}/members/")
        expect(page.locator("#member-rita")).to_contain_text("Member")
        expect(page.locator("#invitations")).to_contain_text("No invitation is waiting.")

        # A read-only token, shown once.
        page.get_by_role("link", name="Your own API tokens").click()
        make = page.locator("#make-token")
        make.get_by_label("Name").fill("Dashboards")
        make.get_by_label("Read-only").check()
        make.get_by_role("button", name="Make the token").click()
        secret = page.locator("#secret").inner_text()
        assert secret.startswith("pixie_")
        axe_both_themes(tab, "my-tokens")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
        assert client.get("/api/workspaces/acme/plans/").status_code == 200
        assert client.post(
            "/api/workspaces/acme/plans/", {"kind": "upgrade", "bundle": "accounts-receivable"},
            format="json",
        ).status_code == 403  # fmt: skip
        assert ApiToken.objects.get(name="Dashboards").read_only

        # The approval policy: a plan that expands reach needs a second owner.
        tab.go("/")
        page.get_by_role("link", name="Change the approval policy").click()
        page.locator("#id_second_owner").select_option("required")
        page.get_by_role("button", name="Save the approval policy").click()
        expect(page.locator("#rule-second_owner")).to_contain_text("Required")
        axe_both_themes(tab, "approval-policy")

        # The upgrade to 2.2.0 adds payments.example.com: the asker may not approve it.
        mail.outbox.clear()
        tab.go("/")
        page.get_by_role("button", name="Plan the upgrade to 2.2.0").click()
        expect(page.locator("h1")).to_contain_text("upgrade Accounts Receivable 2.2.0")
        plan = Plan.objects.get(workspace=acme, status=Plan.State.PROPOSED)
        assert plan.expands_reach
        policy = page.locator("#plan-policy")
        expect(policy).to_contain_text("second owner")
        expect(page.get_by_role("button", name="Approve the whole plan")).to_be_disabled()
        expect(page.locator("#approve-blocked")).to_contain_text("approval policy")
        axe_both_themes(tab, "plan-blocked-by-policy")

        # The second owner was told by email, once, and approves from the link.
        told = [m for m in mail.outbox if member.email in m.to]
        assert len(told) == 1, [m.subject for m in mail.outbox]
        assert f"/admin/catalog/plan/{plan.pk}/review/" in told[0].body
        assert not [m for m in mail.outbox if owner.email in m.to]  # the asker knows
        second = person(member)
        second.go(f"/admin/catalog/plan/{plan.pk}/review/")
        second.page.get_by_role("button", name="Approve the whole plan").click()
        expect(second.page.locator("#plan-status")).to_have_text("Applied", timeout=60_000)
        expect(second.page.locator("#plan-policy")).to_contain_text("mia")

    assert Installation.objects.get(workspace=acme).bundle_version == demo_catalog["2.2.0"]
    plan.refresh_from_db()
    assert plan.decided_by == member
    assert any(rule.get("satisfied") for rule in plan.policy)
