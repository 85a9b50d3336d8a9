"""Writers that meet on one workspace: an install apply and a repoint at the same moment
are serialised by the workspace's row lock; neither deadlocks, both finish.

CI runs a few rounds; PIXIE_HEAVY=1 runs 100.
"""

import os
import threading

import pytest
from django.core.management import call_command
from django.db import connections

from agents.models import AgentSkill
from catalog.models import BundleVersion, Plan
from pixie.core.models import Workspace
from pixie.installer.plans import plan_create
from pixie.installer.repoint import repoint_create
from pixie.installer.run import plan_run
from tests.factories import make_workspace
from tests.installer.flow import approve_and_apply, install

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgres_only")]
ROUNDS = 100 if os.environ.get("PIXIE_HEAVY") == "1" else 3


def _approved(plan, owner):
    # Both plans approved, their tasks not yet run: as when two workers pick them up.
    Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)
    return plan


def _round(number, owner, agents_of, versions, capture):
    workspace = make_workspace(f"race-{number}", owner=owner)
    agents = agents_of(workspace)
    install(workspace, versions["ar-2.1.0"], owner, capture, agents)
    upgrade = plan_create(
        workspace=workspace, kind="upgrade", bundle_version=versions["ar-2.2.0"], actor=owner,
        fork_choices={},
    )  # fmt: skip
    approve_and_apply(upgrade, owner, capture)
    repoint = _approved(repoint_create(workspace=workspace, actor=owner), owner)
    other = _approved(
        plan_create(
            workspace=workspace,
            kind="install",
            bundle_version=versions["sd-1.0.0"],
            actor=owner,
            agents=agents,
        ),  # fmt: skip
        owner,
    )
    results, errors = {}, []
    barrier = threading.Barrier(2)

    def run(plan):
        try:
            barrier.wait(timeout=30)
            results[plan.kind] = plan_run(plan_id=plan.pk)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(p,)) for p in (repoint, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert results == {"repoint": "applied", "install": "applied"}
    behind = AgentSkill.objects.filter(agent__workspace=workspace, pinned_revision__number=1)
    assert not behind.filter(skill__slug="invoice-chase").exists()


def test_an_apply_and_a_repoint_on_one_workspace_are_serialised(
    owner, django_capture_on_commit_callbacks, record_property
):
    from agents.models import Agent

    for folder in ("accounts-receivable-2.1.0", "accounts-receivable-2.2.0", "support-desk-1.0.0"):
        call_command("bundle_load", f"catalog/demo/{folder}", "--publish")
    versions = {
        f"{'ar' if v.bundle.slug == 'accounts-receivable' else 'sd'}-{v.version}": v
        for v in BundleVersion.objects.select_related("bundle")
    }

    def agents_of(workspace):
        return [
            Agent.objects.create(workspace=workspace, slug=f"agent-{i}", name=f"Agent {i}")
            for i in range(3)
        ]

    for number in range(ROUNDS):
        _round(number, owner, agents_of, versions, django_capture_on_commit_callbacks)
    assert Workspace.objects.filter(slug__startswith="race-").count() == ROUNDS
    record_property("figure", f"{ROUNDS} rounds, each serialised, no deadlock")
