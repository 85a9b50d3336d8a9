"""Two bundles that share a skill: the second install reuses it, and an agent that
already has it is not given it twice."""

import pytest

from agents.models import AgentSkill
from catalog.models import Plan, WorkspaceSkill
from tests.installer.digest import workspace_digest
from tests.installer.test_plan_api import approve, client_for, create_plan
from tests.installer.test_plan_pages import browser, review_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(owner):
    return client_for(owner)


@pytest.fixture
def two_bundles(owner):
    """`alpha` and `beta` both name the same version of @shared, plus one skill of their own."""
    from catalog.services import bundle_version_publish
    from tests.factories import make_bundle_version, make_skill_version

    shared = make_skill_version("shared", body="Check the ledger with @query-ledger.")
    for slug in ("alpha", "beta"):
        own = make_skill_version(f"{slug}-only", body="Say hello.")
        version = make_bundle_version(slug, skills=[shared, own])
        bundle_version_publish(bundle_version=version, actor=owner)


def attached(agent):
    return list(
        AgentSkill.objects.filter(agent=agent)
        .order_by("position")
        .values_list("skill__slug", flat=True)
    )


def install(api, capture, bundle, agents):
    plan = create_plan(
        api, kind="install", bundle=bundle, version="1.0.0", agents=[a.slug for a in agents]
    ).json()
    assert approve(api, plan["id"], capture).status_code == 202
    return api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()


def test_a_reused_skill_an_agent_already_has_is_not_attached_again(
    api, acme, agents, two_bundles, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    collections, front_desk = agents
    first = install(api, capture, "alpha", [collections])
    assert first["status"] == "applied", first["error"]

    plan = create_plan(
        api, kind="install", bundle="beta", version="1.0.0",
        agents=[collections.slug, front_desk.slug],
    ).json()  # fmt: skip
    steps = plan["steps"]
    assert [s["slug"] for s in steps if s["type"] == "skill.reuse"] == ["shared"]
    attach = {s["agent"]: s["skills"] for s in steps if s["type"] == "agent.attach"}
    # Collections agent has @shared from alpha: only beta's own skill is attached to it.
    assert attach == {
        "Collections agent": ["beta-only"],
        "Front desk agent": ["shared", "beta-only"],
    }
    (has,) = [s for s in steps if s["type"] == "agent.has"]
    assert (has["agent"], has["skills"]) == ("Collections agent", ["shared"])
    assert "already" in has["reason"]

    assert approve(api, plan["id"], capture).status_code == 202
    applied = api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()
    assert applied["status"] == "applied", applied["error"]
    assert attached(collections) == ["shared", "alpha-only", "beta-only"]
    assert attached(front_desk) == ["shared", "beta-only"]
    assert WorkspaceSkill.objects.filter(workspace=acme, slug="shared").count() == 1


def test_the_plan_page_says_which_skills_an_agent_already_has(
    api, acme, owner, agents, two_bundles, django_capture_on_commit_callbacks
):
    collections = agents[0]
    install(api, django_capture_on_commit_callbacks, "alpha", [collections])
    plan = create_plan(
        api, kind="install", bundle="beta", version="1.0.0", agents=[collections.slug]
    ).json()
    response = browser(owner).get(review_url(Plan.objects.get(pk=plan["id"])))
    assert response.status_code == 200
    page = response.content.decode()
    assert "already has" in page
    assert "Collections agent" in page and "@shared" in page


def test_an_attachment_made_after_planning_makes_the_plan_stale(
    api, acme, agents, two_bundles, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    collections, front_desk = agents
    install(api, capture, "alpha", [collections])
    plan = create_plan(
        api, kind="install", bundle="beta", version="1.0.0", agents=[front_desk.slug]
    ).json()
    shared = WorkspaceSkill.objects.get(workspace=acme, slug="shared")
    AgentSkill.objects.create(agent=front_desk, skill=shared, position=1)
    before = workspace_digest()

    assert approve(api, plan["id"], capture).status_code == 202
    stale = api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()
    assert stale["status"] == "stale"
    assert "agents' skills changed" in stale["error"]
    assert workspace_digest() == before


def test_an_apply_the_database_refuses_says_what_went_wrong_in_words_and_changes_nothing(
    api, acme, owner, agents, two_bundles, django_capture_on_commit_callbacks
):
    """A plan whose attach step names a skill the agent already has (as plans computed
    before agents' attachments were read did) fails in words, not as a database error."""
    capture = django_capture_on_commit_callbacks
    collections = agents[0]
    install(api, capture, "alpha", [collections])
    plan = create_plan(
        api, kind="install", bundle="beta", version="1.0.0", agents=[collections.slug]
    ).json()
    stored = Plan.objects.get(pk=plan["id"])
    for step in stored.steps:
        if step["type"] == "agent.attach":
            step["skills"] = ["shared", *step["skills"]]
    stored.save(update_fields=["steps"])
    before = workspace_digest()

    assert approve(api, plan["id"], capture).status_code == 202
    failed = api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()
    assert failed["status"] == "failed"
    assert failed["error"] == (
        f"Plan #{plan['id']} could not be applied: @shared is already attached to "
        "Collections agent. Nothing was changed; create a new plan."
    )
    assert workspace_digest() == before
    response = browser(owner).get(review_url(Plan.objects.get(pk=plan["id"])))
    assert response.status_code == 200
    page = response.content.decode()
    assert "@shared is already attached to Collections agent" in page
    assert "constraint" not in page.lower()


@pytest.mark.parametrize(
    "attach, why, logged",
    [
        # Inserted twice in one apply: the unique constraint refuses the second row.
        (
            ["beta-only", "beta-only"],
            "something it would add is already in the workspace",
            "UNIQUE",
        ),
        # A slug no skill has: a bug, not the owner's doing.
        (
            ["nowhere"],
            "an unexpected error stopped it (the details are in the server log)",
            "KeyError",
        ),
    ],
)
def test_an_apply_that_breaks_unexpectedly_shows_words_and_logs_the_error(
    attach, why, logged, api, acme, agents, two_bundles, caplog,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    plan = create_plan(
        api, kind="install", bundle="beta", version="1.0.0", agents=[agents[0].slug]
    ).json()
    stored = Plan.objects.get(pk=plan["id"])
    for step in stored.steps:
        if step["type"] == "agent.attach":
            step["skills"] = attach
    stored.save(update_fields=["steps"])
    before = workspace_digest()

    assert approve(api, plan["id"], django_capture_on_commit_callbacks).status_code == 202
    failed = api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()
    assert failed["status"] == "failed"
    assert failed["error"] == (
        f"Plan #{plan['id']} could not be applied: {why}. Nothing was changed; create a new plan."
    )
    assert workspace_digest() == before
    (record,) = [r for r in caplog.records if r.getMessage().endswith("failed to apply")]
    assert logged.lower() in record.exc_text.lower()
