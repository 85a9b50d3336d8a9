"""Owners add agents and change their name and system prompt, on pages and through the
API; a member is offered neither and a write of theirs changes nothing; bad input is
named and changes nothing."""

import pytest
from django.urls import reverse
from reversion.models import Version

from agents.models import Agent
from tests.clients import admin_for, api_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_an_owner_adds_an_agent_and_edits_it_on_its_pages(acme, owner):
    client = admin_for(owner)
    listing = client.get(reverse("admin:agents_agent_changelist")).content.decode()
    new = reverse("admin:agents_agent_new")
    assert f'href="{new}" class="addlink">Add an agent</a>' in listing
    page = client.get(new, {"workspace": acme.pk}).content.decode()
    assert f'<option value="{acme.pk}" selected>Acme</option>' in page
    answer = client.post(
        new, {"workspace": acme.pk, "name": "Front desk", "slug": "front-desk",
              "system_prompt": "Be brief."},
    )  # fmt: skip
    agent = Agent.objects.get(workspace=acme, slug="front-desk")
    assert answer["Location"] == reverse("admin:agents_agent_skills", args=[agent.pk])
    assert (agent.name, agent.system_prompt) == ("Front desk", "Be brief.")
    [made] = Version.objects.get_for_object(agent)
    assert made.revision.user == owner and "Created agent Front desk" in made.revision.comment

    change = client.get(reverse("admin:agents_agent_change", args=[agent.pk])).content.decode()
    edit = reverse("admin:agents_agent_edit", args=[agent.pk])
    assert f'href="{edit}">Edit name and prompt</a>' in change
    client.post(edit, {"name": "Reception", "system_prompt": "Be kind."})
    agent.refresh_from_db()
    assert (agent.slug, agent.name, agent.system_prompt) == ("front-desk", "Reception", "Be kind.")
    assert "renamed Front desk to Reception; changed its system prompt" in (
        Version.objects.get_for_object(agent).first().revision.comment
    )


def test_a_taken_slug_or_a_bad_name_is_named_and_changes_nothing(acme, owner):
    Agent.objects.create(workspace=acme, slug="front-desk", name="Front desk")
    client = admin_for(owner)
    taken = client.post(
        reverse("admin:agents_agent_new"),
        {"workspace": acme.pk, "name": "Another", "slug": "front-desk"},
    )
    assert "Acme already has an agent &#x27;front-desk&#x27;; choose another slug" in (
        taken.content.decode()
    )
    api = api_for(owner)
    refused = api.post(
        "/api/workspaces/acme/agents/",
        {"slug": "Bad Slug", "name": "Line\nbreak", "system_prompt": "x" * 8001},
        format="json",
    )
    assert refused.status_code == 400
    problems = refused.json()["problems"]
    assert problems[0].startswith("The slug 'Bad Slug' is not one")
    assert "The name holds a line break (U+000A); a name is one line of text" in problems
    assert "The system prompt is 8,001 characters; at most 8,000" in problems
    assert Agent.objects.count() == 1


def test_the_api_adds_and_changes_an_agent_for_owners_only(acme, owner, member):
    made = api_for(owner).post(
        "/api/workspaces/acme/agents/", {"slug": "collections", "name": "Collections"},
        format="json",
    )  # fmt: skip
    assert made.status_code == 201
    assert made.json() == {"slug": "collections", "name": "Collections", "system_prompt": "",
                           "skills": []}  # fmt: skip
    changed = api_for(owner).patch(
        "/api/workspaces/acme/agents/collections/", {"system_prompt": "Chase politely."},
        format="json",
    )  # fmt: skip
    assert changed.status_code == 200 and changed.json()["system_prompt"] == "Chase politely."
    for write in (
        lambda api: api.post("/api/workspaces/acme/agents/", {"slug": "x", "name": "X"},
                             format="json"),
        lambda api: api.patch("/api/workspaces/acme/agents/collections/", {"name": "Mine"},
                              format="json"),
    ):  # fmt: skip
        refused = write(api_for(member))
        assert refused.status_code == 403 and refused.json()["code"] == "owner_required"
    assert list(Agent.objects.values_list("slug", "name")) == [("collections", "Collections")]


def test_a_member_is_offered_no_agent_pages_and_a_stranger_finds_none(acme, member):
    agent = Agent.objects.create(workspace=acme, slug="front-desk", name="Front desk")
    client = admin_for(member)
    listing = client.get(reverse("admin:agents_agent_changelist")).content.decode()
    assert "Add an agent" not in listing
    new = client.get(reverse("admin:agents_agent_new")).content.decode()
    assert "you own none" in new and 'id="agent-form"' not in new
    edit = reverse("admin:agents_agent_edit", args=[agent.pk])
    page = client.get(edit).content.decode()
    assert "Only an owner of Acme can do this." in page and 'id="agent-form"' not in page
    client.post(edit, {"name": "Mine"})
    assert Agent.objects.get().name == "Front desk"
    assert admin_for(make_user("stranger")).get(edit).status_code == 404
