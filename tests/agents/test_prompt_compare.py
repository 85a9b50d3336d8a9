"""What an agent ran at two moments, compared: each side is its latest turn by then (the
exact revisions and bodies it used), through the API and the agent's admin page."""

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentSkill
from agents.services import turn_start
from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from tests.clients import admin_for, api_for
from tests.factories import make_user
from tests.installer.flow import install

pytestmark = pytest.mark.django_db

NEW_LINE = "Offer a payment plan before the third reminder."


@pytest.fixture
def two_turns(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """Front desk follows the latest revisions: a turn, then an edit of @invoice-chase and
    the agent's own body for @take-payment, then another turn."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    _collections, front_desk = agents
    AgentSkill.objects.filter(agent=front_desk).update(pinned_revision=None)
    first = turn_start(agent=front_desk)
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=f"{chase.head.body}\n{NEW_LINE}\n")
    api_for(owner).patch(
        f"/api/workspaces/acme/agents/{front_desk.slug}/skills/take-payment/",
        {"override": "Take it by card only."},
        format="json",
    )
    second = turn_start(agent=front_desk)
    return front_desk, first, second


def compare(user, agent, **params):
    return api_for(user).get(f"/api/workspaces/acme/agents/{agent.slug}/prompt/compare/", params)


def test_the_prompts_two_turns_ran_compare_skill_by_skill_and_word_by_word(
    two_turns, member, django_assert_max_num_queries
):
    agent, first, second = two_turns
    moments = {"from": first.started_at.isoformat(), "to": second.started_at.isoformat()}
    with django_assert_max_num_queries(14):
        answer = compare(member, agent, **moments)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["before"]["turn"], body["after"]["turn"]) == (first.pk, second.pk)
    changes = {row["slug"]: row for row in body["skills"]}
    assert (changes["invoice-chase"]["change"], changes["invoice-chase"]["before"],
            changes["invoice-chase"]["after"]) == ("changed", 1, 2)  # fmt: skip
    assert changes["take-payment"]["change"] == "its own body now"
    assert changes["ar-ground-rules"]["change"] == "same"
    assert body["identical"] is False
    assert f"+{NEW_LINE}" in body["diff"]
    assert "Take it by card only." in body["after"]["text"]
    assert "Take it by card only." not in body["before"]["text"]
    # By default: from its first turn to now.
    assert compare(member, agent).json()["after"]["turn"] == second.pk


def test_the_same_moment_twice_is_the_same_prompt(two_turns, member):
    agent, _first, second = two_turns
    at = second.started_at.isoformat()
    body = compare(member, agent, **{"from": at, "to": at}).json()
    assert body["identical"] is True and body["diff"] == []


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"from": "soon", "to": "2030-01-01"}, "from: 'soon' is not a day (2026-12-01) or a"),
        ({"from": "2030-01-02", "to": "2030-01-01"}, "from (2030-01-02 23:59) is after to"),
        ({"from": "1999-01-01", "to": "1999-12-31"}, "ran no turn by 1999-12-31 23:59"),
    ],
)
def test_a_comparison_that_cannot_be_made_says_why(two_turns, member, params, words):
    agent, _first, _second = two_turns
    answer = compare(member, agent, **params)
    assert answer.status_code == 400
    assert words in answer.json()["detail"], answer.json()


def test_members_read_the_comparison_in_the_admin_and_strangers_find_nothing(two_turns, member):
    agent, first, second = two_turns
    url = reverse("admin:agents_agent_prompt_compare", args=[agent.pk])
    page = admin_for(member).get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="prompt-compare-form"' in text and 'id="prompt-compare-skills"' not in text
    asked = (
        admin_for(member)
        .get(url, {"from": first.started_at.isoformat(), "to": second.started_at.isoformat()})
        .content.decode()
    )
    assert "its own body now" in asked and "<ins>" in asked
    assert f"Turn #{second.pk}" in asked
    # The form keeps the moments compared, in the only form a datetime-local field shows.
    shown = f'value="{timezone.localtime(second.started_at):%Y-%m-%dT%H:%M:%S}"'
    assert shown in asked
    assert admin_for(make_user("sid")).get(url).status_code == 404
    change = reverse("admin:agents_agent_change", args=[agent.pk])
    assert "Compare what it ran" in admin_for(member).get(change).content.decode()
