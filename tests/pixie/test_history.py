"""Every recorded change carries its workspace, the path it came through and its plan
(pixie.core.audit.records), and a workspace's members read its history at
GET /api/workspaces/{ws}/history/."""

import pytest
from django.core.management import call_command
from django.urls import reverse
from reversion.models import Revision

from agents.models import Agent
from agents.services import agent_skill_attach
from catalog.models import Plan, WorkspaceSkill
from pixie.core.models import AuditEntry
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(demo_catalog, django_capture_on_commit_callbacks):
    owner = make_user("olive")
    member = make_user("mia")
    workspace = make_workspace("acme", owner=owner, members=[member])
    agent = Agent.objects.create(workspace=workspace, slug="collections", name="Collections")
    plan = install(workspace, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    return workspace, owner, member, agent, plan


def latest() -> AuditEntry:
    return AuditEntry.objects.select_related("revision").latest("revision_id")


def test_every_revision_has_an_entry(acme):
    assert Revision.objects.count() == AuditEntry.objects.count() > 0


def test_a_loaded_catalog_is_the_catalogs_history_and_came_by_command(db):
    call_command("bundle_load", "catalog/demo/accounts-receivable-2.1.0", "--publish")
    entry = latest()
    assert entry.workspace is None
    assert entry.channel == AuditEntry.Channel.COMMAND


def test_an_applied_plan_is_its_workspaces_history_came_by_task_and_names_the_plan(acme):
    workspace, _owner, _member, _agent, plan = acme
    assert plan.status == Plan.State.APPLIED
    applied = AuditEntry.objects.get(revision__comment=f"Applied plan #{plan.pk}")
    assert applied.workspace == workspace
    assert applied.channel == AuditEntry.Channel.TASK
    assert applied.plan_id == plan.pk


def test_edits_through_the_api_and_the_admin_say_which(acme):
    workspace, owner, _member, _agent, _plan = acme
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    answer = api_for(owner).patch(
        f"/api/workspaces/acme/skills/{skill.slug}/", {"body": "Chase, kindly."}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert (latest().channel, latest().workspace) == (AuditEntry.Channel.API, workspace)
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    answer = admin_for(owner).post(edit, {"name": "Invoice chase", "body": "Chase, firmly."})
    assert answer.status_code == 302
    assert (latest().channel, latest().workspace) == (AuditEntry.Channel.ADMIN, workspace)


def test_a_change_to_a_row_without_a_workspace_of_its_own_finds_it_through_its_parent(acme):
    workspace, owner, _member, agent, _plan = acme
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="take-payment")
    agent_skill_attach(agent=agent, skill=skill, actor=owner)  # an AgentSkill row only
    assert latest().workspace == workspace


def test_members_read_their_workspaces_history_newest_first(acme):
    workspace, owner, member, _agent, plan = acme
    other = make_workspace("globex", owner=make_user("gus"))
    answer = api_for(member).get("/api/workspaces/acme/history/")
    assert answer.status_code == 200
    entries = answer.json()["results"]
    assert [e["id"] for e in entries] == sorted((e["id"] for e in entries), reverse=True)
    applied = next(e for e in entries if e["comment"] == f"Applied plan #{plan.pk}")
    assert applied["by"] == owner.username
    assert applied["channel"] == "task"
    assert applied["plan"] == plan.pk
    skills = {o["name"] for o in applied["objects"] if o["type"] == "catalog.workspaceskill"}
    assert len(skills) == 4  # the four skills the install created
    assert api_for(make_user("stranger")).get("/api/workspaces/acme/history/").status_code == 404
    assert api_for(member).get(f"/api/workspaces/{other.slug}/history/").status_code == 404


def test_the_history_pages_by_cursor_in_a_bounded_number_of_queries(
    acme, django_assert_max_num_queries
):
    workspace, owner, member, agent, _plan = acme
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    client = api_for(owner)
    for n in range(60):
        client.patch(
            f"/api/workspaces/acme/skills/{skill.slug}/", {"body": f"Chase {n}."}, format="json"
        )
    reader = api_for(member)
    with django_assert_max_num_queries(8):
        first = reader.get("/api/workspaces/acme/history/").json()
    assert len(first["results"]) == 50 and first["next"]
    with django_assert_max_num_queries(8):
        second = reader.get(first["next"]).json()
    seen = [e["id"] for e in first["results"] + second["results"]]
    assert len(seen) == len(set(seen)) == AuditEntry.objects.filter(workspace=workspace).count()
    made_up = reader.get("/api/workspaces/acme/history/", {"cursor": "not-a-cursor"})
    assert made_up.status_code == 404
    assert made_up.json()["code"] == "not_found"


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_every_earlier_revision_an_entry(demo_catalog):
    """Revisions recorded before entries were kept get one: workspace and plan from what
    they recorded, the channel as not recorded."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from pixie.core.audit.records import audited

    owner = make_user("olive")
    workspace = make_workspace("acme", owner=owner)
    with audited(actor=owner, comment="Renamed acme"):
        workspace.name = "Acme Ltd"
        workspace.save()
    AuditEntry.objects.all().delete()  # as a database from before this migration is
    executor = MigrationExecutor(connection)
    executor.migrate([("pixie", "0003_inbox_limits")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert AuditEntry.objects.count() == Revision.objects.count() > 0
    assert set(AuditEntry.objects.values_list("channel", flat=True)) == {"unknown"}
    loaded = AuditEntry.objects.filter(revision__comment__contains="Loaded bundle")
    assert loaded.exists() and not loaded.exclude(workspace=None).exists()  # the catalog's
    renamed = AuditEntry.objects.get(revision__comment="Renamed acme")
    assert (renamed.workspace_id, renamed.scope) == (workspace.pk, "workspace")
    assert renamed.object_count == 1
    assert not AuditEntry.objects.filter(object_count=0).exists()  # each counts its objects
    assert set(loaded.values_list("scope", flat=True)) == {"catalog"}
    # Each joins its chain, oldest first, and the chains verify.
    from pixie.core.audit.chain import chain_verify

    assert not AuditEntry.objects.filter(sequence=None).exists()
    report = chain_verify()
    assert report.problems == [] and report.entries == AuditEntry.objects.count()


def test_the_audit_log_shows_auditors_every_change_in_a_bounded_number_of_queries(
    acme, django_assert_max_num_queries
):
    from django.contrib.auth.models import Group

    from pixie.core.people.permissions import AUDITORS_GROUP

    workspace, owner, member, _agent, plan = acme
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    for n in range(30):
        api_for(owner).patch(
            f"/api/workspaces/acme/skills/{skill.slug}/", {"body": f"Chase {n}."}, format="json"
        )
    auditor = make_user("aud")
    auditor.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    log = reverse("admin:pixie_auditentry_changelist")
    reader = admin_for(auditor)
    with django_assert_max_num_queries(12):
        page = reader.get(log)
    assert page.status_code == 200
    text = page.content.decode()
    assert f"Applied plan #{plan.pk}" in text and "the catalog" in text  # both histories
    assert f'href="{reverse("admin:catalog_plan_review", args=[plan.pk])}"' in text
    tasks = reader.get(log, {"channel": "task"}).content.decode()
    assert f"Applied plan #{plan.pk}" in tasks and "Edited skill @invoice-chase" not in tasks
    edits = reader.get(log, {"channel": "api"}).content.decode()
    assert "Edited skill @invoice-chase" in edits and f"Applied plan #{plan.pk}" not in edits
    assert admin_for(member).get(log).status_code == 403
    assert b"Add audit entry" not in page.content
    # An operator of no workspace reads the log, and the plan's number, not a link to it.
    operator = make_user("opal")
    operator.groups.add(Group.objects.get(name="operators"))
    theirs = admin_for(operator).get(log).content.decode()
    assert f"Applied plan #{plan.pk}" in theirs
    assert reverse("admin:catalog_plan_review", args=[plan.pk]) not in theirs


def test_auditors_read_a_workspace_s_history_and_revisions_over_the_api_and_change_nothing(acme):
    from django.contrib.auth.models import Group

    from pixie.core.people.permissions import AUDITORS_GROUP

    _workspace, owner, _member, _agent, _plan = acme
    edited = api_for(owner).patch(
        "/api/workspaces/acme/skills/invoice-chase/", {"body": "Chase, kindly."}, format="json"
    )
    assert edited.status_code == 200
    auditor = make_user("aud")
    auditor.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    reader = api_for(auditor)
    assert reader.get("/api/workspaces/acme/history/").status_code == 200
    revisions = reader.get("/api/workspaces/acme/skills/invoice-chase/revisions/")
    assert revisions.status_code == 200 and revisions.json()["results"]
    assert reader.get("/api/workspaces/acme/skills/invoice-chase/revisions/1/").status_code == 200
    compared = reader.get("/api/workspaces/acme/skills/invoice-chase/compare/")
    assert compared.status_code == 200 and not compared.json()["identical"]
    # Reading is all: the rest of the workspace's API, and any write, is its members'.
    assert reader.get("/api/workspaces/acme/skills/").status_code == 404
    restore = reader.post("/api/workspaces/acme/skills/invoice-chase/revisions/1/restore/")
    assert restore.status_code == 404
    assert reader.get("/api/workspaces/initech/history/").status_code == 404


def test_operators_read_every_workspace_s_history_and_nothing_else_of_it(acme):
    """An operator of no workspace answers "who changed @invoice-chase in acme, and what
    did it say before?" from the audit log, read-only; the workspace's other contents
    (its skills' pages, agents, plans) stay its members'."""
    from django.contrib.auth.models import Group

    from pixie.core.people.permissions import OPERATORS_GROUP

    workspace, owner, _member, agent, plan = acme
    api_for(owner).patch(
        "/api/workspaces/acme/skills/invoice-chase/", {"body": "Chase, kindly."}, format="json"
    )
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    operator = make_user("opal")
    operator.groups.add(Group.objects.get(name=OPERATORS_GROUP))
    reader = admin_for(operator)
    log = reader.get(reverse("admin:pixie_auditentry_changelist")).content.decode()
    compare = reverse("admin:catalog_workspaceskill_compare", args=[skill.pk])
    assert f'href="{compare}"' in log  # the edited skill links to its revisions
    page = reader.get(compare, {"from": 1, "to": skill.head.number})
    assert page.status_code == 200
    text = page.content.decode()
    assert "Chase, kindly." in text
    # Its breadcrumbs name the skill without linking pages the operator may not open.
    assert reverse("admin:catalog_workspaceskill_change", args=[skill.pk]) not in text
    changelist = reverse("admin:catalog_workspaceskill_changelist")
    assert f'href="{changelist}"' not in text
    revision = reader.get(reverse("admin:catalog_workspaceskill_text", args=[skill.pk, 1]))
    assert revision.status_code == 200 and b'value="Restore revision' not in revision.content
    for closed in (
        reverse("admin:catalog_workspaceskill_change", args=[skill.pk]),
        reverse("admin:agents_agent_change", args=[agent.pk]),
        reverse("admin:catalog_plan_review", args=[plan.pk]),
    ):
        assert reader.get(closed).status_code in (403, 404), closed
    restore = reverse("admin:catalog_workspaceskill_restore", args=[skill.pk, 1])
    head = skill.head_id
    reader.post(restore)
    skill.refresh_from_db()
    assert skill.head_id == head
    # The same over the API: history reads, and nothing more.
    api = api_for(operator)
    assert api.get("/api/workspaces/acme/history/").status_code == 200
    assert api.get("/api/workspaces/acme/skills/invoice-chase/revisions/").status_code == 200
    assert api.get("/api/workspaces/acme/skills/").status_code == 404
    assert api.get("/api/workspaces/acme/agents/").status_code == 404
