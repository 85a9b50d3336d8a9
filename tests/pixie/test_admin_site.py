"""The admin as Pixie's site: its name on every page, plans and installations listed with the
workspaces they belong to, and breadcrumbs that go Home › section › list › object › page."""

import html
import re

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from agents.models import Agent
from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.roles import operators_group_ensure
from tests.clients import admin_for
from tests.factories import make_user
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


def crumbs(page) -> str:
    """The breadcrumbs as a person reads them."""
    content = page.content.decode() if hasattr(page, "content") else page
    found = re.search(r'<div class="breadcrumbs">(.*?)</div>', content, re.S)
    assert found, "the page has no breadcrumbs"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


def names_pixie(page) -> None:
    content = page.content.decode()
    assert "Django" not in content
    assert re.search(r"<title>[^<]*\| Pixie</title>", content), content[:400]
    assert '<div id="site-name"><a href="/admin/">Pixie</a></div>' in content


def test_every_page_a_person_signs_in_and_out_through_says_pixie(owner):
    anonymous = Client()
    names_pixie(anonymous.get(reverse("admin:login")))
    names_pixie(anonymous.get("/no-such-page/"))
    link = reverse(
        "password-set", args=[urlsafe_base64_encode(force_bytes(owner.pk)), "not-a-token"]
    )
    names_pixie(anonymous.get(link))  # the link no longer works: said in Pixie's words
    names_pixie(anonymous.get(reverse("password-set-done")))
    signed_in = admin_for(owner)
    for name in ("admin:index", "admin:password_change", "admin:password_change_done"):
        names_pixie(signed_in.get(reverse(name)))
    names_pixie(signed_in.post(reverse("admin:logout")))


def test_a_working_password_link_says_pixie_too(owner):
    uid = urlsafe_base64_encode(force_bytes(owner.pk))
    link = reverse("password-set", args=[uid, default_token_generator.make_token(owner)])
    answer = Client().get(link, follow=True)  # Django moves the token into the session
    assert answer.status_code == 200
    names_pixie(answer)


@pytest.fixture
def installed(acme, owner, demo_catalog, django_capture_on_commit_callbacks):
    agent = Agent.objects.create(workspace=acme, slug="collections", name="Collections agent")
    return install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, [agent])


def sections(page) -> dict[str, list[str]]:
    return {app["name"]: [m["name"] for m in app["models"]] for app in page.context["app_list"]}


def test_plans_and_installations_are_listed_with_the_workspaces_they_belong_to(owner, installed):
    client = admin_for(owner)
    index = sections(client.get(reverse("admin:index")))
    assert {"Plans", "Installations", "Workspaces"} <= set(index["Workspaces"])
    assert not {"Plans", "Installations"} & set(index["Catalog"])
    assert "Bundle versions" in index["Catalog"]
    # Each section's own page lists the same; the sidebar of every page too.
    assert "Plans" in sections(client.get(reverse("admin:app_list", args=["pixie"])))["Workspaces"]
    catalog = client.get(reverse("admin:app_list", args=["catalog"]))
    assert "Plans" not in sections(catalog)["Catalog"]
    sidebar = {a["name"]: a for a in catalog.context["available_apps"]}
    assert "Plans" in [m["name"] for m in sidebar["Workspaces"]["models"]]
    # Their addresses stay the app's own.
    assert reverse("admin:catalog_plan_changelist") == "/admin/catalog/plan/"
    assert reverse("admin:catalog_installation_changelist") == "/admin/catalog/installation/"


def test_an_operator_of_no_workspace_reads_the_catalog_section_whole(db):
    operator = make_user("opal", is_staff=True)
    operator.groups.add(operators_group_ensure())
    index = sections(admin_for(operator).get(reverse("admin:index")))
    assert "Bundle versions" in index["Catalog"] and "Plans" not in index["Catalog"]


def test_each_installer_page_leads_home_through_its_section_list_and_object(owner, installed):
    client = admin_for(owner)
    plan = installed
    installation = Installation.objects.get()
    expected = {
        reverse("admin:catalog_plan_changelist"): "Home › Workspaces › Plans",
        reverse("admin:catalog_plan_ask"): "Home › Workspaces › Plans › Ask for a plan",
        reverse("admin:catalog_plan_skill", args=[plan.pk, "invoice-chase"]): (
            f"Home › Workspaces › Plans › Plan #{plan.pk} › @invoice-chase"
        ),
        reverse("admin:catalog_plan_review", args=[plan.pk]): (
            f"Home › Workspaces › Plans › Plan #{plan.pk}"
        ),
        reverse("admin:catalog_plan_history", args=[plan.pk]): (
            f"Home › Workspaces › Plans › {plan} › History"
        ),
        reverse("admin:catalog_installation_changelist"): "Home › Workspaces › Installations",
        reverse("admin:catalog_installation_change", args=[installation.pk]): (
            f"Home › Workspaces › Installations › {installation}"
        ),
    }
    for url, words in expected.items():
        assert crumbs(client.get(url)) == words, url
    # Each step but the last is a link to its page.
    page = client.get(reverse("admin:catalog_plan_skill", args=[plan.pk, "invoice-chase"]))
    links = re.search(r'<div class="breadcrumbs">(.*?)</div>', page.content.decode(), re.S)
    assert re.findall(r'href="([^"]+)"', links.group(1)) == [
        reverse("admin:index"),
        reverse("admin:app_list", args=["pixie"]),
        reverse("admin:catalog_plan_changelist"),
        reverse("admin:catalog_plan_review", args=[plan.pk]),
    ]


def test_each_page_of_a_workspace_skill_leads_home_through_the_skill(owner, installed):
    client = admin_for(owner)
    skill = WorkspaceSkill.objects.get(slug="invoice-chase")
    under = f"Home › Catalog › Workspace skills › {skill}"
    for name, where in (
        ("catalog_workspaceskill_edit", "Edit"),
        ("catalog_workspaceskill_rename", "Rename"),
        ("catalog_workspaceskill_share", "Share with a contact"),
        ("catalog_workspaceskill_compare", "Compare revisions"),
    ):
        assert crumbs(client.get(reverse(f"admin:{name}", args=[skill.pk]))) == (
            f"{under} › {where}"
        ), name
    page = client.get(reverse("admin:catalog_workspaceskill_text", args=[skill.pk, 1]))
    assert crumbs(page) == f"{under} › Revision 1"
    assert Plan.objects.count() == 1  # reading changed nothing


def test_a_crumb_to_a_list_the_reader_may_not_open_is_named_not_linked(db):
    operator = make_user("opal", is_staff=True)
    operator.groups.add(operators_group_ensure())
    client = admin_for(operator)
    page = client.get(reverse("admin:catalog_plan_ask"))
    assert page.status_code == 200
    assert crumbs(page) == "Home › Workspaces › Plans › Ask for a plan"
    assert reverse("admin:catalog_plan_changelist") + '"' not in page.content.decode()
    assert client.get(reverse("admin:catalog_plan_changelist")).status_code == 403
