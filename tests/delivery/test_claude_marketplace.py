"""A workspace's Claude Code marketplace: read with a workspace token as a header (or in
the path), a plugin per installed bundle plus one for the workspace's own skills, each
archive's SHA-256 and layout as Claude Code checks them, versions that move exactly with
the content, and Claude Code's own validator's verdict."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_create
from pixie.core.people.tokens import token_create
from pixie.delivery.models import SkillArchive
from pixie.delivery.tokens import delivery_token_create
from pixie.installer.plans import plan_create
from tests.batches import bulk_inserts
from tests.delivery.claude_code import require_claude, validate
from tests.installer.flow import approve_and_apply, install

SITE = "https://pixie.example.com"
CLAUDE_UA = "Claude-Code-Plugin-Manager"


@pytest.fixture
def site(settings):
    settings.PIXIE_SITE_URL, settings.PIXIE_SITE_URL_GIVEN = SITE, True
    settings.ALLOWED_HOSTS = ["*"]


@pytest.fixture
def workspace_token(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks,
            agents=agents)  # fmt: skip
    skill_create(workspace=acme, slug="month-end", actor=owner, name="Month end",
                 short_description="Close the month in the ledger.",
                 body="Close the month after the last payment run.")  # fmt: skip
    return delivery_token_create(workspace=acme, actor=owner, name="Claude seats")[1]


def bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}", "HTTP_USER_AGENT": CLAUDE_UA}


def read_marketplace(client, secret) -> dict:
    answer = client.get("/claude/marketplace.json", **bearer(secret))
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"] == "application/json"
    return answer.json()


def download(client, secret, plugin: dict) -> dict[str, bytes]:
    url = plugin["source"]["url"]
    assert url.startswith(f"{SITE}/claude/plugins/{plugin['name']}/")
    answer = client.get(url.removeprefix(SITE), **bearer(secret))
    assert answer.status_code == 200
    data = answer.getvalue()
    assert hashlib.sha256(data).hexdigest() == plugin["source"]["sha256"]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_a_plugin_per_bundle_and_one_for_the_workspaces_own_skills(client, site, workspace_token):
    marketplace = read_marketplace(client, workspace_token)
    assert marketplace["name"] == "pixie-acme" and marketplace["owner"] == {"name": "Acme"}
    plugins = {p["name"]: p for p in marketplace["plugins"]}
    assert list(plugins) == ["accounts-receivable", "acme"]
    assert plugins["accounts-receivable"]["version"].startswith("2.1.0+")
    assert plugins["acme"]["version"].startswith("0.0.0+")
    files = download(client, workspace_token, plugins["accounts-receivable"])
    manifest = json.loads(files[".claude-plugin/plugin.json"])
    assert manifest["name"] == "accounts-receivable"
    assert manifest["version"] == plugins["accounts-receivable"]["version"]
    assert sorted(path for path in files if path.endswith("SKILL.md")) == [
        f"skills/{slug}/SKILL.md"
        for slug in sorted(["ar-ground-rules", "invoice-chase", "take-payment",
                            "apply-credit-note"])  # fmt: skip
    ]
    # Each SKILL.md is the catalog's, byte for byte.
    chase = WorkspaceSkill.objects.get(workspace__slug="acme", slug="invoice-chase")
    assert files["skills/invoice-chase/SKILL.md"] == chase.head.upstream.skill_md.encode()
    own = download(client, workspace_token, plugins["acme"])
    assert sorted(own) == [".claude-plugin/plugin.json", "skills/month-end/SKILL.md"]


def test_an_upgrade_moves_exactly_the_upgraded_bundles_version_and_digest(
    client, site, workspace_token, acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    before = {p["name"]: p for p in read_marketplace(client, workspace_token)["plugins"]}
    again = {p["name"]: p for p in read_marketplace(client, workspace_token)["plugins"]}
    assert again == before  # the same content, the same versions and digests
    upgrade = plan_create(workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"],
                          actor=owner)  # fmt: skip
    approve_and_apply(upgrade, owner, django_capture_on_commit_callbacks)
    after = {p["name"]: p for p in read_marketplace(client, workspace_token)["plugins"]}
    assert after["acme"] == before["acme"]
    upgraded, was = after["accounts-receivable"], before["accounts-receivable"]
    assert upgraded["version"].startswith("2.2.0+") and upgraded["version"] != was["version"]
    assert upgraded["source"]["sha256"] != was["source"]["sha256"]
    assert "skills/payment-plan/SKILL.md" in download(client, workspace_token, upgraded)


def test_only_a_workspace_token_reads_it_and_the_path_form_works_too(
    client, site, workspace_token, acme, owner, agents
):
    # The path form: the token in the path, the archives' URLs under it.
    answer = client.get(f"/deliver/{workspace_token}/claude/marketplace.json")
    assert answer.status_code == 200
    url = answer.json()["plugins"][0]["source"]["url"]
    assert url.startswith(f"{SITE}/deliver/{workspace_token}/claude/plugins/")
    assert client.get(url.removeprefix(SITE)).status_code == 200
    # An agent's token, no token, a wrong one and an API token: 404.
    _, agent_secret = delivery_token_create(workspace=acme, actor=owner, name="One agent",
                                            agent=agents[0])  # fmt: skip
    refused = client.get("/claude/marketplace.json", **bearer(agent_secret))
    assert refused.status_code == 404 and b"workspace" in refused.content
    assert client.get("/claude/marketplace.json").status_code == 404
    assert client.get("/claude/marketplace.json", **bearer("pxd_" + "x" * 43)).status_code == 404
    _, api_secret = token_create(user=owner, actor=owner, name="API")
    assert client.get("/claude/marketplace.json", **bearer(api_secret)).status_code == 404
    assert client.post("/claude/marketplace.json", **bearer(workspace_token)).status_code == 405


def test_claude_codes_fetches_are_counted_beside_the_skills_clis(client, site, workspace_token):
    from pixie.core.models import Workspace
    from pixie.delivery.selectors import delivery_overview

    marketplace = read_marketplace(client, workspace_token)
    for plugin in marketplace["plugins"]:
        download(client, workspace_token, plugin)
    download(client, workspace_token, marketplace["plugins"][0])  # the same again: one row
    skills_cli = {"HTTP_USER_AGENT": "node", "REMOTE_ADDR": "198.51.100.4"}
    assert client.get(f"/deliver/{workspace_token}/.well-known/skills/index.json",
                      **skills_cli).status_code == 200  # fmt: skip
    overview = delivery_overview(Workspace.objects.get(slug="acme"))
    assert sorted(overview.kinds) == [("Claude Code", 1), ("the skills CLI (node)", 1)]
    [row] = [row for row in overview.clients if row.kind == "Claude Code"]
    assert row.client.user_agent == CLAUDE_UA
    assert {h.slug for h in row.holdings} == {
        "ar-ground-rules", "invoice-chase", "take-payment", "apply-credit-note", "month-end"
    }  # fmt: skip
    assert all(h.current for h in row.holdings)


def test_claude_codes_own_validator_passes_the_marketplace_and_each_plugin(
    client, site, workspace_token, tmp_path
):
    require_claude()
    marketplace = read_marketplace(client, workspace_token)
    folder = tmp_path / "marketplace"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(marketplace))
    verdict = validate(folder, tmp_path / "home")
    assert verdict.status == 0, verdict.output
    for plugin in marketplace["plugins"]:
        unpacked = tmp_path / plugin["name"]
        for path, data in download(client, workspace_token, plugin).items():
            (unpacked / path).parent.mkdir(parents=True, exist_ok=True)
            (unpacked / path).write_bytes(data)
        verdict = validate(unpacked, tmp_path / "home")
        assert verdict.status == 0, verdict.output
    # The check can fail: a malformed digest, an archive over plain http.
    for broken in (
        {"sha256": "not-a-digest"},
        {"url": marketplace["plugins"][0]["source"]["url"].replace("https:", "http:")},
    ):
        bad = json.loads(json.dumps(marketplace))
        bad["plugins"][0]["source"].update(broken)
        (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(bad))
        verdict = validate(folder, tmp_path / "home")
        assert verdict.status != 0, (broken, verdict.output)


@pytest.mark.parametrize("count", [10, 500])
def test_the_marketplace_costs_the_same_queries_whatever_its_skills(
    client, site, acme, owner, count, django_assert_max_num_queries
):
    from catalog.services.workspace_skills import NewSkill, skills_create

    skills_create(workspace=acme, actor=owner, skills=[
        NewSkill(slug=f"skill-{n}", name=f"Skill {n}", short_description=f"Skill number {n}.",
                 body=f"Do the {n}th thing.")
        for n in range(count)
    ])  # fmt: skip
    secret = delivery_token_create(workspace=acme, actor=owner, name="Claude seats")[1]
    # The first read builds every skill's archive (one insert, in batches on SQLite).
    with django_assert_max_num_queries(17 + bulk_inserts(SkillArchive, count)):
        plugins = read_marketplace(client, secret)["plugins"]
    assert len(plugins) == 1
    with django_assert_max_num_queries(3):  # then: the token, the client, last use
        assert read_marketplace(client, secret)["plugins"] == plugins
    with django_assert_max_num_queries(8):
        assert len(download(client, secret, plugins[0])) == count + 1
