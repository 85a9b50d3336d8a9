"""Delivery's page of a workspace, as each role reaches it: owners make, rotate and revoke
tokens (a URL shown once), members and auditors read, operators of other workspaces meet a
404; the clients list says who runs what and who is behind after an upgrade."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from pixie.core.people.permissions import AUDITORS_GROUP, OPERATORS_GROUP
from pixie.delivery.models import DeliveryClient, DeliveryToken
from pixie.installer.plans import plan_create
from tests.clients import admin_for
from tests.factories import make_user
from tests.installer.flow import approve_and_apply, install

URL_SHOWN = re.compile(r"http://testserver/deliver/(pxd_[A-Za-z0-9_-]+)/")
CLI = "skills/1.7.4 node"


def page_url(workspace, agent=None):
    url = reverse("admin:pixie_workspace_delivery", args=[workspace.pk])
    return f"{url}?agent={agent.pk}" if agent else url


def fetch_all(client, secret, *, user_agent=CLI, address="203.0.113.7", update=False):
    """What the skills client does on `skills add`: the index, then every archive."""
    headers = {"HTTP_USER_AGENT": user_agent, "REMOTE_ADDR": address}
    if update:
        headers["HTTP_X_SKILLS_UPDATE_CHECK"] = "1"
    base = f"/deliver/{secret}/"
    index = client.get(base + ".well-known/agent-skills/index.json", **headers)
    assert index.status_code == 200, index.content
    for entry in index.json()["skills"]:
        archive = client.get(base + entry["url"].removeprefix("../../"), **headers)
        assert archive.status_code == 200
    return index.json()


def test_an_owner_makes_a_token_sees_its_url_once_and_its_clients_after_an_upgrade(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    collections = agents[0]  # follows the latest: an upgrade moves what it is served
    installing = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner,
        agents=[collections], following=[collections],
    )  # fmt: skip
    approve_and_apply(installing, owner, django_capture_on_commit_callbacks)
    browser = admin_for(owner)
    made = browser.post(
        page_url(acme, collections),
        {"action": "make", "name": "Collections laptops", "delivers": str(collections.pk)},
    )
    assert made.status_code == 200
    page = made.content.decode()
    secret = URL_SHOWN.search(page)[1]
    assert "Copy the delivery URL of “Collections laptops” now" in page
    assert "DISABLE_TELEMETRY=1 npx skills add" in page and "skills-lock.json" in page
    assert "no-store" in made["Cache-Control"]
    token = DeliveryToken.objects.get()
    assert token.agent == collections and token.created_by == owner
    assert secret not in browser.get(page_url(acme)).content.decode()  # shown once

    served = fetch_all(browser, secret)
    assert [s["name"] for s in served["skills"]] == [
        "ar-ground-rules", "invoice-chase", "take-payment", "apply-credit-note"
    ]  # fmt: skip
    page = browser.get(page_url(acme)).content.decode()
    assert CLI in page and "203.0.113.0/24" in page and "203.0.113.7" not in page
    assert 'id="behind"' not in page and "pill behind" not in page

    upgrade = plan_create(workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"],
                          actor=owner)  # fmt: skip
    approve_and_apply(upgrade, owner, django_capture_on_commit_callbacks)
    page = browser.get(page_url(acme)).content.decode()
    assert f"@invoice-chase: 1 client behind since plan #{upgrade.pk} upgraded to 2.2.0" in page
    fetch_all(browser, secret, update=True)
    page = browser.get(page_url(acme)).content.decode()
    assert 'id="behind"' not in page and "pill behind" not in page


def test_rotate_and_revoke_with_a_confirmation(acme, owner, agents):
    browser = admin_for(owner)
    made = browser.post(page_url(acme), {"action": "make", "name": "Everyone", "delivers": ""})
    first = URL_SHOWN.search(made.content.decode())[1]
    token = DeliveryToken.objects.get()
    rotated = browser.post(page_url(acme), {"action": "rotate", "token": token.pk})
    second = URL_SHOWN.search(rotated.content.decode())[1]
    assert second != first
    assert browser.get(f"/deliver/{first}/.well-known/agent-skills/index.json").status_code == 404
    assert browser.get(f"/deliver/{second}/.well-known/agent-skills/index.json").status_code == 200
    live = DeliveryToken.objects.get(revoked_at=None)
    asked = browser.post(page_url(acme), {"action": "revoke", "token": live.pk})
    assert "Revoke “Everyone”?" in asked.content.decode()
    live.refresh_from_db()
    assert live.revoked_at is None  # nothing until confirmed
    done = browser.post(page_url(acme), {"action": "revoke", "token": live.pk,
                                         "confirmed": "yes"}, follow=True)  # fmt: skip
    assert "Revoked the delivery token" in done.content.decode()
    assert browser.get(f"/deliver/{second}/.well-known/agent-skills/index.json").status_code == 404


def test_members_and_auditors_read_operators_of_other_workspaces_meet_a_404(acme, owner, member):
    admin_for(owner).post(page_url(acme), {"action": "make", "name": "Everyone", "delivers": ""})
    reader = admin_for(member)
    page = reader.get(page_url(acme)).content.decode()
    assert "Everyone" in page and 'id="make-token"' not in page and "Rotate" not in page
    assert "Only an owner makes, rotates and revokes delivery tokens." in page
    refused = reader.post(page_url(acme), {"action": "make", "name": "Mine", "delivers": ""},
                          follow=True)  # fmt: skip
    assert "Only an owner of" in refused.content.decode()
    assert DeliveryToken.objects.count() == 1
    token = DeliveryToken.objects.get()
    reader.post(page_url(acme), {"action": "revoke", "token": token.pk, "confirmed": "yes"})
    token.refresh_from_db()
    assert token.revoked_at is None

    auditor = make_user("audra")
    auditor.groups.add(Group.objects.get_or_create(name=AUDITORS_GROUP)[0])
    page = admin_for(auditor).get(page_url(acme))
    assert page.status_code == 200 and 'id="make-token"' not in page.content.decode()
    operator = make_user("opal")
    operator.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    assert admin_for(operator).get(page_url(acme)).status_code == 404


@pytest.mark.parametrize("clients", [2, 40])
def test_the_page_costs_the_same_queries_whatever_its_clients(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks,
    django_assert_max_num_queries, clients,
):  # fmt: skip
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
            agents=agents)  # fmt: skip
    browser = admin_for(owner)
    for agent in agents:
        made = browser.post(page_url(acme), {"action": "make", "name": agent.name,
                                             "delivers": str(agent.pk)})  # fmt: skip
        secret = URL_SHOWN.search(made.content.decode())[1]
        for n in range(clients // 2):
            fetch_all(browser, secret, address=f"198.51.{n}.9")
    assert DeliveryClient.objects.count() == clients
    with django_assert_max_num_queries(26):
        assert browser.get(page_url(acme)).status_code == 200


def test_a_maker_who_leaves_leaves_the_tokens_working_and_the_owners_told(acme, owner, agents):
    from pixie.core.models import Membership, Notification
    from pixie.installer.offboarding import login_deactivate

    olga = make_user("olga")
    Membership.objects.create(workspace=acme, user=olga, role=Membership.Role.OWNER)
    made = admin_for(olga).post(page_url(acme), {"action": "make", "name": "Olga's runner",
                                                 "delivers": ""})  # fmt: skip
    secret = URL_SHOWN.search(made.content.decode())[1]
    login_deactivate(user=olga, actor=owner)
    index = admin_for(owner).get(f"/deliver/{secret}/.well-known/agent-skills/index.json")
    assert index.status_code == 200
    told = Notification.objects.get(user=owner, kind="delivery_maker_left")
    assert told.title == "olga left; the delivery tokens they made still work: Olga's runner"
    assert told.url == page_url(acme)
    page = admin_for(owner).get(page_url(acme)).content.decode()
    assert "by olga <span class=\"quiet\">(left; the token stays the workspace's)</span>" in page


def test_clients_not_seen_for_the_kept_days_are_forgotten_by_the_periodic_task(
    acme, owner, agents, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from pixie.delivery.tasks import forget_old_clients

    browser = admin_for(owner)
    made = browser.post(page_url(acme), {"action": "make", "name": "Everyone", "delivers": ""})
    secret = URL_SHOWN.search(made.content.decode())[1]
    fetch_all(browser, secret, address="198.51.100.1")
    fetch_all(browser, secret, address="192.0.2.1")
    old = timezone.now() - timedelta(days=settings.PIXIE_DELIVERY_CLIENT_DAYS + 1)
    DeliveryClient.objects.filter(network="198.51.100.0/24").update(last_seen=old)
    assert forget_old_clients.delay().get() == 1
    assert list(DeliveryClient.objects.values_list("network", flat=True)) == ["192.0.2.0/24"]


def test_an_agents_page_marks_an_unadvertised_skill_as_not_delivered(
    acme, owner, member, agents, demo_catalog, django_capture_on_commit_callbacks
):
    from catalog.models import WorkspaceSkill
    from catalog.services.workspace_skills import skill_set_advertised

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
            agents=[agents[0]])  # fmt: skip
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    skill_set_advertised(skill=chase, advertised=False, actor=owner)
    url = reverse("admin:agents_agent_skills", args=[agents[0].pk])
    page = admin_for(member).get(url).content.decode()
    row = page.split("@invoice-chase", 1)[1].split("</tr>", 1)[0]
    assert "not delivered: not advertised" in row
    assert page.count("not delivered: not advertised") == 1
    change = admin_for(member).get(reverse("admin:agents_agent_change", args=[agents[0].pk]))
    assert f'{page_url(acme, agents[0])}">Delivery</a>' in change.content.decode()


def test_a_refused_name_keeps_what_the_owner_typed_and_makes_nothing(acme, owner, agents):
    browser = admin_for(owner)
    refused = browser.post(page_url(acme), {"action": "make", "name": "x" * 81, "delivers": ""})
    page = refused.content.decode()
    assert refused.status_code == 200 and "x" * 81 in page
    assert "Ensure this value has at most 80 characters" in page
    blank = browser.post(page_url(acme), {"action": "make", "name": "  ", "delivers": ""})
    assert "This field is required." in blank.content.decode() or "give the token a name" in (
        blank.content.decode()
    )
    assert DeliveryToken.objects.count() == 0


def test_a_client_still_running_a_yanked_version_is_marked(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks, operator
):
    from catalog.services.publishing import bundle_version_yank

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
            agents=[agents[0]])  # fmt: skip
    browser = admin_for(owner)
    made = browser.post(page_url(acme), {"action": "make", "name": "Desk", "delivers": ""})
    fetch_all(browser, URL_SHOWN.search(made.content.decode())[1])
    bundle_version_yank(bundle_version=demo_catalog["2.1.0"], actor=operator,
                        reason="Chases too early")  # fmt: skip
    page = browser.get(page_url(acme)).content.decode()
    # invoice-chase changed in 2.2.0: its 2.1.0 text is in no version that is not yanked;
    # the other three skills are the same versions in 2.2.0, which is not.
    assert page.count("yanked 2.1.0") == 1
    holds = page.split("@invoice-chase r1", 1)[1].split("</li>", 1)[0]
    assert '<span class="pill yanked">yanked 2.1.0</span>' in holds


def test_the_claude_code_part_gives_the_managed_settings_for_the_token_picked(
    acme, owner, member, agents, demo_catalog, django_capture_on_commit_callbacks, settings
):
    import html
    import json

    settings.PIXIE_SITE_URL, settings.PIXIE_SITE_URL_GIVEN = "https://pixie.example.com", True
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
            agents=agents)  # fmt: skip
    browser = admin_for(owner)
    page = browser.get(page_url(acme)).content.decode()
    assert "No token for the whole workspace yet" in page
    made = browser.post(page_url(acme), {"action": "make", "name": "Claude seats",
                                         "delivers": ""}).content.decode()  # fmt: skip
    secret = re.search(r"https://pixie.example.com/deliver/(pxd_[A-Za-z0-9_-]+)/", made)[1]
    assert f"PIXIE_DELIVERY_TOKEN={secret}" in made
    token = DeliveryToken.objects.get()
    for reader in (browser, admin_for(member)):
        page = reader.get(f"{page_url(acme)}?claude={token.pk}&strict=1").content.decode()
        snippet = json.loads(html.unescape(page.split('<pre id="managed-settings">', 1)[1]
                                           .split("</pre>", 1)[0]))  # fmt: skip
        url = "https://pixie.example.com/claude/marketplace.json"
        assert snippet == {
            "extraKnownMarketplaces": {"pixie-acme": {"source": {
                "source": "url", "url": url,
                "headers": {"Authorization": "Bearer ${PIXIE_DELIVERY_TOKEN}"}},
                "autoUpdate": True}},
            "enabledPlugins": {"accounts-receivable@pixie-acme": True},
            "strictKnownMarketplaces": [{"source": "url", "url": url}],
        }  # fmt: skip
        assert secret not in page and "Claude seats" in page
    settings.PIXIE_SITE_URL_GIVEN = False
    page = browser.get(page_url(acme)).content.decode()
    assert "a marketplace behind plain HTTP cannot serve it" in page
