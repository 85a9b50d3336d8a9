"""After an upgrade, repointing pinned agents is its own approved decision."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from reversion.models import Revision

from agents.models import AgentSkill
from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.core.errors import PermissionRefused, ValidationFailed
from pixie.installer import repoint as repoint_module
from pixie.installer.plans import plan_create
from pixie.installer.repoint import repoint_backlog, repoint_create
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db


@pytest.fixture
def upgraded(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """2.1.0 installed on both agents (pinned), then upgraded to 2.2.0 taking the new text."""
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture, agents)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    approve_and_apply(plan, owner, capture)
    return plan


def pins(agent):
    return dict(
        AgentSkill.objects.filter(agent=agent).values_list("skill__slug", "pinned_revision__number")
    )


def test_the_upgrade_page_says_how_many_pins_are_behind(upgraded, acme, owner):
    assert repoint_backlog(workspace=acme) == {"attachments": 2, "agents": 2}
    owner.is_staff = True
    owner.save()
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("admin:catalog_plan_review", args=[upgraded.pk])).content.decode()
    assert "2 pinned attachments on 2 agents" in page and "Repoint these agents" in page
    installation = Installation.objects.get()
    page = client.get(reverse("admin:catalog_installation_change", args=[installation.pk]))
    assert "2 pinned attachments on 2 agents" in page.content.decode()


def test_repoint_moves_exactly_the_chosen_agents_pins(
    upgraded, acme, owner, agents, django_capture_on_commit_callbacks
):
    collections, front_desk = agents
    plan = repoint_create(workspace=acme, actor=owner, agents=[collections])
    (move,) = [s for s in plan.steps if s["type"] == "repoint.move"]
    assert (move["slug"], move["from"], move["to"], move["count"]) == ("invoice-chase", 1, 2, 1)
    assert plan.expands_reach is False
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED
    assert (plan.progress_done, plan.progress_total) == (1, 1)
    assert pins(collections)["invoice-chase"] == 2
    assert pins(front_desk)["invoice-chase"] == 1  # not chosen, not moved


def test_a_pin_to_a_local_edit_is_never_moved(
    upgraded, acme, owner, agents, django_capture_on_commit_callbacks
):
    collections, front_desk = agents
    rules = WorkspaceSkill.objects.get(slug="ar-ground-rules")
    skill_edit(skill=rules, actor=owner, body=rules.head.body + "\n\nOur house rule.")
    AgentSkill.objects.filter(agent=front_desk, skill=rules).update(pinned_revision=rules.head)
    skill_edit(skill=rules, actor=owner, body=rules.head.body + "\n\nAnother house rule.")
    plan = repoint_create(workspace=acme, actor=owner)
    stays = [s for s in plan.steps if s["type"] == "repoint.stay"]
    assert [(s["slug"], s["revision"]) for s in stays] == [("ar-ground-rules", 2)]
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    assert pins(front_desk)["ar-ground-rules"] == 2
    assert pins(front_desk)["invoice-chase"] == 2 and pins(collections)["invoice-chase"] == 2


def test_each_chunk_is_one_history_entry_naming_the_plan(
    upgraded, acme, owner, agents, monkeypatch, django_capture_on_commit_callbacks
):
    from agents.models import Agent

    for i in range(5):
        agent = Agent.objects.create(workspace=acme, slug=f"extra-{i}", name=f"Extra {i}")
        chase = WorkspaceSkill.objects.get(slug="invoice-chase")
        AgentSkill.objects.create(
            agent=agent, skill=chase, position=1, pinned_revision=chase.revisions.get(number=1)
        )
    monkeypatch.setattr(repoint_module, "CHUNK", 2)
    plan = repoint_create(workspace=acme, actor=owner)
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    plan.refresh_from_db()
    assert (plan.progress_done, plan.progress_total) == (7, 7)
    chunks = Revision.objects.filter(comment__startswith=f"Repoint plan #{plan.pk}:")
    assert chunks.count() == 4  # 2 + 2 + 2 + 1


def test_only_owners_repoint_and_nothing_behind_is_refused(upgraded, acme, owner, member):
    with pytest.raises(PermissionRefused):
        repoint_create(workspace=acme, actor=member)
    AgentSkill.objects.update(pinned_revision=None)
    with pytest.raises(ValidationFailed, match="nothing to repoint"):
        repoint_create(workspace=acme, actor=owner)


def test_the_api_plans_a_repoint_and_reports_progress(
    upgraded, owner, django_capture_on_commit_callbacks
):
    api = APIClient()
    api.force_authenticate(owner)
    response = api.post("/api/workspaces/acme/plans/", {"kind": "repoint"}, format="json")
    assert response.status_code == 201, response.json()
    plan = response.json()
    assert plan["progress"] == {
        "done": 0,
        "total": 2,
        "rate_per_second": None,
        "seconds_left": None,
    }
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/api/workspaces/acme/plans/{plan['id']}/approve/")
    body = api.get(f"/api/workspaces/acme/plans/{plan['id']}/").json()
    assert body["status"] == "applied" and body["progress"]["done"] == 2


def test_pins_spread_over_many_skills_move_in_a_few_chunks(
    acme, owner, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from benchmarks.fleet import make_fleet

    # 300 skills with 3 pinned agents each: 300 small moves, 900 attachments.
    _, old, new = make_fleet(acme, agents=3, skills=300, actor=owner)
    plan = repoint_create(workspace=acme, actor=owner)
    assert len([s for s in plan.steps if s["type"] == "repoint.move"]) == 300
    with CaptureQueriesContext(connection) as queries:
        approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    plan.refresh_from_db()
    assert plan.status == "applied" and plan.progress_done == 900
    assert AgentSkill.objects.filter(pinned_revision__in=new).count() == 900
    (chunk,) = Revision.objects.filter(comment__startswith=f"Repoint plan #{plan.pk}:")
    assert "900 attachments of 300 skills" in chunk.comment
    assert len(queries) < 40, len(queries)  # not a few queries per skill


def _approved_fleet_repoint(workspace, owner, monkeypatch, *, agents, skills, chunk):
    from benchmarks.fleet import make_fleet

    _, old, new = make_fleet(workspace, agents=agents, skills=skills, actor=owner)
    monkeypatch.setattr(repoint_module, "CHUNK", chunk)
    plan = repoint_create(workspace=workspace, actor=owner)
    Plan.objects.filter(pk=plan.pk).update(status=Plan.State.APPROVED, decided_by=owner)
    return plan, old, new


def _chunk_comments(plan):
    return list(
        Revision.objects.filter(comment__startswith=f"Repoint plan #{plan.pk}:")
        .order_by("pk")
        .values_list("comment", flat=True)
    )


def test_a_chunk_moves_every_skill_in_id_order_and_a_crashed_chunk_resumes(
    acme, owner, monkeypatch
):
    from django.db import OperationalError

    # 5 agents x 3 skills, chunks of 4: one pass over the ids, whatever skill each is of.
    plan, old, new = _approved_fleet_repoint(acme, owner, monkeypatch, agents=5, skills=3, chunk=4)
    real_checkpoint = repoint_module.checkpoint

    def connection_lost(name):
        real_checkpoint(name)
        if name == "repoint.chunk.3.moved":  # chunk 3's rows moved, not committed
            raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(repoint_module, "checkpoint", connection_lost)
    with pytest.raises(OperationalError):
        repoint_module.repoint_apply(plan_id=plan.pk)
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLYING
    ordered = AgentSkill.objects.filter(agent__workspace=acme).order_by("id")
    moved = list(ordered.filter(pinned_revision__in=new).values_list("id", flat=True))
    assert moved == list(ordered.values_list("id", flat=True)[:8])  # two whole chunks
    assert plan.progress_done == 8 and len(_chunk_comments(plan)) == 2

    monkeypatch.setattr(repoint_module, "checkpoint", real_checkpoint)
    assert repoint_module.repoint_apply(plan_id=plan.pk) == Plan.State.APPLIED
    plan.refresh_from_db()
    assert (plan.progress_done, plan.progress_total) == (15, 15)
    assert not AgentSkill.objects.filter(pinned_revision__in=old).exists()
    comments = _chunk_comments(plan)
    assert [int(c.split("moved ")[1].split()[0]) for c in comments] == [4, 4, 4, 3]
    assert all("of 3 skills (@fleet-skill-0 … @fleet-skill-2)" in c for c in comments)
    assert repoint_module.repoint_apply(plan_id=plan.pk) == Plan.State.APPLIED  # no-op
    assert len(_chunk_comments(plan)) == 4


def test_a_plan_of_more_moves_than_one_pass_maps_takes_a_pass_per_group(acme, owner, monkeypatch):
    plan, old, new = _approved_fleet_repoint(acme, owner, monkeypatch, agents=3, skills=5, chunk=4)
    monkeypatch.setattr(repoint_module, "MOVES_PER_SWEEP", 2)
    assert repoint_module.repoint_apply(plan_id=plan.pk) == Plan.State.APPLIED
    plan.refresh_from_db()
    assert plan.progress_done == 15
    assert AgentSkill.objects.filter(pinned_revision__in=new).count() == 15
    # Passes of 6, 6 and 3 rows: chunks of 4 + 2, 4 + 2, 3.
    moved = [int(c.split("moved ")[1].split()[0]) for c in _chunk_comments(plan)]
    assert moved == [4, 2, 4, 2, 3]


def test_each_chunk_costs_the_same_few_queries(acme, owner, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import make_workspace

    def queries(workspace, agents):
        plan, _, _ = _approved_fleet_repoint(
            workspace, owner, monkeypatch, agents=agents, skills=2, chunk=4
        )
        with CaptureQueriesContext(connection) as captured:
            assert repoint_module.repoint_apply(plan_id=plan.pk) == Plan.State.APPLIED
        statements = [q["sql"] for q in captured.captured_queries]
        return len(statements), sum('"agents_agentskill"' in sql for sql in statements)

    # 8 and 24 attachments: 2 and 6 chunks, each the same statements whatever its size.
    (two, two_rows), (six, six_rows) = (
        queries(acme, 4),
        queries(make_workspace("initech", owner=owner), 12),
    )
    assert (six_rows - two_rows) / 4 == 2  # the next range and the UPDATE: no row read back
    assert (six - two) / 4 <= 12  # with the lock, the progress, the history and a savepoint
