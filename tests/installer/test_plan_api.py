"""The plan API, as an owner's script or another service drives it."""

import pytest
from rest_framework.test import APIClient

from catalog.models import Installation, Plan, WorkspaceSkill
from egress.models import CredentialRequirement
from tests.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def api(owner):
    return client_for(owner)


def create_plan(api, **body):
    return api.post("/api/workspaces/acme/plans/", body, format="json")


def approve(api, plan_id, capture):
    with capture(execute=True):
        return api.post(f"/api/workspaces/acme/plans/{plan_id}/approve/")


def test_owner_installs_edits_and_upgrades_through_the_api(
    api, acme, agents, demo_catalog, django_capture_on_commit_callbacks
):
    response = create_plan(
        api, kind="install", bundle="accounts-receivable", version="2.1.0",
        agents=["collections", "front-desk"],
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    plan = response.json()
    assert set(plan) >= {"id", "kind", "status", "summary", "expands_reach", "steps"}
    assert (plan["status"], plan["expands_reach"]) == ("proposed", True)

    response = approve(api, plan["id"], django_capture_on_commit_callbacks)
    assert response.status_code == 202
    assert api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()["status"] == "applied"

    skills = api.get("/api/workspaces/acme/skills/").json()["results"]
    assert len(skills) == 4
    chase = api.get("/api/workspaces/acme/skills/invoice-chase/").json()
    response = api.patch(
        "/api/workspaces/acme/skills/invoice-chase/",
        {"body": chase["body"] + "\n\nCopy the account manager."},
        format="json",
    )
    assert response.status_code == 200 and response.json()["revision"] == 2

    response = create_plan(api, kind="upgrade", bundle="accounts-receivable", version="2.2.0")
    plan = response.json()
    assert response.status_code == 201, plan
    fork = next(s for s in plan["steps"] if s["type"] == "skill.fork")
    assert fork["slug"] == "invoice-chase"
    assert any(
        s["type"] == "egress.add" and s["host"] == "payments.example.com" for s in plan["steps"]
    )
    assert any(
        s["type"] == "credential.require" and s["name"] == "PAYMENTS_API_KEY" for s in plan["steps"]
    )
    assert plan["expands_reach"] is True


def test_credentials_are_confirmed_by_name_and_never_take_a_value(
    api, acme, demo_catalog, django_capture_on_commit_callbacks
):
    plan = create_plan(api, kind="install", bundle="accounts-receivable", version="2.1.0").json()
    approve(api, plan["id"], django_capture_on_commit_callbacks)
    listed = api.get("/api/workspaces/acme/credentials/").json()["results"]
    assert [(c["name"], c["confirmed"]) for c in listed] == [("LEDGER_API_TOKEN", False)]
    response = api.post(
        "/api/workspaces/acme/credentials/LEDGER_API_TOKEN/confirm/",
        {"value": "sk-live-canary-123"},
        format="json",
    )
    assert response.status_code == 200 and response.json()["confirmed"] is True
    assert "sk-live-canary-123" not in str(CredentialRequirement.objects.values())


def test_bad_plan_requests_name_the_problem_and_create_nothing(api, acme, demo_catalog):
    cases = [
        ({"kind": "install", "bundle": "accounts-receivable"}, "version"),
        ({"kind": "explode", "bundle": "accounts-receivable", "version": "2.1.0"}, "kind"),
        ({"kind": "install", "bundle": "accounts-receivable", "version": "9.9.9"}, "No published"),
        (
            {
                "kind": "install",
                "bundle": "accounts-receivable",
                "version": "2.1.0",
                "agents": ["ghost"],
            },
            "no agent 'ghost'",
        ),
        (
            {"kind": "install", "bundle": "accounts-receivable", "version": "2.1.0", "force": True},
            "force",
        ),
        ({"kind": "upgrade", "bundle": "accounts-receivable", "version": "2.2.0"}, "not installed"),
    ]
    for body, needle in cases:
        response = create_plan(api, **body)
        assert response.status_code == 400, (body, response.json())
        assert needle in str(response.json()), (body, response.json())
    assert not Plan.objects.exists()


def test_members_read_plans_but_cannot_approve_or_edit(
    acme, owner, member, demo_catalog, django_capture_on_commit_callbacks
):
    plan = create_plan(
        client_for(owner), kind="install", bundle="accounts-receivable", version="2.1.0"
    ).json()
    as_member = client_for(member)
    assert as_member.get(f"/api/workspaces/acme/plans/{plan['id']}/").status_code == 200
    response = approve(as_member, plan["id"], django_capture_on_commit_callbacks)
    assert response.status_code == 403 and response.json()["code"] == "owner_required"
    assert Plan.objects.get().status == "proposed"
    assert (
        create_plan(
            as_member, kind="install", bundle="accounts-receivable", version="2.1.0"
        ).status_code
        == 403
    )


def test_other_workspaces_and_anonymous_users_see_nothing(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    plan = create_plan(
        client_for(owner), kind="install", bundle="accounts-receivable", version="2.1.0"
    ).json()
    stranger = make_user("stranger")
    make_workspace("globex", owner=stranger)
    as_stranger = client_for(stranger)
    for url in [
        f"/api/workspaces/acme/plans/{plan['id']}/",
        "/api/workspaces/acme/plans/",
        "/api/workspaces/acme/skills/",
        "/api/workspaces/acme/credentials/",
    ]:
        assert as_stranger.get(url).status_code == 404
        assert APIClient().get(url).status_code == 401
    assert approve(as_stranger, plan["id"], django_capture_on_commit_callbacks).status_code == 404
    assert as_stranger.get(f"/api/workspaces/globex/plans/{plan['id']}/").status_code == 404
    assert Plan.objects.get().status == "proposed"


def test_approving_twice_says_already_approved(
    api, acme, demo_catalog, django_capture_on_commit_callbacks
):
    plan = create_plan(api, kind="install", bundle="accounts-receivable", version="2.1.0").json()
    assert approve(api, plan["id"], django_capture_on_commit_callbacks).status_code == 202
    again = approve(api, plan["id"], django_capture_on_commit_callbacks)
    assert again.status_code == 409 and "already applied" in again.json()["detail"]
    assert Installation.objects.count() == 1


def test_reject_needs_a_reason(api, acme, demo_catalog):
    plan = create_plan(api, kind="install", bundle="accounts-receivable", version="2.1.0").json()
    url = f"/api/workspaces/acme/plans/{plan['id']}/reject/"
    assert api.post(url, {}, format="json").status_code == 400
    response = api.post(url, {"reason": "Not this quarter"}, format="json")
    assert response.json()["status"] == "rejected"
    assert not WorkspaceSkill.objects.exists()


@pytest.mark.parametrize("size", [5, 50])
def test_plan_creation_runs_bounded_queries_whatever_the_bundle_size(
    size, api, acme, owner, django_assert_max_num_queries
):
    from catalog.services import bundle_version_publish
    from tests.factories import make_bundle_version, make_skill_version

    skills = [make_skill_version(f"step-{i}", body="Use @query-ledger.") for i in range(size)]
    bundle_version = make_bundle_version("big", skills=skills)
    bundle_version_publish(bundle_version=bundle_version, actor=owner)
    # 30: the revision's audit entry (pixie.core.audit.records), and its place in the workspace's
    # chain
    # of digests (pixie.core.audit.chain): this is the workspace's first, so the chain starts
    # (read, start, lock, extend); a later change costs two.
    with django_assert_max_num_queries(30):
        response = create_plan(api, kind="install", bundle="big", version="1.0.0")
    assert response.status_code == 201
    assert len([s for s in response.json()["steps"] if s["type"] == "skill.create"]) == size


def test_applying_a_plan_runs_the_same_queries_whatever_the_bundle_size(
    api, acme, owner, agents, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from catalog.services import bundle_version_publish
    from tests.factories import make_bundle_version, make_skill_version

    costs, history_inserts = {}, {}
    for size in (1, 5, 50):  # the first warms per-process caches (content types)
        skills = [
            make_skill_version(f"s{size}-step-{i}", body="Use @query-ledger.") for i in range(size)
        ]
        bundle = make_bundle_version(f"big-{size}", skills=skills)
        bundle_version_publish(bundle_version=bundle, actor=owner)
        plan = create_plan(
            api, kind="install", bundle=f"big-{size}", version="1.0.0",
            agents=[a.slug for a in agents],
        ).json()  # fmt: skip
        with CaptureQueriesContext(connection) as queries:
            assert approve(api, plan["id"], django_capture_on_commit_callbacks).status_code == 202
        assert Plan.objects.get(pk=plan["id"]).status == "applied"
        costs[size] = len(queries)
        history_inserts[size] = sum('INSERT INTO "reversion_version"' in q["sql"] for q in queries)
    # The approval and the apply it queues (run on commit here), agents attached; each
    # of their two revisions locks and extends the workspace's chain (two queries each);
    # the install's generation 1 (its number, its row, the plan naming its installation);
    # the check of the publisher's signature (the version with its key, its skills, their
    # files, its hosts, its credentials: five; the files' bytes are a sixth when it has files);
    # reversion's check that each recorded model's rows still exist (one read a model).
    assert costs[5] - history_inserts[5] == costs[50] - history_inserts[50] <= 76, costs
    # Each revision's history rows are one INSERT; on SQLite, Django 5.2 sends at most 999
    # parameters a statement (7 a history row), so a large apply's takes a few.
    assert history_inserts[5] == 2, history_inserts  # the approval's and the apply's
    assert history_inserts[50] == (2 if connection.vendor == "postgresql" else 3)
    assert WorkspaceSkill.objects.filter(workspace=acme).count() == 56
