"""Generations and rollback: every applied plan makes a numbered generation of its
installation, and "roll back to generation N" is a plan like any other, reviewed,
approved and applied by the worker, that returns the installation's skills, egress rules
and credential requirements to what generation N left."""

import hashlib
import json

import pytest
from django.urls import reverse

from agents.models import Agent, AgentSkill
from catalog.models import Generation, Installation, Plan, WorkspaceSkill
from catalog.services import bundle_version_yank
from egress.models import CredentialRequirement, EgressRule
from pixie.core.models import AuditEntry
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db


def content_digest(workspace) -> str:
    """What the workspace holds, not how it got there: each live skill's text and files,
    the hosts, the credential names, the installed version and the agents' skills."""
    skills = (
        WorkspaceSkill.objects.filter(workspace=workspace, archived_at=None)
        .select_related("head")
        .order_by("slug")
    )
    state = {
        "skills": [
            {
                "slug": s.slug,
                "text": [
                    s.head.name,
                    s.head.short_description,
                    s.head.body,
                    s.head.frontmatter,
                    s.head.approvals,
                ],
                "files": sorted(s.head.files.values_list("path", "blob_id", "executable")),
            }  # fmt: skip
            for s in skills
        ],
        "hosts": sorted(
            EgressRule.objects.filter(workspace=workspace).values_list("host", "port", "purpose")
        ),
        "credentials": sorted(
            CredentialRequirement.objects.filter(workspace=workspace).values_list(
                "name", "host", "purpose"
            )
        ),
        "installed": list(
            Installation.objects.filter(workspace=workspace).values_list(
                "bundle__slug", "bundle_version__version"
            )
        ),
        "agents": sorted(
            AgentSkill.objects.filter(agent__workspace=workspace).values_list(
                "agent__slug", "skill__slug"
            )
        ),
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()


@pytest.fixture
def upgraded(demo_catalog, django_capture_on_commit_callbacks):
    """acme installed 2.1.0 (generation 1) for its agent, then upgraded to 2.2.0 (2)."""
    owner = make_user("olive")
    member = make_user("mia")
    workspace = make_workspace("acme", owner=owner, members=[member])
    agent = Agent.objects.create(workspace=workspace, slug="collections", name="Collections")
    capture = django_capture_on_commit_callbacks
    installed = install(workspace, demo_catalog["2.1.0"], owner, capture, [agent])
    after_install = content_digest(workspace)
    answer = api_for(owner).post(
        "/api/workspaces/acme/plans/",
        {"kind": "upgrade", "bundle": "accounts-receivable", "version": "2.2.0"},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    upgrade = approve_and_apply(Plan.objects.get(pk=answer.json()["id"]), owner, capture)
    assert upgrade.status == Plan.State.APPLIED
    return {
        "workspace": workspace, "owner": owner, "member": member, "agent": agent,
        "install": installed, "upgrade": upgrade, "after_install": after_install,
        "capture": capture,
    }  # fmt: skip


def test_each_applied_plan_is_a_generation_listed_with_the_installation(upgraded):
    answer = api_for(upgraded["member"]).get("/api/workspaces/acme/installations/")
    assert answer.status_code == 200
    (installation,) = answer.json()["results"]
    generations = installation["generations"]
    assert installation["generation_count"] == 2
    assert [(g["number"], g["version"], g["kind"], g["plan"]) for g in generations] == [
        (2, "2.2.0", "upgrade", upgraded["upgrade"].pk),
        (1, "2.1.0", "install", upgraded["install"].pk),
    ]
    assert installation["generations"][0]["summary"] == upgraded["upgrade"].summary
    assert installation["generations"][0]["by"] == "olive"


def test_an_installation_shows_its_latest_generations_and_pages_through_the_rest(
    upgraded, monkeypatch
):
    """However many plans an installation has had, its page and its API entry stay one
    size: the latest generations, and the older ones a page away."""
    from pixie.installer import admin as installer_admin
    from pixie.installer.api import views as installer_api

    monkeypatch.setattr(installer_api, "LATEST_GENERATIONS", 1)
    monkeypatch.setattr(installer_admin, "GENERATIONS_SHOWN", 1)
    member = api_for(upgraded["member"])
    (installation,) = member.get("/api/workspaces/acme/installations/").json()["results"]
    assert installation["generation_count"] == 2
    assert [g["number"] for g in installation["generations"]] == [2]
    every = member.get("/api/workspaces/acme/installations/accounts-receivable/generations/")
    assert [g["number"] for g in every.json()["results"]] == [2, 1]
    missing = member.get("/api/workspaces/acme/installations/nothing/generations/")
    assert missing.status_code == 404
    assert "nothing is not installed in this workspace" in missing.json()["detail"]

    page = reverse(
        "admin:catalog_installation_change",
        args=[Installation.objects.get(workspace=upgraded["workspace"]).pk],
    )
    latest = admin_for(upgraded["member"]).get(page).content.decode()
    assert 'id="generation-2"' in latest and 'id="generation-1"' not in latest
    assert 'href="?generations_before=2"' in latest
    older = admin_for(upgraded["member"]).get(page, {"generations_before": "2"}).content.decode()
    assert 'id="generation-1"' in older and 'id="generation-2"' not in older
    assert "1 (now)" not in older and "generations_before" not in older


def test_install_upgrade_roll_back_returns_the_workspace_to_what_the_install_left(upgraded):
    workspace, owner = upgraded["workspace"], upgraded["owner"]
    assert content_digest(workspace) != upgraded["after_install"]
    answer = api_for(owner).post(
        "/api/workspaces/acme/plans/",
        {"kind": "rollback", "bundle": "accounts-receivable", "generation": 1},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["kind"], body["version"], body["status"]) == ("rollback", "2.1.0", "proposed")
    assert body["generation"] == 1
    steps = {(s["type"], s.get("slug") or s.get("host") or s.get("name")) for s in body["steps"]}
    assert ("skill.remove", "payment-plan") in steps  # what 2.2.0 added goes
    assert ("skill.update", "invoice-chase") in steps  # back to its 2.1.0 text
    rollback = approve_and_apply(Plan.objects.get(pk=body["id"]), owner, upgraded["capture"])
    assert rollback.status == Plan.State.APPLIED, rollback.error
    assert content_digest(workspace) == upgraded["after_install"]
    # Generation 3 is the rollback; the history shows all three plans.
    installation = Installation.objects.get(workspace=workspace)
    assert list(installation.generations.values_list("number", "plan__kind")) == [
        (1, "install"), (2, "upgrade"), (3, "rollback"),
    ]  # fmt: skip
    plans = set(
        AuditEntry.objects.filter(workspace=workspace).exclude(plan_id=None)
        .values_list("plan_id", flat=True)
    )  # fmt: skip
    assert {upgraded["install"].pk, upgraded["upgrade"].pk, rollback.pk} <= plans
    # And forward again is an ordinary rollback to generation 2.
    again = api_for(owner).post(
        "/api/workspaces/acme/plans/",
        {"kind": "rollback", "bundle": "accounts-receivable", "generation": 2},
        format="json",
    )
    assert again.status_code == 201 and again.json()["version"] == "2.2.0"


def test_a_local_edit_made_since_is_a_fork_with_the_usual_choices(upgraded):
    owner = upgraded["owner"]
    edited = api_for(owner).patch(
        "/api/workspaces/acme/skills/invoice-chase/", {"body": "Our own chase."}, format="json"
    )
    assert edited.status_code == 200
    body = (
        api_for(owner)
        .post(
            "/api/workspaces/acme/plans/",
            {"kind": "rollback", "bundle": "accounts-receivable", "generation": 1},
            format="json",
        )
        .json()
    )
    (fork,) = [s for s in body["steps"] if s.get("slug") == "invoice-chase"]
    assert fork["type"] == "skill.fork"


@pytest.mark.parametrize(
    ("request_body", "status", "words"),
    [
        ({"generation": 7}, 400, "Accounts Receivable in Acme has no generation 7: it has "
                                "generations 1 to 2"),
        ({"generation": 2}, 400, "Generation 2 left Accounts Receivable 2.2.0 installed, which "
                                "is installed now: there is nothing to roll back"),
        ({}, 400, "generation: Required for a rollback."),
        ({"generation": 1, "version": "2.1.0"}, 400, "A rollback names a generation, not a"),
        ({"generation": 1, "bundle": "support-desk"}, 400, "support-desk is not installed in Acme"),
    ],
)  # fmt: skip
def test_a_rollback_that_cannot_be_planned_says_why_and_changes_nothing(
    upgraded, request_body, status, words
):
    before = content_digest(upgraded["workspace"]), Plan.objects.count()
    answer = api_for(upgraded["owner"]).post(
        "/api/workspaces/acme/plans/",
        {"kind": "rollback", "bundle": "accounts-receivable", **request_body},
        format="json",
    )
    assert answer.status_code == status
    assert words in answer.json()["detail"], answer.json()
    assert (content_digest(upgraded["workspace"]), Plan.objects.count()) == before


def test_a_generation_whose_version_was_yanked_since_is_named_as_not_restorable(
    upgraded, demo_catalog
):
    operator = make_user("opal", is_superuser=True)
    bundle_version_yank(
        bundle_version=demo_catalog["2.1.0"], actor=operator, reason="Leaks the token"
    )
    answer = api_for(upgraded["owner"]).post(
        "/api/workspaces/acme/plans/",
        {"kind": "rollback", "bundle": "accounts-receivable", "generation": 1},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json()["code"] == "yanked"
    assert (
        "which was yanked since (Leaks the token): it can no longer be restored"
        in (answer.json()["detail"])
    )


def test_an_owner_rolls_back_from_the_installation_page_and_a_member_is_not_offered_it(
    upgraded,
):
    installation = Installation.objects.get(workspace=upgraded["workspace"])
    page = reverse("admin:catalog_installation_change", args=[installation.pk])
    owner_page = admin_for(upgraded["owner"]).get(page).content.decode()
    assert 'id="generation-2"' in owner_page and "2 (now)" in owner_page
    assert 'value="Roll back to generation 1"' in owner_page
    assert 'value="Roll back to generation 2"' not in owner_page  # the version it has now
    member_page = admin_for(upgraded["member"]).get(page).content.decode()
    assert 'id="generation-1"' in member_page and "Roll back to generation" not in member_page
    refused = admin_for(upgraded["member"]).post(
        reverse("admin:catalog_installation_rollback", args=[installation.pk, 1]), follow=True
    )
    assert "Only an owner of Acme can do this" in refused.content.decode()
    assert not Plan.objects.filter(kind="rollback").exists()
    planned = admin_for(upgraded["owner"]).post(
        reverse("admin:catalog_installation_rollback", args=[installation.pk, 1])
    )
    plan = Plan.objects.get(kind="rollback")
    assert planned["Location"] == reverse("admin:catalog_plan_review", args=[plan.pk])
    assert plan.options["generation"] == 1 and plan.bundle_version.version == "2.1.0"
    review = admin_for(upgraded["owner"]).get(planned["Location"]).content.decode()
    assert f"Plan #{plan.pk}: roll back Accounts Receivable to generation 1 (2.1.0)" in review
    assert Generation.objects.filter(installation=installation).count() == 2  # not yet applied


@pytest.mark.django_db(transaction=True)
def test_the_migration_makes_generations_of_the_plans_applied_before_it(upgraded):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    installation = Installation.objects.get(workspace=upgraded["workspace"])
    Generation.objects.all().delete()  # as a database from before this migration is
    executor = MigrationExecutor(connection)
    executor.migrate([("catalog", "0009_catalog_review")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert list(
        Generation.objects.filter(installation=installation).values_list("number", "plan_id")
    ) == [(1, upgraded["install"].pk), (2, upgraded["upgrade"].pk)]


@pytest.fixture
def rolled_back(upgraded):
    """The upgrade rolled back to generation 1; the agent's pin still on 2.2.0's revision."""
    installation = Installation.objects.get(workspace=upgraded["workspace"])
    owner = upgraded["owner"]
    admin_for(owner).post(reverse("admin:catalog_installation_rollback", args=[installation.pk, 1]))
    plan = approve_and_apply(Plan.objects.get(kind="rollback"), owner, upgraded["capture"])
    assert plan.status == Plan.State.APPLIED
    return {**upgraded, "installation": installation, "rollback": plan}


def test_a_rollback_says_a_rollback_replaced_the_pinned_revisions(rolled_back):
    owner = rolled_back["owner"]
    review = admin_for(owner).get(
        reverse("admin:catalog_plan_review", args=[rolled_back["rollback"].pk])
    )
    assert review.context["backlog"] == {"attachments": 1, "agents": 1}
    assert review.context["replaced_by"] == "this rollback"
    page = admin_for(owner).get(
        reverse("admin:catalog_installation_change", args=[rolled_back["installation"].pk])
    )
    assert "(an upgrade, a rollback or an edit made newer ones)" in page.content.decode()
    # The repoint it offers says why each pin moves in words that fit a rollback too.
    admin_for(owner).post(reverse("admin:catalog_plan_repoint", args=[rolled_back["rollback"].pk]))
    repoint = Plan.objects.get(kind="repoint")
    assert [s["reason"] for s in repoint.steps if s["type"] == "repoint.move"] == [
        "pinned to a catalog revision an upgrade or a rollback replaced"
    ]


def test_the_rollback_page_does_not_call_itself_an_upgrade(rolled_back):
    review = admin_for(rolled_back["owner"]).get(
        reverse("admin:catalog_plan_review", args=[rolled_back["rollback"].pk])
    )
    page = review.content.decode()
    assert "the revisions this rollback replaced" in page
    assert "this upgrade replaced" not in page
