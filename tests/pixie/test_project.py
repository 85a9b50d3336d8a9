"""Project-wide promises: the demo, production settings, no credential values stored."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from reversion.models import Version

from agents.models import Agent
from catalog.models import BundleVersion, SkillVersion, Status, Tool
from pixie.core.models import Membership, Workspace

ROOT = Path(__file__).resolve().parents[2]
OUR_APPS = ["pixie", "catalog", "agents", "egress"]


@pytest.fixture
def demo_env(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path
    monkeypatch.delenv("PIXIE_ADMIN_PASSWORD", raising=False)


def _all_counts():
    return {
        model._meta.label: model.objects.count()
        for app in OUR_APPS
        for model in apps.get_app_config(app).get_models()
    } | {"users": get_user_model().objects.count()}


@pytest.mark.django_db
def test_demo_loads_the_catalog_and_the_acme_workspace(demo_env, capsys):
    call_command("demo")
    out = capsys.readouterr().out
    published = BundleVersion.objects.filter(status=Status.PUBLISHED)
    assert {(v.bundle.slug, v.version) for v in published} >= {
        ("accounts-receivable", "2.1.0"),
        ("accounts-receivable", "2.2.0"),
        ("support-desk", "1.0.0"),
    }
    acme = Workspace.objects.get(slug="acme")
    roles = dict(Membership.objects.filter(workspace=acme).values_list("user__username", "role"))
    assert roles == {"owner": "owner", "member": "member"}
    assert Agent.objects.filter(workspace=acme).count() == 2
    admin_password = re.search(r"^\s+admin\s+(\S+)$", out, re.M).group(1)
    assert get_user_model().objects.get(username="admin").check_password(admin_password)


@pytest.mark.django_db
def test_the_demo_operator_reviews_the_catalog_without_being_a_superuser(demo_env, capsys, client):
    call_command("demo")
    password = re.search(r"^\s+operator\s+(\S+)$", capsys.readouterr().out, re.M).group(1)
    operator = get_user_model().objects.get(username="operator")
    assert not operator.is_superuser
    assert not Membership.objects.filter(user=operator).exists()
    assert client.login(username="operator", password=password)
    version = BundleVersion.objects.get(bundle__slug="accounts-receivable", version="2.2.0")
    for url in [
        reverse("admin:catalog_bundleversion_changelist"),
        reverse("admin:catalog_bundleversion_change", args=[version.pk]),
        reverse("admin:catalog_bundleversion_review"),
        reverse("admin:catalog_publisher_changelist"),
    ]:
        assert client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_the_demo_auditor_reads_the_catalog_and_every_workspace_and_changes_nothing(
    demo_env, capsys, client
):
    call_command("demo")
    password = re.search(r"^\s+auditor\s+(\S+)$", capsys.readouterr().out, re.M).group(1)
    auditor = get_user_model().objects.get(username="auditor")
    assert not auditor.is_superuser
    assert not Membership.objects.filter(user=auditor).exists()
    assert client.login(username="auditor", password=password)
    acme = Workspace.objects.get(slug="acme")
    version = BundleVersion.objects.get(bundle__slug="accounts-receivable", version="2.2.0")
    for url in [
        reverse("admin:catalog_bundleversion_changelist"),
        reverse("admin:catalog_bundleversion_change", args=[version.pk]),
        reverse("admin:pixie_workspace_change", args=[acme.pk]),
        reverse("admin:pixie_workspace_dashboard", args=[acme.pk]),
        reverse("admin:agents_agent_changelist") + "?workspace=acme",
    ]:
        assert client.get(url).status_code == 200, url
    page = client.get(reverse("admin:catalog_bundleversion_change", args=[version.pk]))
    assert b'name="_save"' not in page.content  # a view, not a form
    before = _all_counts()
    for url in [
        reverse("admin:catalog_bundleversion_add"),
        reverse("admin:pixie_workspace_add"),
        reverse("admin:catalog_bundleversion_review"),
    ]:
        assert client.get(url).status_code == 403, url
    change = reverse("admin:pixie_workspace_change", args=[acme.pk])
    assert client.post(change, {"name": "Taken over", "slug": "acme"}).status_code == 403
    assert _all_counts() == before
    acme.refresh_from_db()
    assert acme.name == "Acme Ltd"


@pytest.mark.django_db
def test_running_demo_again_changes_nothing_and_prints_the_same_logins(demo_env, capsys):
    call_command("demo")
    first = capsys.readouterr().out
    before = _all_counts()
    call_command("demo")
    again = capsys.readouterr().out
    assert _all_counts() == before
    logins = [line for line in first.splitlines() if line.startswith("  ")]
    assert logins and logins == [line for line in again.splitlines() if line.startswith("  ")]


@pytest.mark.django_db
def test_demo_history_shows_who_loaded_the_catalog(demo_env):
    call_command("demo")
    version = BundleVersion.objects.get(bundle__slug="accounts-receivable", version="2.1.0")
    revisions = [v.revision for v in Version.objects.get_for_object(version)]
    assert revisions and all(r.user.username == "admin" for r in revisions)
    assert any("Loaded bundle accounts-receivable 2.1.0" in r.comment for r in revisions)
    skill = SkillVersion.objects.get(package__slug="take-payment")
    assert Version.objects.get_for_object(skill).first().revision.user.username == "admin"


@pytest.mark.django_db
def test_the_tool_registry_ships_the_builtin_tools():
    slugs = set(Tool.objects.values_list("slug", flat=True))
    assert {"http-request", "send-email", "find-file", "query-ledger", "ask-approval"} <= slugs


@pytest.mark.django_db
def test_migrate_puts_back_a_builtin_tool_whose_row_is_gone():
    """The registry is code: a database that lost a tool's row (a flush, a hand's DELETE)
    has it again after the next migrate, with nothing else added."""
    Tool.objects.filter(slug="send-email").delete()
    before = Tool.objects.count()
    call_command("migrate", verbosity=0)
    assert Tool.objects.filter(slug="send-email").exists()
    assert Tool.objects.count() == before + 1


CREDENTIAL_VALUE_WORDS = re.compile(
    r"secret|password|passwd|token|api_?key|credential_value|^value$"
)


def test_no_model_of_ours_has_a_field_for_a_credential_value():
    # Columns only: a reverse relation's name (a workspace's api_tokens) stores nothing.
    # API tokens themselves are kept as a SHA-256 and a short prefix (pixie.core.people.tokens).
    offenders = [
        f"{model._meta.label}.{field.name}"
        for app in OUR_APPS
        for model in apps.get_app_config(app).get_models()
        for field in model._meta.get_fields()
        if field.concrete and CREDENTIAL_VALUE_WORDS.search(field.name)
    ]
    assert offenders == []


def test_check_deploy_passes_with_production_settings(tmp_path):
    # The browser tests allow async-unsafe ORM calls in this process; production does not.
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {
        **inherited,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 20 + "production-like-secret-key-with-entropy-9f8e7d6c5b4a",
        "ALLOWED_HOSTS": "pixie.example.com",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        "SECURE_HSTS_PRELOAD": "1",
        # The rest of docs/OPERATIONS.md's production settings (scripts/prod sets LOG_FORMAT).
        "PIXIE_KEY_ENCRYPTION_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "LOG_FORMAT": "json",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "", "ALLOWED_HOSTS": "pixie.example.com"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
