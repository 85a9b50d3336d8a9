"""What a share carries, and an import that lands whole or not at all."""

import json

import pytest
from reversion.models import Version

from catalog.models import SkillRevision, WorkspaceSkill
from pixie.core.errors import ValidationFailed
from pixie.core.skillshare import Item, decode, encode
from pixie.sharing import services as sharing
from pixie.sharing.models import Message, ShareImport

from .conftest import add_skill, skills_of

pytestmark = pytest.mark.django_db


def test_a_share_carries_the_skill_and_the_skills_it_mentions_but_no_tools_or_flags(
    alpha, daily_brief
):
    body = sharing.share_body(workspace=alpha, skill=daily_brief)
    assert [item.id for item in decode(body).items] == ["daily-brief", "meeting-prep"]
    wire = json.loads(body)["pixie_skill_share"]
    assert set(wire["skill"]) == {"id", "name", "shortDescription", "detailedBody"}
    assert "enabled" not in body and "advertised" not in body
    assert "@read-calendar" in wire["closure"][0]["detailedBody"]  # a tool stays text


def test_skills_that_mention_each_other_share_once_each(ann, alpha):
    add_skill(alpha, ann, "ping", "Then @pong.")
    pong = add_skill(alpha, ann, "pong", "Then @ping.")
    body = sharing.share_body(workspace=alpha, skill=pong)
    assert [item.id for item in decode(body).items] == ["pong", "ping"]


def test_twelve_skills_in_all_is_the_most_a_share_carries(ann, alpha):
    for i in range(12):
        add_skill(alpha, ann, f"step-{i}", f"Then @step-{i + 1}." if i < 11 else "Done.")
    root = WorkspaceSkill.objects.get(workspace=alpha, slug="step-0")
    assert len(decode(sharing.share_body(workspace=alpha, skill=root)).items) == 12


def test_a_share_over_64_kib_is_refused(ann, alpha):
    for i in range(12):
        mention = f" @big-{i + 1}" if i < 11 else ""
        add_skill(alpha, ann, f"big-{i}", "é" * 7000 + mention)
    root = WorkspaceSkill.objects.get(workspace=alpha, slug="big-0")
    with pytest.raises(ValidationFailed, match="too large to share"):
        sharing.share_body(workspace=alpha, skill=root)


def test_an_archived_skill_is_neither_shared_nor_packed(ann, alpha, daily_brief):
    from django.utils import timezone

    WorkspaceSkill.objects.filter(slug="meeting-prep").update(archived_at=timezone.now())
    assert [i.id for i in decode(sharing.share_body(workspace=alpha, skill=daily_brief)).items] == [
        "daily-brief"
    ]
    archived = WorkspaceSkill.objects.get(slug="meeting-prep")
    with pytest.raises(ValidationFailed, match="@meeting-prep is archived"):
        sharing.share_body(workspace=alpha, skill=archived)


def test_a_share_that_cannot_land_whole_lands_not_at_all(
    ann, bob, alpha, beta, contacts, django_capture_on_commit_callbacks
):
    fine = Item("fine-skill", "Fine", "Fine.", "All good.")
    # The wire allows a blank body; a workspace skill needs words to follow.
    odd = Item("odd-skill", "Odd", "Odd.", "   ")
    with django_capture_on_commit_callbacks(execute=True):
        sharing.message_send(
            workspace=alpha,
            contact=contacts["beta_at_alpha"],
            body=encode(fine, [odd]),
            actor=ann,
            comment="A share made by hand",
        )
    message = Message.objects.get(workspace=beta)
    with pytest.raises(ValidationFailed) as refused:
        sharing.share_import(workspace=beta, message=message, actor=bob)
    assert refused.value.problems == ["@odd-skill cannot be imported: body must not be empty"]
    assert not WorkspaceSkill.objects.filter(workspace=beta).exists()
    assert not ShareImport.objects.exists()


def test_the_import_is_in_the_history_with_who_and_why(
    ann, bob, beta, daily_brief, contacts, send_share
):
    send_share(daily_brief, contacts["beta_at_alpha"], ann)
    message = Message.objects.get(workspace=beta)
    sharing.share_import(workspace=beta, message=message, actor=bob)
    revision = SkillRevision.objects.get(skill__workspace=beta, skill__slug="daily-brief")
    assert revision.created_by == bob and revision.comment == "Imported from Alpha"
    (version,) = Version.objects.get_for_object(ShareImport.objects.get())
    assert version.revision.user == bob
    assert version.revision.comment.startswith(f"Imported the skill share in message {message.pk}")
    assert sorted(skills_of(beta)) == ["daily-brief", "meeting-prep"]


def _send_chain(alpha, ann, contact, length, django_capture_on_commit_callbacks):
    """A share of `length` skills, each mentioning the next, sent to Beta."""
    for i in reversed(range(length)):
        add_skill(alpha, ann, f"chain-{length}-{i}", f"Then @chain-{length}-{i + 1}.")
    root = WorkspaceSkill.objects.get(workspace=alpha, slug=f"chain-{length}-0")
    with django_capture_on_commit_callbacks(execute=True):
        sharing.share_send(workspace=alpha, skill=root, contact=contact, actor=ann)


def test_an_import_costs_the_same_queries_for_2_skills_as_for_12_that_collide(
    ann, bob, alpha, beta, contacts, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    # Half of the twelve, and one of the two, collide with Beta's own skills: re-slugged.
    for slug in ["chain-1-0", "chain-2-0", *(f"chain-12-{i}" for i in range(0, 12, 2))]:
        add_skill(beta, bob, slug, "Beta's own, different.")
    costs = {}
    for length in (1, 2, 12):  # the first warms per-process caches (content types)
        send = django_capture_on_commit_callbacks
        _send_chain(alpha, ann, contacts["beta_at_alpha"], length, send)
        message = Message.objects.filter(workspace=beta).latest("pk")
        with CaptureQueriesContext(connection) as queries:
            result = sharing.share_import(workspace=beta, message=message, actor=bob)
        assert len(result.outcome["imported"]) == length
        costs[length] = len(queries)
    assert result.outcome["renames"][0]["from"] == "chain-12-0"
    assert costs[12] == costs[2], costs
    assert costs[12] <= 28, costs  # the revision's audit entry, its place in the chain (2)
