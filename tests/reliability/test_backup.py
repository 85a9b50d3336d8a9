"""A backup made by scripts/backup restores, with scripts/restore, into a fresh
database that holds every plan, skill revision and turn, and every skill's files."""

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from agents.models import Turn, TurnSkill
from agents.services import turn_start
from catalog.models import FileBlob, Plan, RevisionFile, SkillFile, SkillRevision
from pixie.installer.plans import plan_create
from tests.catalog.ledger_install import install_ledger_tools
from tests.catalog.skill_folders import png_bytes, tree
from tests.installer.flow import approve_and_apply, install

ROOT = Path(__file__).resolve().parents[2]


def _url(database: str) -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT'] or 5432}/{database}"


def _rows(cursor, model, *fields) -> set:
    cursor.execute(f'SELECT {", ".join(fields)} FROM "{model._meta.db_table}"')  # noqa: S608
    return set(cursor.fetchall())


@pytest.fixture
def restored_name(postgres_only):
    name = f"restored_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(_url("postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _backup_and_restore(backup, restored_name) -> None:
    database_url = _url(connection.settings_dict["NAME"])
    subprocess.run(
        ["scripts/backup", str(backup)],
        cwd=ROOT, env={"PATH": "/usr/bin:/bin", "DATABASE_URL": database_url},
        check=True, timeout=120,
    )  # fmt: skip
    subprocess.run(
        ["scripts/restore", str(backup), _url(restored_name)],
        cwd=ROOT, env={"PATH": "/usr/bin:/bin"}, check=True, timeout=120,
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_restored_backup_has_every_plan_revision_and_turn(
    restored_name, demo_catalog, owner, acme, agents, django_capture_on_commit_callbacks, tmp_path
):
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture, agents)
    upgrade = plan_create(
        workspace=acme, kind=Plan.Kind.UPGRADE, bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    approve_and_apply(upgrade, owner, capture)
    plan_create(
        workspace=acme, kind=Plan.Kind.UNINSTALL, bundle_version=demo_catalog["2.2.0"], actor=owner
    )  # left proposed: a backup keeps plans in every state
    for agent in agents:
        turn_start(agent=agent)
        turn_start(agent=agent)

    expected = {
        Plan: {tuple(row) for row in Plan.objects.values_list("id", "status")},
        SkillRevision: {tuple(row) for row in SkillRevision.objects.values_list("id", "body")},
        Turn: {tuple(row) for row in Turn.objects.values_list("id", "agent_id")},
        TurnSkill: {tuple(row) for row in TurnSkill.objects.values_list("turn_id", "revision_id")},
    }
    assert len(expected[Plan]) == 3 and len(expected[Turn]) == 4 and expected[TurnSkill]

    backup = tmp_path / "pixie.dump"
    _backup_and_restore(backup, restored_name)

    with psycopg.connect(_url(restored_name)) as restored, restored.cursor() as cursor:
        assert _rows(cursor, Plan, "id", "status") == expected[Plan]
        assert _rows(cursor, SkillRevision, "id", "body") == expected[SkillRevision]
        assert _rows(cursor, Turn, "id", "agent_id") == expected[Turn]
        assert _rows(cursor, TurnSkill, "turn_id", "revision_id") == expected[TurnSkill]

    again = subprocess.run(
        ["scripts/restore", str(backup), _url(restored_name)],
        cwd=ROOT, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode != 0, "a restore must never write into an existing database"


@pytest.mark.django_db(transaction=True)
def test_a_restored_backup_gives_back_every_supporting_file_byte_for_byte(
    restored_name, owner, acme, agents, django_capture_on_commit_callbacks, tmp_path
):
    # Ledger Tools: a 30,000-character skill with an executable script, a reference
    # and a PNG, published and installed (so workspace revisions carry the files too).
    install_ledger_tools(
        tmp_path / "source", acme, owner, django_capture_on_commit_callbacks, agents=agents
    )
    source = tmp_path / "source" / "ledger-tools" / "skills" / "ledger-export"
    before = tmp_path / "before"
    call_command("bundle_dump", "ledger-tools", "1.0.0", str(before))
    dumped = tree(before)
    assert tree(before / "skills" / "ledger-export") == tree(source)
    assert dumped["skills/ledger-export/assets/logo.png"] == (png_bytes(), False)
    assert dumped["skills/ledger-export/scripts/export.py"][1] is True
    expected = {
        FileBlob: {(b.sha256, b.size, bytes(b.content)) for b in FileBlob.objects.all()},
        SkillFile: set(SkillFile.objects.values_list("skill_version_id", "path", "blob_id",
                                                     "executable")),
        RevisionFile: set(RevisionFile.objects.values_list("revision_id", "path", "blob_id",
                                                           "executable")),
    }  # fmt: skip
    assert len(expected[FileBlob]) == 3 and len(expected[RevisionFile]) == 3

    _backup_and_restore(tmp_path / "pixie.dump", restored_name)

    with psycopg.connect(_url(restored_name)) as restored, restored.cursor() as cursor:
        cursor.execute(f'SELECT sha256, size, content FROM "{FileBlob._meta.db_table}"')  # noqa: S608
        assert {(sha, size, bytes(content)) for sha, size, content in cursor} == expected[FileBlob]
        fields = ("path", "blob_id", "executable")
        assert _rows(cursor, SkillFile, "skill_version_id", *fields) == expected[SkillFile]
        assert _rows(cursor, RevisionFile, "revision_id", *fields) == expected[RevisionFile]

    # The operator's own path back out: bundle_dump, run against the restored database.
    after = tmp_path / "after"
    subprocess.run(
        [sys.executable, "manage.py", "bundle_dump", "ledger-tools", "1.0.0", str(after)],
        cwd=ROOT, env={"PATH": "/usr/bin:/bin", "DATABASE_URL": _url(restored_name)},
        check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    assert tree(after) == dumped
