"""Skill files through the API: listed with sizes, served safely, a version as a .zip."""

import io
import zipfile
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from catalog.bundle_files import read_bundle_folder, write_bundle_folder
from catalog.models import BundleVersion, SkillVersion
from catalog.services.bundle_load import bundle_spec_of
from catalog.skill_content import sha256_of
from tests.factories import make_user, make_workspace

from .bundle_archives import ledger_bundle, many_skills_bundle
from .skill_folders import png_bytes, tree

DEMO_SUPPORT = Path(__file__).resolve().parents[2] / "catalog" / "demo" / "support-desk-1.0.0"

pytestmark = pytest.mark.django_db
V = "/api/bundles/ledger-tools/versions/1.0.0/"


def load(folder):
    call_command("bundle_load", str(folder), "--publish")
    return folder


@pytest.fixture
def ledger(tmp_path):
    return load(ledger_bundle(tmp_path / "ledger-tools"))


@pytest.fixture
def api():
    """A member of a workspace: the catalog is what a workspace sees."""
    reader = make_user("reader")
    make_workspace("readers", members=[reader])
    client = APIClient()
    client.force_authenticate(reader)
    return client


def test_a_version_lists_each_skills_files_size_and_the_totals(api, ledger):
    body = api.get(V).json()
    export = next(s for s in body["skills"] if s["slug"] == "ledger-export")
    files = {f["path"]: f for f in export["files"]}
    assert sorted(files) == [
        "assets/chart.svg", "assets/logo.png", "references/report.html",
        "references/statement-fields.md", "scripts/export.py",
    ]  # fmt: skip
    script = files["scripts/export.py"]
    data = (ledger / "skills/ledger-export/scripts/export.py").read_bytes()
    assert script == {
        "path": "scripts/export.py",
        "size": len(data),
        "sha256": sha256_of(data),
        "executable": True,
        "mode": "100755",
        "media_type": "text/x-python",
        "url": V + "skills/ledger-export/files/scripts/export.py",
    }
    assert files["assets/logo.png"]["mode"] == "100644"
    assert files["assets/logo.png"]["media_type"] == "image/png"
    size = export["size"]
    assert size["estimated_tokens"] > 5000 and size["over_guidance"] is True
    assert "past the Agent Skills guidance" in size["warning"]
    lookup = next(s for s in body["skills"] if s["slug"] == "ledger-lookup")
    assert lookup["files"] == [] and lookup["size"]["warning"] == ""
    assert lookup["size"]["over_guidance"] is False
    totals = body["totals"]
    assert (totals["skills"], totals["files"]) == (2, 5)
    on_disk = sum(len(b) for b, _ in tree(ledger / "skills").values())
    assert totals["bytes"] == on_disk
    assert totals["estimated_tokens"] == sum(s["size"]["estimated_tokens"] for s in body["skills"])
    assert totals["over_guidance"] == ["ledger-export"] and "1 of 2 skills" in totals["warning"]
    assert body["download"] == V + "download"


def test_each_file_is_served_as_stored_and_never_rendered_as_a_page(api, ledger):
    folder = ledger / "skills/ledger-export"
    files = V + "skills/ledger-export/files/"

    script = api.get(files + "scripts/export.py")
    assert script.status_code == 200
    assert script.content == (folder / "scripts/export.py").read_bytes()
    assert script["Content-Type"] == "text/plain; charset=utf-8"
    assert script["Content-Disposition"].startswith("inline")
    for response in (script, api.get(files + "assets/logo.png")):
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"] == "sandbox"

    logo = api.get(files + "assets/logo.png")
    assert (logo["Content-Type"], logo.content) == ("image/png", png_bytes())
    assert logo["Content-Disposition"] == 'inline; filename="logo.png"'

    for path in ("references/report.html", "assets/chart.svg"):
        active = api.get(files + path)
        assert active.content == (folder / path).read_bytes()
        assert active["Content-Type"] == "application/octet-stream", path
        assert active["Content-Disposition"].startswith("attachment"), path
        assert active["Content-Security-Policy"] == "sandbox"

    skill_md = api.get(files + "SKILL.md")
    assert skill_md.content == (folder / "SKILL.md").read_bytes()
    assert skill_md["Content-Type"] == "text/plain; charset=utf-8"


def test_unknown_files_skills_and_versions_answer_404_in_json(api, ledger):
    for url in (
        V + "skills/ledger-export/files/scripts/nope.py",
        V + "skills/ledger-export/files/../SKILL.md",
        V + "skills/nobody/files/SKILL.md",
        "/api/bundles/ledger-tools/versions/9.9.9/skills/ledger-export/files/SKILL.md",
        "/api/bundles/ledger-tools/versions/9.9.9/download",
    ):
        response = api.get(url)
        assert response.status_code == 404, url
        assert response.json()["detail"], url
    assert APIClient().get(V + "skills/ledger-export/files/SKILL.md").status_code == 401
    assert APIClient().get(V + "download").status_code == 401


def test_the_zip_is_the_bundle_folder_byte_for_byte_and_mode_for_mode(api, ledger, tmp_path):
    response = api.get(V + "download")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="ledger-tools-1.0.0.zip"'
    data = b"".join(response.streaming_content)
    unzipped = tmp_path / "unzipped"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            target = unzipped / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            target.chmod((info.external_attr >> 16) & 0o777)
    # What was loaded comes out: every skill file and mode; bundle.toml as bundle_dump writes it.
    got = tree(unzipped)
    skills = {p: v for p, v in tree(ledger).items() if p.startswith("skills/")}
    assert {p: v for p, v in got.items() if p.startswith("skills/")} == skills
    assert got["skills/ledger-export/scripts/export.py"][1] is True
    dumped = write_bundle_folder(
        bundle_spec_of(BundleVersion.objects.get(version="1.0.0")), tmp_path / "dumped"
    )
    assert got == tree(dumped)
    reread = read_bundle_folder(unzipped)
    stored = dict(SkillVersion.objects.values_list("package__slug", "digest"))
    assert {s.slug: s.digest for s in reread.skills} == stored
    # The same version gives the same bytes.
    assert b"".join(api.get(V + "download").streaming_content) == data


def test_drafts_files_and_zip_are_for_staff_only(api, tmp_path, operator):
    call_command("bundle_load", str(ledger_bundle(tmp_path / "draft", version="2.0.0")))
    draft = "/api/bundles/ledger-tools/versions/2.0.0/"
    assert api.get(draft + "download").status_code == 404
    assert api.get(draft + "skills/ledger-export/files/SKILL.md").status_code == 404
    staff = APIClient()
    staff.force_authenticate(operator)
    assert staff.get(draft + "download").status_code == 200
    assert staff.get(draft + "skills/ledger-export/files/scripts/export.py").status_code == 200


@pytest.mark.parametrize("count", [2, 20])
def test_files_and_zip_run_the_same_queries_whatever_the_size(
    count, api, tmp_path, django_assert_max_num_queries
):
    load(many_skills_bundle(tmp_path / "many", count))
    url = "/api/bundles/many/versions/1.0.0/"
    cache.clear()
    # The catalog's stamp and the reader's facts (for the ETag), then the version (with the
    # user's right to see it), its skills, files, hosts, credentials; asked again at the
    # same stamp, the stamp alone.
    with django_assert_max_num_queries(7):
        body = api.get(url).json()
    with django_assert_max_num_queries(1):
        assert api.get(url).json() == body
    assert body["totals"]["files"] == 3 * count
    assert all(len(s["files"]) == 3 for s in body["skills"])
    with django_assert_max_num_queries(6):
        response = api.get(url + "download")
        data = b"".join(response.streaming_content)
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert names[:2] == ["bundle.toml", "bundle.signature.json"]
    assert len(names) == 2 + 4 * count
    with django_assert_max_num_queries(3):  # version, skill, file with its bytes
        served = api.get(url + "skills/skill-01/files/scripts/run.sh")
    assert served.content == b"#!/bin/sh\necho 1\n"


# A workspace skill's files: its head revision's.


@pytest.fixture
def installed(ledger, django_capture_on_commit_callbacks):
    from tests.installer.flow import install

    owner, member, stranger = make_user("owen"), make_user("mia"), make_user("sam")
    workspace = make_workspace("acme", owner=owner, members=[member])
    make_workspace("globex", owner=stranger)
    install(
        workspace, BundleVersion.objects.get(version="1.0.0"), owner,
        django_capture_on_commit_callbacks,
    )  # fmt: skip
    return {"owner": owner, "member": member, "stranger": stranger}


def as_user(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_workspace_skill_lists_and_serves_its_files_to_members_only(installed, ledger):
    member = as_user(installed["member"])
    url = "/api/workspaces/acme/skills/ledger-export/"
    body = member.get(url).json()
    assert [f["path"] for f in body["files"]] == [
        "assets/chart.svg", "assets/logo.png", "references/report.html",
        "references/statement-fields.md", "scripts/export.py",
    ]  # fmt: skip
    script = next(f for f in body["files"] if f["path"] == "scripts/export.py")
    assert script["executable"] is True and script["url"] == url + "files/scripts/export.py"
    assert body["size"]["over_guidance"] is True and body["size"]["warning"]

    folder = ledger / "skills/ledger-export"
    served = member.get(url + "files/scripts/export.py")
    assert served.content == (folder / "scripts/export.py").read_bytes()
    assert served["X-Content-Type-Options"] == "nosniff"
    assert member.get(url + "files/SKILL.md").content == (folder / "SKILL.md").read_bytes()
    html = member.get(url + "files/references/report.html")
    assert html["Content-Disposition"].startswith("attachment")
    assert member.get(url + "files/nope.txt").status_code == 404

    stranger = as_user(installed["stranger"])
    assert stranger.get(url + "files/scripts/export.py").status_code == 404
    assert b"argparse" not in stranger.get(url + "files/scripts/export.py").content


def test_a_locally_edited_skill_serves_its_rendered_skill_md(installed):
    owner = as_user(installed["owner"])
    url = "/api/workspaces/acme/skills/ledger-lookup/"
    assert owner.patch(url, {"body": "Look it up, twice."}, format="json").status_code == 200
    text = owner.get(url + "files/SKILL.md").content.decode()
    assert text.startswith("---\nname: ledger-lookup\n")
    assert text.endswith("Look it up, twice.\n")


def test_the_workspace_skill_list_runs_bounded_queries(
    api, tmp_path, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    from tests.installer.flow import install

    load(many_skills_bundle(tmp_path / "many", 20))
    owner = make_user("owen")
    workspace = make_workspace("acme", owner=owner)
    install(workspace, BundleVersion.objects.get(bundle__slug="many"), owner,
            django_capture_on_commit_callbacks)  # fmt: skip
    client = as_user(owner)
    with django_assert_max_num_queries(6):
        body = client.get("/api/workspaces/acme/skills/").json()
    skills = body["results"] if isinstance(body, dict) else body
    assert len(skills) == 20 and all(len(s["files"]) == 3 for s in skills)


@pytest.mark.parametrize("where", ["version", "file"])
def test_a_nul_in_the_url_answers_404_not_a_server_error(where, operator_client):
    call_command("bundle_load", str(DEMO_SUPPORT), "--publish")
    url = (
        "/api/bundles/support-desk/versions/1.0.0%00/"
        if where == "version"
        else "/api/bundles/support-desk/versions/1.0.0/skills/draft-reply/files/a%00b"
    )
    assert operator_client.get(url).status_code == 404
