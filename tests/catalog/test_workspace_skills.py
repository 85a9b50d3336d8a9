"""A workspace's own skills: every edit a revision, renames that leave nothing dangling."""

import pytest
from reversion.models import Version

from catalog.models import SkillRevision, WorkspaceSkill
from catalog.services.workspace_skills import is_fork, skill_create, skill_edit, skill_rename
from pixie.core.errors import ImmutableError, ValidationFailed
from tests.factories import make_skill_version, make_user, make_workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("ana")


@pytest.fixture
def workspace(owner):
    return make_workspace("acme", owner=owner)


def create(workspace, owner, slug, body="Plain steps.", **extra):
    return skill_create(
        workspace=workspace,
        slug=slug,
        name=slug.replace("-", " ").title(),
        short_description="One line.",
        body=body,
        actor=owner,
        **extra,
    )


def test_an_edit_is_a_new_revision_and_the_old_one_stays(workspace, owner):
    skill = create(workspace, owner, "plan-trip")
    revision = skill_edit(skill=skill, actor=owner, body="Better steps.")
    assert revision.number == 2
    assert WorkspaceSkill.objects.get(pk=skill.pk).head == revision
    assert list(skill.revisions.values_list("body", flat=True)) == ["Better steps.", "Plain steps."]
    with pytest.raises(ImmutableError):
        SkillRevision.objects.get(number=1).delete()


def test_an_edit_that_changes_nothing_writes_nothing(workspace, owner):
    skill = create(workspace, owner, "plan-trip")
    skill_edit(skill=skill, actor=owner, body="Plain steps.")
    assert skill.revisions.count() == 1


def test_a_local_edit_of_a_catalog_skill_makes_a_fork(workspace, owner):
    upstream = make_skill_version("invoice-chase", body="Chase with @send-email.")
    skill = skill_create(
        workspace=workspace,
        slug="invoice-chase",
        name=upstream.name,
        short_description=upstream.description,
        body=upstream.body,
        upstream=upstream,
        actor=owner,
    )
    skill.refresh_from_db()
    assert not is_fork(skill)
    skill_edit(skill=skill, actor=owner, body="Chase politely with @send-email.")
    skill.refresh_from_db()
    assert skill.head.upstream == upstream and is_fork(skill)


def test_rename_rewrites_every_mention_as_new_revisions(workspace, owner):
    plan = create(workspace, owner, "plan")
    create(workspace, owner, "daily-brief", body="Use @plan, not @plan-trip or @planner.")
    create(workspace, owner, "untouched", body="Nothing about it.")
    rewritten = skill_rename(skill=plan, new_slug="plan-day", actor=owner)
    assert rewritten == ["daily-brief"]
    brief = WorkspaceSkill.objects.select_related("head").get(slug="daily-brief")
    assert brief.head.body == "Use @plan-day, not @plan-trip or @planner."
    assert brief.head.number == 2
    assert WorkspaceSkill.objects.get(slug="untouched").revisions.count() == 1
    assert Version.objects.get_for_object(brief.head).first().revision.comment == (
        "Renamed @plan to @plan-day"
    )


def test_rename_refuses_a_taken_slug_or_a_tool_and_changes_nothing(workspace, owner):
    plan = create(workspace, owner, "plan")
    create(workspace, owner, "other", body="See @plan.")
    for taken in ("other", "send-email", "Bad Slug", "plan\n"):
        with pytest.raises(ValidationFailed):
            skill_rename(skill=plan, new_slug=taken, actor=owner)
    assert set(WorkspaceSkill.objects.values_list("slug", flat=True)) == {"plan", "other"}
    assert WorkspaceSkill.objects.get(slug="other").head.body == "See @plan."


def test_create_refuses_bad_content_with_every_problem_named(workspace, owner, settings):
    settings.PIXIE_SKILL_FILE_MAX_BYTES = 10_000
    with pytest.raises(ValidationFailed) as refused:
        skill_create(
            workspace=workspace,
            slug="long",
            name="x" * 81,
            short_description="d" * 1025,
            body="y" * 10_001,
            actor=owner,
        )
    assert refused.value.problems == [
        "name is 81 characters; the limit is 80",
        "short description must be text of at most 1024 characters",
        "body is 10,001 bytes; the limit for one file is 10,000 (PIXIE_SKILL_FILE_MAX_BYTES)",
    ]
    assert not WorkspaceSkill.objects.exists()
