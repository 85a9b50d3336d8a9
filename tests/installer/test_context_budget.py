"""Every plan says what each agent it touches will load once applied (menu lines and skill
bodies, estimated in tokens) against the budget, and warns when one passes it."""

import pytest
from django.core.management import call_command

from agents.models import AgentSkill
from agents.services import agent_skill_update
from catalog.models import BundleVersion, Plan
from pixie.installer.plans import plan_create
from tests.catalog.ledger_install import install_ledger_tools, ledger_tools
from tests.catalog.skill_folders import bundle_folder, ledger_export_skill

pytestmark = pytest.mark.django_db

LINE = "Read the ledger with @ledger-lookup before you write.\n"


def contexts(plan):
    return {s["agent"]: s for s in plan.steps if s["type"] == "agent.context"}


def install_plan(version, acme, owner, agents):
    return plan_create(
        workspace=acme, kind=Plan.Kind.INSTALL, bundle_version=version, actor=owner,
        agents=agents,
    )  # fmt: skip


def test_an_install_shows_each_chosen_agents_context_and_warns_past_the_budget(
    tmp_path, acme, owner, agents, settings
):
    settings.PIXIE_AGENT_CONTEXT_BUDGET_TOKENS = 6000
    version = ledger_tools(tmp_path)
    plan = install_plan(version, acme, owner, agents[:1])
    bodies = sum(len(s["body"]) for s in plan.steps if s["type"] == "skill.create")
    menu = sum(
        len(entry.skill_version.name) + len(entry.skill_version.description)
        for entry in version.skills.select_related("skill_version")
    )
    (context,) = contexts(plan).values()
    assert context["agent"] == "Collections agent"
    assert context["skills_tokens"] == (bodies + 3) // 4
    assert context["menu_tokens"] == (menu + 3) // 4
    assert context["tokens"] > 6000 and context["over"] is True
    (warning,) = [s for s in plan.steps if s["type"] == "finding"]
    assert warning["kind"] == "context_budget"
    assert warning["message"] == "Collections agent would load more than its context budget"
    assert "against a budget of 6,000" in warning["excerpt"]
    assert plan.summary.endswith("; 1 finding to read.")


def test_an_upgrade_counts_what_the_holders_keep_and_what_changes(
    tmp_path, acme, owner, agents, settings, django_capture_on_commit_callbacks
):
    settings.PIXIE_AGENT_CONTEXT_BUDGET_TOKENS = 100_000
    install_ledger_tools(
        tmp_path, acme, owner, django_capture_on_commit_callbacks, body=LINE * 100,
        agents=agents,
    )  # fmt: skip
    # Front desk follows the latest of every skill; Collections stays pinned.
    for attachment in AgentSkill.objects.filter(agent=agents[1]):
        agent_skill_update(attachment=attachment, actor=owner, pin=False)
    folder = bundle_folder(tmp_path / "next", version="1.1.0")
    skill = ledger_export_skill(folder / "skills" / "ledger-export", body=LINE * 400)
    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text.replace('version: "1.0.0"', 'version: "1.1.0"'))
    call_command("bundle_load", str(folder), "--publish")
    upgrade = plan_create(
        workspace=acme, kind=Plan.Kind.UPGRADE, actor=owner,
        bundle_version=BundleVersion.objects.get(bundle__slug="ledger-tools", version="1.1.0"),
    )  # fmt: skip
    found = contexts(upgrade)
    assert set(found) == {"Collections agent", "Front desk agent"}
    # Pinned, Collections keeps running the shorter body until repointed (a separate
    # decision); following the latest, Front desk will load the new, longer one.
    pinned, following = found["Collections agent"], found["Front desk agent"]
    assert len(LINE * 100) // 4 <= pinned["skills_tokens"] < len(LINE * 400) // 4
    assert following["skills_tokens"] >= len(LINE * 400) // 4
    assert not pinned["over"] and not following["over"]
    assert not [s for s in upgrade.steps if s["type"] == "finding"]


def test_a_budget_of_zero_turns_the_check_off(tmp_path, acme, owner, agents, settings):
    settings.PIXIE_AGENT_CONTEXT_BUDGET_TOKENS = 0
    plan = install_plan(ledger_tools(tmp_path), acme, owner, agents)
    assert contexts(plan) == {}
