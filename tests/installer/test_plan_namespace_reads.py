"""Plan creation reads the workspace's namespace only where the bundle can collide (its
slugs and its skills' re-slug candidates), so its cost does not grow with the workspace."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Plan, WorkspaceSkill
from catalog.services import bundle_version_publish
from pixie.installer.plans import plan_create
from tests.factories import make_bundle_version, make_skill_version

pytestmark = pytest.mark.django_db


def occupy(workspace, slugs):
    WorkspaceSkill.objects.bulk_create(WorkspaceSkill(workspace=workspace, slug=s) for s in slugs)


def published(slug, skills, operator):
    version = make_bundle_version(slug, skills=skills, hosts=(), credentials=())
    return bundle_version_publish(bundle_version=version, actor=operator)


def install_plan(workspace, bundle_version, owner):
    return plan_create(
        workspace=workspace, kind=Plan.Kind.INSTALL, bundle_version=bundle_version, actor=owner
    )


def test_a_long_run_of_taken_candidates_still_lands_on_a_free_slug(acme, owner, operator):
    # @chase is taken, and so are the first twelve candidates of its name.
    occupy(acme, ["chase", *(f"chase-{n}" for n in range(2, 13))])
    chase = make_skill_version("chase", name="Chase", body="Write to the customer.")
    plan = install_plan(acme, published("kit", [chase], operator), owner)
    (reslug,) = [s for s in plan.steps if s["type"] == "skill.reslug"]
    assert (reslug["from"], reslug["to"]) == ("chase", "chase-13")
    (created,) = [s for s in plan.steps if s["type"] == "skill.create"]
    assert created["slug"] == "chase-13"


def test_plan_creation_costs_the_same_whatever_the_workspace_holds(acme, owner, operator):
    skills = [make_skill_version(f"step-{i}", body="Do the step.") for i in range(20)]
    bundle_version = published("steps", skills, operator)
    costs, namespace_rows = {}, {}
    for size in (1, 100, 3000):  # the first warms per-process caches
        occupy(acme, [f"local-{size}-{n}" for n in range(size)])
        with CaptureQueriesContext(connection) as queries:
            plan = install_plan(acme, bundle_version, owner)
        costs[size] = len(queries)
        # The namespace query names the slugs it wants; it never lists the workspace's.
        reads = [q["sql"] for q in queries if 'FROM "catalog_workspaceskill"' in q["sql"]]
        namespace_rows[size] = [sql for sql in reads if "local-" in sql]
        assert len([s for s in plan.steps if s["type"] == "skill.create"]) == 20
    assert costs[100] == costs[3000], costs
    # The bound docs/PERFORMANCE.md states (savepoints included, as a test's transaction
    # makes the plan's own a savepoint).
    assert costs[3000] <= 22, costs
    assert namespace_rows == {1: [], 100: [], 3000: []}
