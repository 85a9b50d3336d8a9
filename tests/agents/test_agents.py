"""Owners arrange an agent's skills; turns remember exactly what they ran."""

import hashlib

import pytest
from django.core.management import call_command
from django.db.models import ProtectedError
from django.urls import reverse
from rest_framework.test import APIClient

from agents.models import AgentSkill, Turn
from agents.selectors import composed_prompt, planner_menu, skill_stats
from agents.services import turn_finish, turn_start
from catalog.models import FileBlob, RevisionFile, SkillRevision, WorkspaceSkill
from catalog.services.workspace_skills import skill_create, skill_edit
from pixie.installer.plans import plan_create
from tests.clients import admin_for
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db
AR = ["ar-ground-rules", "invoice-chase", "take-payment", "apply-credit-note"]


@pytest.fixture
def installed(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    return agents


def api_as(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_owner_reorders_disables_and_pins_through_the_api(installed, owner, member):
    api = api_as(owner)
    url = "/api/workspaces/acme/agents/collections/skills/"
    new_order = ["take-payment", "ar-ground-rules", "invoice-chase", "apply-credit-note"]
    body = api.put(url, {"order": new_order}, format="json").json()
    assert [s["skill"] for s in body["skills"]] == new_order
    body = api.patch(
        url + "take-payment/", {"enabled": False, "pinned_revision": None}, format="json"
    ).json()
    take = next(s for s in body["skills"] if s["skill"] == "take-payment")
    assert (take["enabled"], take["pinned_revision"]) == (False, None)
    bad = api.put(url, {"order": ["take-payment"]}, format="json")
    assert bad.status_code == 400 and "exactly once" in bad.json()["detail"]
    refused = api_as(member).put(url, {"order": list(reversed(new_order))}, format="json")
    assert refused.status_code == 403
    assert [a.skill.slug for a in AgentSkill.objects.filter(agent=installed[0])] == new_order


def test_the_composed_prompt_follows_order_and_flags_what_resolves_nowhere(installed, owner):
    agent = installed[0]
    api = api_as(owner)
    api.patch(
        "/api/workspaces/acme/agents/collections/skills/take-payment/",
        {"enabled": False},
        format="json",
    )
    prompt = composed_prompt(agent)
    assert [p.slug for p in prompt.parts] == [
        "ar-ground-rules",
        "invoice-chase",
        "apply-credit-note",
    ]
    assert prompt.text.startswith(agent.system_prompt)
    # invoice-chase mentions @take-payment, which is disabled for this agent.
    assert "take-payment" in prompt.unresolved
    body = api.get("/api/workspaces/acme/agents/collections/prompt/").json()
    assert body["unresolved"] == prompt.unresolved


def test_an_override_replaces_the_body_for_one_agent_only(installed, owner):
    api = api_as(owner)
    api.patch(
        "/api/workspaces/acme/agents/collections/skills/invoice-chase/",
        {"override": "Chase gently; never more than once a week."},
        format="json",
    )
    collections, front_desk = installed
    part = next(p for p in composed_prompt(collections).parts if p.slug == "invoice-chase")
    assert part.overridden and part.body == "Chase gently; never more than once a week."
    other = next(p for p in composed_prompt(front_desk).parts if p.slug == "invoice-chase")
    assert not other.overridden
    turn = turn_start(agent=collections)
    used = turn.turn_skills.get(revision__skill__slug="invoice-chase")
    assert used.override.body == "Chase gently; never more than once a week."


def test_the_menu_lists_only_enabled_advertised_skills(installed, acme, owner):
    agent = installed[0]
    imported = skill_create(
        workspace=acme, slug="daily-brief", name="Daily brief", short_description="Brief me.",
        body="Summarise the day.", actor=owner, advertised=False, origin="import",
    )  # fmt: skip
    AgentSkill.objects.create(agent=agent, skill=imported, position=99)
    assert "daily-brief" not in [item["slug"] for item in planner_menu(agent)]
    client = api_as(owner)
    assert [
        i["slug"] for i in client.get("/api/workspaces/acme/agents/collections/menu/").json()
    ] == AR
    from django.test import Client

    browser = Client()
    owner.is_staff = True
    owner.save()
    browser.force_login(owner)
    browser.post(
        reverse("admin:catalog_workspaceskill_advertise", args=[imported.pk]), {"advertised": "1"}
    )
    assert planner_menu(agent)[-1]["slug"] == "daily-brief"


def test_a_turn_keeps_what_it_resolved_and_later_turns_follow_pins(
    installed, acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    collections, front_desk = installed
    AgentSkill.objects.filter(agent=front_desk).update(pinned_revision=None)  # follows latest
    before = turn_start(agent=collections)
    before_numbers = list(before.turn_skills.values_list("revision__number", flat=True))
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    assert chase.head.number == 2
    assert list(before.turn_skills.values_list("revision__number", flat=True)) == before_numbers
    pinned_turn = turn_start(agent=collections)
    following_turn = turn_start(agent=front_desk)
    assert pinned_turn.turn_skills.get(revision__skill=chase).revision.number == 1
    assert following_turn.turn_skills.get(revision__skill=chase).revision.number == 2


def test_revisions_a_turn_used_survive_uninstall_and_cannot_be_deleted(
    installed, acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    turn = turn_start(agent=installed[0])
    turn_finish(turn=turn, outcome="succeeded")
    plan = plan_create(
        workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    approve_and_apply(plan, owner, django_capture_on_commit_callbacks)
    body = api_as(owner).get(f"/api/workspaces/acme/turns/{turn.pk}/").json()
    assert [s["skill"] for s in body["skills"]] == AR
    assert all(s["body"] for s in body["skills"])
    revision = turn.turn_skills.first().revision
    with pytest.raises(ProtectedError):
        WorkspaceSkill.objects.filter(pk=revision.skill_id).delete()
    with pytest.raises(ProtectedError):
        installed[0].delete()  # the agent's turns keep it too
    assert SkillRevision.objects.filter(pk=revision.pk).exists()


def test_turn_command_starts_and_finishes_a_turn(installed, capsys):
    call_command("turn", "start", "acme", "collections")
    out = capsys.readouterr().out
    assert "started for Collections agent" in out and "@invoice-chase r1" in out
    turn = Turn.objects.get()
    call_command("turn", "finish", str(turn.pk), "succeeded")
    assert Turn.objects.get().outcome == "succeeded"


def test_skill_stats_count_turns_per_revision(installed, owner, django_assert_max_num_queries):
    for _ in range(3):
        turn_start(agent=installed[0])
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body="New words.")
    AgentSkill.objects.filter(skill=chase).update(pinned_revision=None)
    turn_start(agent=installed[1])
    with django_assert_max_num_queries(1):
        stats = skill_stats(chase)
    assert stats == [
        {"revision": 2, "last_7_days": 1, "last_30_days": 1},
        {"revision": 1, "last_7_days": 3, "last_30_days": 3},
    ]


def add_files(revision, count: int) -> None:
    """Give ``revision`` ``count`` small files, as an install would."""
    for i in range(count):
        content = f"notes {revision.pk}-{i}\n".encode()
        blob, _ = FileBlob.objects.get_or_create(
            sha256=hashlib.sha256(content).hexdigest(),
            defaults={"size": len(content), "content": content},
        )
        RevisionFile.objects.create(
            revision=revision, path=f"references/note-{i}.md", blob=blob, size=len(content),
            executable=i == 0, media_type="text/markdown",
        )  # fmt: skip


def test_agent_pages_are_bounded_with_fifty_skills(
    acme, owner, agents, django_assert_max_num_queries
):
    from django.test import Client

    agent = agents[0]
    for i in range(50):
        skill = skill_create(
            workspace=acme, slug=f"s-{i}", name=f"S {i}", short_description="One.",
            body=f"Use @s-{(i + 1) % 50} and @query-ledger.", actor=owner,
        )  # fmt: skip
        AgentSkill.objects.create(agent=agent, skill=skill, position=i, pinned_revision=skill.head)
        add_files(skill.head, 3)
        turn_start(agent=agent) if i % 10 == 0 else None
    with django_assert_max_num_queries(3):
        prompt = composed_prompt(agent)
    assert all(len(part.files) == 3 for part in prompt.parts)
    owner.is_staff = True
    owner.save()
    browser = Client()
    browser.force_login(owner)
    pages = [
        reverse("admin:agents_agent_change", args=[agent.pk]),
        reverse("admin:agents_agent_skills", args=[agent.pk]),
        reverse("admin:agents_agent_prompt", args=[agent.pk]),
        reverse("admin:agents_agent_menu", args=[agent.pk]),
        reverse("admin:catalog_workspaceskill_change", args=[WorkspaceSkill.objects.first().pk]),
        reverse("admin:agents_turn_change", args=[Turn.objects.first().pk]),
    ]
    for url in pages:
        # 17: one reads the reader's groups (is the reader an auditor?), once a request;
        # in the whole suite's order one more (CI: 17; alone: 16). Fifty skills or five.
        with django_assert_max_num_queries(17):
            response = browser.get(url)
        assert response.status_code == 200, url
        if url == pages[2]:
            assert "<code>references/note-2.md</code>" in response.content.decode()


def test_an_upgrade_plan_reports_overridden_attachments_like_forks(
    installed, acme, owner, demo_catalog
):
    from agents.services import agent_skill_override

    attachment = AgentSkill.objects.get(agent=installed[0], skill__slug="invoice-chase")
    agent_skill_override(attachment=attachment, body="Our own chase.", actor=owner)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    (step,) = [s for s in plan.steps if s["type"] == "agent.override"]
    assert (step["agent"], step["slug"], step["override"]) == (
        "Collections agent",
        "invoice-chase",
        1,
    )


def test_a_skill_with_the_agent_s_own_body_detaches_unless_a_turn_ran_that_body(installed, owner):
    api = api_as(owner)
    url = "/api/workspaces/acme/agents/collections/skills/{}/"
    for slug in ("invoice-chase", "take-payment"):
        answer = api.patch(url.format(slug), {"override": f"Our way for {slug}."}, format="json")
        assert answer.status_code == 200, answer.content
    collections, _front_desk = installed
    assert api.delete(url.format("take-payment")).status_code == 200  # no turn ran it
    assert not AgentSkill.objects.filter(agent=collections, skill__slug="take-payment").exists()
    turn_start(agent=collections)  # runs the agent's own body for @invoice-chase
    refused = api.delete(url.format("invoice-chase"))
    assert refused.status_code == 400
    assert refused.json()["code"] == "override_in_use"
    assert "disable the skill instead of detaching it" in refused.json()["detail"]
    assert AgentSkill.objects.filter(agent=collections, skill__slug="invoice-chase").exists()


def test_an_agent_pinned_behind_an_owners_edit_is_told_so_on_its_pages_and_in_the_api(
    installed, acme, owner
):
    """An install pins its skills to their first revision; the owner's edit makes r2, which
    the pinned agent does not run: its prompt, its skills page and the API say so."""
    agent = installed[0]
    skill = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    skill_edit(skill=skill, body=skill.head.body + "\n\nNever on a Sunday.", actor=owner)
    part = next(p for p in composed_prompt(agent).parts if p.slug == "invoice-chase")
    assert (part.revision, part.latest, part.behind) == (1, 2, True)
    assert part.pin_words == "pinned behind the latest (r1 of r2)"
    followed = next(p for p in composed_prompt(agent).parts if p.slug == "take-payment")
    assert (followed.behind, followed.pin_words) == (False, "pinned, the latest (r1)")

    body = api_as(owner).get("/api/workspaces/acme/agents/collections/prompt/").json()
    shown = {p["slug"]: (p["revision"], p["latest"], p["behind"]) for p in body["parts"]}
    assert shown["invoice-chase"] == (1, 2, True) and shown["take-payment"] == (1, 1, False)

    admin = admin_for(owner)
    prompt_page = admin.get(reverse("admin:agents_agent_prompt", args=[agent.pk]))
    assert "pinned behind the latest (r1 of r2)" in prompt_page.content.decode()
    skills_page = admin.get(reverse("admin:agents_agent_skills", args=[agent.pk]))
    assert "pinned to r1, behind the latest (r2)" in skills_page.content.decode()


def test_on_the_skills_page_a_detach_is_asked_first_and_the_rest_are_renumbered(installed, owner):
    from django.urls import reverse

    from tests.clients import admin_for

    collections = installed[0]
    client = admin_for(owner)
    page = reverse("admin:agents_agent_skills", args=[collections.pk])
    change = reverse("admin:agents_agent_skills_change", args=[collections.pk])
    shown = client.get(page).content.decode()
    assert shown.count('class="button" name="action"') > 0  # the admin's buttons, both themes
    assert 'class="button" name="action" value="detach" aria-label="Detach @invoice-chase…"' in (
        shown
    )
    second = AgentSkill.objects.get(agent=collections, position=2)
    asked = client.post(change, {"action": "detach", "attachment": second.pk})
    assert asked.status_code == 200
    assert f"Detach @{second.skill.slug} from Collections agent?" in asked.content.decode()
    assert AgentSkill.objects.filter(pk=second.pk).exists()
    done = client.post(
        change, {"action": "detach", "attachment": second.pk, "confirmed": "yes"}, follow=True
    )
    assert f"Detached @{second.skill.slug} from Collections agent." in done.content.decode()
    positions = list(
        AgentSkill.objects.filter(agent=collections).values_list("position", flat=True)
    )
    assert positions == [1, 2, 3]
    body = api_as(owner).get("/api/workspaces/acme/agents/collections/").json()
    assert [s["position"] for s in body["skills"]] == [1, 2, 3]


def test_dragging_on_the_skills_page_posts_the_whole_order(installed, owner):
    from django.urls import reverse

    from tests.clients import admin_for

    collections = installed[0]
    order = ["take-payment", "ar-ground-rules", "invoice-chase"]
    slugs = set(AgentSkill.objects.filter(agent=collections).values_list("skill__slug", flat=True))
    order += sorted(slugs - set(order))
    change = reverse("admin:agents_agent_skills_change", args=[collections.pk])
    admin_for(owner).post(change, {"action": "reorder", "order": ",".join(order)})
    now = AgentSkill.objects.filter(agent=collections).order_by("position")
    assert [a.skill.slug for a in now] == order
    refused = admin_for(owner).post(
        change, {"action": "reorder", "order": "take-payment"}, follow=True
    )
    assert "Give every attached skill exactly once" in refused.content.decode()


def test_the_composed_prompt_page_has_contents_with_tokens_and_folds_each_skill(
    installed, owner
):
    from tests.clients import admin_for

    collections = installed[0]
    prompt = composed_prompt(collections)
    page = admin_for(owner).get(reverse("admin:agents_agent_prompt", args=[collections.pk]))
    page = page.content.decode()
    contents = page.split('id="prompt-contents"', 1)[1].split("</nav>", 1)[0]
    assert f"Contents: about {prompt.tokens:,} tokens" in contents
    for part in prompt.parts:
        assert f'<a href="#prompt-{part.slug}">@{part.slug}</a>' in contents
        assert f"about {part.tokens:,} tokens · r{part.revision}" in contents
        assert f'<details class="prompt-part module" id="prompt-{part.slug}">' in page  # folded
    assert sum(part.tokens for part in prompt.parts) <= prompt.tokens
