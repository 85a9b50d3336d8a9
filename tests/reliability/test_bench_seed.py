"""bench_seed fills the database with data the real services accept, or refuses, writing nothing."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from agents.models import Agent, AgentSkill
from agents.selectors import composed_prompt
from agents.services import turn_start
from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Installation,
    Plan,
    SkillPackage,
    SkillRevision,
    SkillVersion,
    WorkspaceSkill,
)
from catalog.services.publishing import bundle_version_problems
from pixie.core.models import Membership, Workspace
from pixie.installer.plans import plan_approve, plan_create
from pixie.installer.repoint import repoint_backlog, repoint_create

pytestmark = pytest.mark.django_db

SMALL = [
    "--workspaces=3",
    "--skills-per-workspace=20",
    "--revisions-per-skill=2",
    "--agents-per-workspace=4",
    "--skills-per-agent=10",
    "--bundles=6",
    "--skills-per-bundle=5",
]


def bench_seed(*args) -> str:
    out = StringIO()
    call_command("bench_seed", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def row_counts() -> dict[str, int]:
    models = [get_user_model(), Workspace, Membership, SkillPackage, SkillVersion, Bundle,
              BundleVersion, BundleSkill, WorkspaceSkill, SkillRevision, Agent,
              AgentSkill]  # fmt: skip
    return {model.__name__: model.objects.count() for model in models}


@pytest.fixture
def seeded():
    bench_seed(*SMALL)
    workspace = Workspace.objects.get(slug="bench-0")
    owner = Membership.objects.get(workspace=workspace, role="owner").user
    return workspace, owner


def test_the_seed_writes_the_rows_asked_for_and_says_how_many():
    output = bench_seed(*SMALL)
    assert row_counts() == {
        "User": 1 + 3 * 2,
        "Workspace": 3,
        "Membership": 6,
        "SkillPackage": 30,
        "SkillVersion": 30,
        "Bundle": 6,
        "BundleVersion": 6,
        "BundleSkill": 30,
        "WorkspaceSkill": 60,
        "SkillRevision": 120,
        "Agent": 12,
        "AgentSkill": 120,
    }
    assert "agent skills" in output and "120" in output
    assert "total" in output and " s (" in output


def test_seeded_rows_pass_the_models_own_validation(seeded):
    for model in (Workspace, Bundle, BundleVersion, SkillVersion, BundleHost, BundleCredential,
                  WorkspaceSkill, SkillRevision, Agent, AgentSkill):  # fmt: skip
        for row in model.objects.all()[:3]:
            row.full_clean()


def test_every_seeded_bundle_version_is_published_and_publishable():
    bench_seed(*SMALL)
    for bundle_version in BundleVersion.objects.all():
        assert bundle_version.status == "published"
        assert bundle_version_problems(bundle_version) == []
    assert not SkillVersion.objects.exclude(status="published").exists()


def test_a_seeded_workspace_takes_an_install_plan_and_applies_it(
    seeded, django_capture_on_commit_callbacks
):
    workspace, owner = seeded
    agent = Agent.objects.filter(workspace=workspace).first()
    bundle_version = BundleVersion.objects.select_related("bundle").first()
    plan = plan_create(
        workspace=workspace,
        kind="install",
        bundle_version=bundle_version,
        agents=[agent],
        actor=owner,
    )
    assert plan.status == Plan.State.PROPOSED
    with django_capture_on_commit_callbacks(execute=True):
        plan_approve(plan=plan, actor=owner)
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED, plan.error
    installation = Installation.objects.get(workspace=workspace)
    assert installation.bundle_version == bundle_version
    assert WorkspaceSkill.objects.filter(workspace=workspace).count() == 20 + 5
    assert AgentSkill.objects.filter(agent=agent).count() == 10 + 5


def test_seeded_agents_resolve_their_skills_and_run_turns(seeded):
    workspace, _owner = seeded
    agent = Agent.objects.filter(workspace=workspace).first()
    prompt = composed_prompt(agent)
    assert len(prompt.parts) == 10
    # Four in five are pinned to revision 1, the rest follow the head (revision 2).
    assert [part.revision for part in prompt.parts] == [1, 1, 1, 1, 2] * 2
    turn = turn_start(agent=agent)
    assert turn.turn_skills.count() == 10


def test_pins_behind_the_head_make_a_repoint_plan(seeded):
    workspace, owner = seeded
    assert repoint_backlog(workspace=workspace) == {"attachments": 4 * 8, "agents": 4}
    plan = repoint_create(workspace=workspace, actor=owner)
    assert plan.progress_total == 4 * 8


def test_admin_pages_open_on_seeded_data(seeded):
    workspace, owner = seeded
    operator = get_user_model().objects.get(username="bench-operator")
    assert operator.is_superuser
    browser = Client()
    browser.force_login(operator)
    for name in ("catalog_bundle", "catalog_bundleversion", "catalog_workspaceskill",
                 "agents_agent", "pixie_workspace"):  # fmt: skip
        assert browser.get(reverse(f"admin:{name}_changelist")).status_code == 200, name
    browser.force_login(owner)
    agent = Agent.objects.filter(workspace=workspace).first()
    for url in (
        reverse("admin:agents_agent_change", args=[agent.pk]),
        reverse("admin:agents_agent_skills", args=[agent.pk]),
    ):
        assert browser.get(url).status_code == 200, url


@pytest.mark.parametrize(
    "args, problem",
    [
        (["--workspaces=-1"], "workspaces must be 0 or more"),
        (["--skills-per-workspace=5", "--skills-per-agent=6"], "cannot exceed"),
        (["--revisions-per-skill=0"], "revisions-per-skill must be at least 1"),
        (["--skills-per-bundle=0"], "skills-per-bundle must be at least 1"),
        (["--prefix=Not A Slug"], "must be a slug"),
        (["--workspaces=100000", "--skills-per-workspace=1000"], "the limit is"),
    ],
)
def test_bad_arguments_are_refused_and_change_nothing(args, problem):
    before = row_counts()
    with pytest.raises(CommandError, match=problem) as refused:
        bench_seed(*args)
    assert "Nothing was written" in str(refused.value)
    assert row_counts() == before


def test_a_used_prefix_is_refused_and_another_adds_alongside():
    bench_seed(*SMALL)
    before = row_counts()
    with pytest.raises(CommandError, match="already has data seeded under prefix 'bench'"):
        bench_seed(*SMALL)
    assert row_counts() == before
    bench_seed(*SMALL, "--prefix=again")
    assert Workspace.objects.count() == 6
    assert AgentSkill.objects.count() == 240
