"""Plan creation reads the workspace's namespace only where the bundle can collide (its
slugs and its skills' re-slug candidates), so its cost does not grow with the workspace."""

import pytest
import reversion
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Plan, SkillRevision, WorkspaceSkill
from catalog.services import bundle_version_publish
from pixie.core.audit.records import audited
from pixie.installer.plans import plan_create
from tests.factories import make_bundle_version, make_skill_version

pytestmark = pytest.mark.django_db

# The bound docs/PERFORMANCE.md states, counted with savepoints (a test's transaction makes
# the plan's own a savepoint) and on the workspace's first plan (its audit chain starts).
MOST_QUERIES = 22


def occupy(workspace, slugs):
    WorkspaceSkill.objects.bulk_create(WorkspaceSkill(workspace=workspace, slug=s) for s in slugs)


def occupy_with_heads(workspace, slugs):
    """Local skills holding ``slugs``, each with a head revision (a real collision: the plan
    reads each one's text and files to see whether it is identical)."""
    skills = WorkspaceSkill.objects.bulk_create(
        WorkspaceSkill(workspace=workspace, slug=s) for s in slugs
    )
    heads = SkillRevision.objects.bulk_create(
        SkillRevision(skill=skill, number=1, name=f"Mine {skill.slug}", short_description="Mine.",
                      body="My own procedure.")
        for skill in skills
    )  # fmt: skip
    for skill, head in zip(skills, heads, strict=True):
        skill.head = head
    WorkspaceSkill.objects.bulk_update(skills, ["head"])


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


def has_history(workspace, actor) -> None:
    """A first change, as every workspace made through Pixie has: its audit chain and
    the chain's place in the anchor are made once, by a workspace's first change (two
    queries more than any later one)."""
    with audited(actor=actor, comment="Made the workspace"):
        reversion.add_to_revision(workspace)


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
    assert costs[3000] <= MOST_QUERIES, costs
    assert namespace_rows == {1: [], 100: [], 3000: []}


@pytest.mark.parametrize("collide", [False, True], ids=["free", "colliding"])
@pytest.mark.parametrize("size", [5, 50])
def test_plan_creation_takes_at_most_22_queries_whatever_the_bundle(
    acme, owner, operator, size, collide
):
    # The benchmark's shapes (benchmarks/plans.py): 5 and 50 skills into a workspace of
    # many; and the same bundles where a local skill holds every slug (each re-slugged).
    skills = [
        make_skill_version(f"kit{size}-step-{i}", name=f"Kit{size} step {i}", body="Do it.")
        for i in range(size)
    ]
    bundle_version = published(f"kit-{size}", skills, operator)
    occupy(acme, [f"local-{n}" for n in range(2000)])
    if collide:
        occupy_with_heads(acme, [f"kit{size}-step-{i}" for i in range(size)])
    has_history(acme, owner)
    with CaptureQueriesContext(connection) as queries:
        plan = install_plan(acme, bundle_version, owner)
    reslugs = [s for s in plan.steps if s["type"] == "skill.reslug"]
    assert len(reslugs) == (size if collide else 0)
    assert {s["to"] for s in reslugs} == (
        {f"kit{size}-step-{i}-2" for i in range(size)} if collide else set()
    )
    assert len([s for s in plan.steps if s["type"] == "skill.create"]) == size
    assert len(queries) <= MOST_QUERIES, "\n".join(q["sql"][:120] for q in queries)
