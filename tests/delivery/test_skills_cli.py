"""The real ``skills`` client against a live Pixie: what an owner approved reaches the
agents' folders byte for byte, an upgrade moves exactly the skill it changed, a pinned
agent stays where it is, and a revoked token ends delivery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import skills_ref
from django.core.management import call_command

from agents.models import Agent
from catalog.models import BundleVersion, Plan
from pixie.delivery.selectors import delivery_overview
from pixie.delivery.tokens import delivery_token_create, delivery_token_revoke
from pixie.installer.plans import plan_approve, plan_create
from tests.catalog.skill_folders import bundle_folder, ledger_lookup_skill, tree
from tests.delivery.skills_cli import SkillsCli, require_cli
from tests.factories import make_user, make_workspace

pytestmark = [pytest.mark.django_db(transaction=True)]  # served by another thread


def publish(root: Path, version: str, *, lookup_line: str = "") -> BundleVersion:
    folder = bundle_folder(root / version, version=version)
    if lookup_line:
        ledger_lookup_skill(folder / "skills" / "ledger-lookup", extra_line=lookup_line)
    call_command("bundle_load", str(folder), "--publish", verbosity=0)
    return BundleVersion.objects.get(bundle__slug="ledger-tools", version=version)


def apply(workspace, owner, kind, version, agents=(), following=()):
    plan = plan_create(
        workspace=workspace, kind=kind, bundle_version=version, actor=owner,
        agents=agents, following=following,
    )  # fmt: skip
    plan_approve(plan=plan, actor=owner)  # the apply task runs eagerly when this commits
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED, plan.error
    return plan


def installed(project: Path, name: str) -> dict[str, bytes]:
    return {path: data for path, (data, _) in tree(project / ".agents" / "skills" / name).items()}


def published(root: Path, version: str, name: str) -> dict[str, bytes]:
    folder = root / version / "skills" / name
    return {path: data for path, (data, _) in tree(folder).items()}


def test_the_skills_cli_installs_updates_and_stops_at_a_revoked_token(serial_live_server, tmp_path):
    require_cli()
    owner = make_user("owen")
    acme = make_workspace("acme", owner=owner)
    desk = Agent.objects.create(workspace=acme, slug="desk", name="Desk agent")
    audit = Agent.objects.create(workspace=acme, slug="audit", name="Audit agent")
    sources = tmp_path / "published"
    first = publish(sources, "1.0.0")
    # The desk agent follows the latest; the audit agent stays pinned to 1.0.0's revisions.
    apply(acme, owner, Plan.Kind.INSTALL, first, agents=[desk, audit], following=[desk])
    _, desk_secret = delivery_token_create(workspace=acme, actor=owner, name="Desk laptops",
                                           agent=desk)  # fmt: skip
    audit_token, audit_secret = delivery_token_create(
        workspace=acme, actor=owner, name="Audit runner", agent=audit
    )
    desk_url = f"{serial_live_server}/deliver/{desk_secret}/"
    audit_url = f"{serial_live_server}/deliver/{audit_secret}/"
    cli = SkillsCli(home=tmp_path / "home")

    # One Pixie agent's URL, added for Claude Code and Codex in a scratch project.
    desk_project = tmp_path / "desk-project"
    added = cli.run("add", desk_url, "--agent", "claude-code", "codex", "-y", cwd=desk_project)
    assert added.status == 0, added.output
    for name in ("ledger-lookup", "ledger-export"):
        assert installed(desk_project, name) == published(sources, "1.0.0", name), name
        # The Agent Skills reference validator says of the installed folder what it said
        # of the published one.
        assert skills_ref.validate(desk_project / ".agents" / "skills" / name) == (
            skills_ref.validate(sources / "1.0.0" / "skills" / name)
        )
        claude = desk_project / ".claude" / "skills" / name
        assert (claude / "SKILL.md").read_bytes() == (
            desk_project / ".agents" / "skills" / name / "SKILL.md"
        ).read_bytes()
    lock = json.loads((desk_project / "skills-lock.json").read_text())
    assert set(lock["skills"]) == {"ledger-lookup", "ledger-export"}

    # A second Pixie agent, in another scratch project.
    audit_project = tmp_path / "audit-project"
    added = cli.run("add", audit_url, "--agent", "codex", "-y", cwd=audit_project)
    assert added.status == 0, added.output
    assert installed(audit_project, "ledger-lookup") == published(sources, "1.0.0", "ledger-lookup")

    # An upgrade that changes one skill: `skills update` reinstalls that one only.
    second = publish(sources, "1.1.0", lookup_line="Quote the account number back.\n")
    installation = acme.installations.get()
    upgrade = apply(acme, owner, Plan.Kind.UPGRADE, second)
    installation.refresh_from_db()
    assert installation.bundle_version == second
    # Delivery's page sees who is behind before anyone updates: the desk machine only.
    behind = [b.words for b in delivery_overview(acme).behind]
    assert behind == [f"@ledger-lookup: 1 client behind since plan #{upgrade.pk} upgraded to 1.1.0"]
    export_before = (desk_project / ".agents/skills/ledger-export/SKILL.md").stat().st_mtime_ns
    updated = cli.run("update", "-y", cwd=desk_project)
    assert updated.status == 0, updated.output
    assert "Updated ledger-lookup" in updated.output, updated.output
    assert "Updated 1 skill(s)" in updated.output, updated.output
    assert installed(desk_project, "ledger-lookup") == published(sources, "1.1.0", "ledger-lookup")
    assert (desk_project / ".agents/skills/ledger-export/SKILL.md").stat().st_mtime_ns == (
        export_before
    )
    overview = delivery_overview(acme)
    assert overview.behind == []
    [desk_client] = [row for row in overview.clients if row.token.name == "Desk laptops"]
    assert desk_client.client.user_agent  # whatever the client sends, kept as it came
    lookup = next(h for h in desk_client.holdings if h.slug == "ledger-lookup")
    assert lookup.current and lookup.revision == 2 and lookup.from_update
    # The pinned agent's index did not move: nothing to update there.
    audit_before = installed(audit_project, "ledger-lookup")
    updated = cli.run("update", "-y", cwd=audit_project)
    assert updated.status == 0, updated.output
    assert "Updated" not in updated.output, updated.output
    assert installed(audit_project, "ledger-lookup") == audit_before

    # A revoked token: `add` fails and writes nothing; `update` changes nothing and, as the
    # client does when it cannot read an index, warns and exits 0.
    delivery_token_revoke(token=audit_token, actor=owner)
    fresh = tmp_path / "fresh-project"
    refused = cli.run("add", audit_url, "--agent", "codex", "-y", cwd=fresh)
    assert refused.status != 0, refused.output
    assert not (fresh / ".agents").exists() and not (fresh / "skills-lock.json").exists()
    stuck = cli.run("update", "-y", cwd=audit_project)
    assert stuck.status == 0, stuck.output
    assert "Failed to check skills" in stuck.output, stuck.output
    assert installed(audit_project, "ledger-lookup") == audit_before
