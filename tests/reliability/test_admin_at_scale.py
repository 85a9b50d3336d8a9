"""The admin's heaviest pages stay bounded on bench_seed data: queries and page size."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from agents.admin.pages import MENU_LIMIT
from agents.models import Agent, AgentSkill
from benchmarks.bench_data import SeedSizes, seed
from catalog.models import Bundle, BundleVersion
from pixie.core.models import Membership
from pixie.installer.plans import plan_create

pytestmark = pytest.mark.django_db

BUNDLES = 300
SKILLS = MENU_LIMIT + 100


@pytest.fixture
def world():
    fleet = seed(
        sizes=SeedSizes(
            workspaces=1,
            skills_per_workspace=SKILLS,
            agents_per_workspace=2,
            skills_per_agent=50,
            bundles=BUNDLES,
            skills_per_bundle=2,
        )
    )
    big = seed(sizes=SeedSizes(workspaces=0, bundles=1, skills_per_bundle=50), prefix="big")
    owner = Membership.objects.get(workspace_id=fleet.workspace_ids[0], role="owner").user
    return {
        "operator": get_user_model().objects.get(pk=fleet.operator_id),
        "owner": owner,
        "workspace": owner.memberships.get().workspace,
        "agent": Agent.objects.filter(workspace_id=fleet.workspace_ids[0]).first(),
        "big": BundleVersion.objects.get(pk=big.bundle_version_ids[0]),
    }


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_bundle_list_of_hundreds_is_bounded_and_counts_versions(
    world, django_assert_max_num_queries
):
    client = browser(world["operator"])
    with django_assert_max_num_queries(10):
        page = client.get(reverse("admin:catalog_bundle_changelist"))
    assert page.status_code == 200
    first = Bundle.objects.order_by("name").first()
    rows = page.context["cl"].result_list
    assert rows[0] == first and rows[0].version_count == 1
    assert page.context["cl"].result_count == BUNDLES + 1


def test_the_plan_page_of_a_fifty_skill_plan_is_bounded(world, django_assert_max_num_queries):
    plan = plan_create(
        workspace=world["workspace"],
        kind="install",
        bundle_version=world["big"],
        actor=world["owner"],
    )
    client = browser(world["owner"])
    with django_assert_max_num_queries(12):
        page = client.get(reverse("admin:catalog_plan_review", args=[plan.pk]))
    assert page.content.decode().count('tag add">create') == 50


def test_the_agent_pages_with_fifty_skills_are_bounded(world, django_assert_max_num_queries):
    client = browser(world["owner"])
    for name in ("admin:agents_agent_change", "admin:agents_agent_skills"):
        with django_assert_max_num_queries(15):
            page = client.get(reverse(name, args=[world["agent"].pk]))
        assert page.status_code == 200, name


def test_a_big_workspace_types_the_skill_to_attach_instead_of_a_huge_menu(world):
    agent = world["agent"]
    client = browser(world["owner"])
    page = client.get(reverse("admin:agents_agent_skills", args=[agent.pk])).content.decode()
    assert 'name="skill_slug"' in page
    assert page.count("<option") < MENU_LIMIT
    free = (
        world["workspace"].skills.exclude(agent_skills__agent=agent).order_by("slug").first().slug
    )
    client.post(
        reverse("admin:agents_agent_skills_change", args=[agent.pk]),
        {"action": "attach", "skill_slug": f"@{free}", "pinned": "on"},
    )
    assert AgentSkill.objects.filter(agent=agent, skill__slug=free).exists()
