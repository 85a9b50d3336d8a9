"""Uploading a bundle in the admin, as an operator does: check and preview, then load.

Archives are built here from the fixture folders; hostile ones are built by hand.
"""

import io
import os
import stat
import tarfile
import zipfile

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from catalog.models import BundleVersion, FileBlob, SkillFile, SkillVersion
from tests.factories import make_user, make_workspace

from .bundle_archives import ledger_bundle, tar_gz_of, zip_of
from .skill_folders import write

pytestmark = pytest.mark.django_db
URL = "/admin/catalog/bundleversion/upload/"


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


@pytest.fixture
def ledger(tmp_path):
    return ledger_bundle(tmp_path / "ledger-tools")


def upload(client, name, data, publish=False):
    fields = {"archive": SimpleUploadedFile(name, data, content_type="application/zip")}
    if publish:
        fields["publish"] = "on"
    return client.post(URL, fields)


def confirm(client, token, publish=True, follow=False, **fields):
    data = {"token": token, **({"publish": "on"} if publish else {}), **fields}
    return client.post(URL, data, follow=follow)


def catalog_rows():
    return (
        BundleVersion.objects.count(), SkillVersion.objects.count(),
        SkillFile.objects.count(), FileBlob.objects.count(),
    )  # fmt: skip


def uploads(data_dir):
    folder = data_dir / "uploads"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_an_operator_uploads_previews_and_publishes_a_bundle(operator_client, ledger, data_dir):
    page = operator_client.get("/admin/catalog/bundleversion/")
    assert URL.encode() in page.content and b"Upload a bundle" in page.content
    assert operator_client.get(URL).status_code == 200

    preview = upload(operator_client, "ledger-tools.zip", zip_of(ledger), publish=True)
    assert preview.status_code == 200
    text = preview.content.decode()
    assert "Ledger Tools" in text and "ledger-export" in text and "ledger-lookup" in text
    assert text.count("new skill version") == 2
    assert "past the Agent Skills guidance" in text  # the 30,000-character body
    assert "ledger.example.com:443" in text
    rows = {s.slug: s for s in preview.context["preview"].skills}
    assert rows["ledger-export"].files == 5 and rows["ledger-lookup"].files == 0
    assert rows["ledger-export"].tokens > 5000 and rows["ledger-lookup"].warning == ""
    assert catalog_rows() == (0, 0, 0, 0)  # a preview writes nothing
    token = preview.context["token"]
    assert uploads(data_dir) == [f"{token}.archive"]  # only the archive waits

    loaded = confirm(operator_client, token)
    version = BundleVersion.objects.get(bundle__slug="ledger-tools", version="1.0.0")
    assert loaded.status_code == 302
    # Publishing asked for goes through its confirmation, as from the version's page.
    publish = f"/admin/catalog/bundleversion/{version.pk}/publish/"
    assert loaded["Location"] == publish
    assert version.status == "draft"
    export = SkillFile.objects.get(skill_version__package__slug="ledger-export",
                                   path="scripts/export.py")  # fmt: skip
    assert export.executable is True
    assert uploads(data_dir) == []
    page = operator_client.get(publish)
    assert b"Loaded ledger-tools 1.0.0 (draft)" in page.content
    assert b"is not published yet: read who it reaches and confirm below" in page.content
    assert b'id="release-impact"' in page.content
    published = operator_client.post(
        "/admin/catalog/bundleversion/",
        {"action": "publish", "_selected_action": [version.pk], "post": "yes"},
    )
    assert published["Location"] == f"/admin/catalog/bundleversion/{version.pk}/change/"
    version.refresh_from_db()
    assert version.status == "published"

    # The token is spent: confirming again is refused in words, and loads nothing.
    again = confirm(operator_client, token, follow=True)
    assert b"no longer waiting" in again.content


def test_a_github_style_tar_gz_with_one_top_folder_loads_as_a_draft(
    operator_client, ledger, data_dir
):
    preview = upload(operator_client, "ledger-tools-main.tar.gz",
                     tar_gz_of(ledger, prefix="ledger-tools-main/"))  # fmt: skip
    assert preview.status_code == 200 and preview.context.get("preview"), preview.content[:2000]
    confirm(operator_client, preview.context["token"], publish=False)
    assert BundleVersion.objects.get(version="1.0.0").status == "draft"
    assert SkillFile.objects.filter(path="assets/logo.png").count() == 1


def test_the_preview_says_which_skills_reuse_a_stored_version(operator_client, ledger, tmp_path):
    call_command("bundle_load", str(ledger), "--publish")
    newer = ledger_bundle(tmp_path / "newer", version="1.1.0")
    write(newer / "skills/ledger-export/scripts/export.py", "#!/bin/sh\necho changed\n",
          executable=True)  # fmt: skip
    skill_md = newer / "skills/ledger-export/SKILL.md"
    skill_md.write_text(skill_md.read_text().replace('version: "1.0.0"', 'version: "1.1.0"'))
    preview = upload(operator_client, "ledger-tools-1.1.0.zip", zip_of(newer))
    rows = {s.slug: s for s in preview.context["preview"].skills}
    assert rows["ledger-lookup"].reused == "1.0.0"
    assert rows["ledger-export"].reused == "" and rows["ledger-export"].version == "1.1.0"
    assert "reuses 1.0.0 (same content)" in preview.content.decode()


def zip_with(entries) -> bytes:
    """A zip of (name or ZipInfo, bytes) entries, written as given."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def info(name, mode):
    entry = zipfile.ZipInfo(name)
    entry.create_system = 3
    entry.external_attr = mode << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


def good_entries(ledger):
    return [(p.relative_to(ledger).as_posix(), p.read_bytes())
            for p in sorted(ledger.rglob("*")) if p.is_file()]  # fmt: skip


def refused(client, data_dir, name, data, *expected):
    before = catalog_rows()
    response = upload(client, name, data)
    assert response.status_code == 200
    problems = response.context["problems"]
    assert problems, response.content[:2000]
    for text in expected:
        assert any(text in p for p in problems), (text, problems)
    assert b"nothing was stored" in response.content
    assert catalog_rows() == before
    assert uploads(data_dir) == []  # neither the archive nor anything extracted is kept
    return problems


def test_a_path_that_climbs_out_is_refused_naming_it(operator_client, ledger, data_dir):
    data = zip_with([*good_entries(ledger), ("../evil", b"pwned")])
    refused(operator_client, data_dir, "evil.zip", data, "../evil: refused", "'..'")
    assert not (data_dir / "evil").exists() and not (data_dir / "uploads" / "evil").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("/etc/cron.d/evil", "absolute path"),
        ("C:/evil.txt", "absolute path"),
        ("skills\\ledger-lookup\\evil.txt", "backslash"),
    ],
)
def test_absolute_paths_and_backslashes_are_refused(operator_client, ledger, data_dir, name, why):
    data = zip_with([*good_entries(ledger), (name, b"x")])
    refused(operator_client, data_dir, "bad.zip", data, f"{name}: refused", why)


def test_a_symlink_or_a_device_in_a_zip_is_refused_naming_it(operator_client, ledger, data_dir):
    data = zip_with([
        *good_entries(ledger),
        (info("skills/ledger-lookup/secrets", stat.S_IFLNK | 0o777), b"/etc/passwd"),
        (info("skills/ledger-lookup/tty", stat.S_IFCHR | 0o644), b""),
    ])  # fmt: skip
    refused(operator_client, data_dir, "links.zip", data,
            "skills/ledger-lookup/secrets: refused: it is a symbolic link",
            "skills/ledger-lookup/tty: refused: it is not a regular file")  # fmt: skip


def test_links_in_a_tar_are_refused_naming_them(operator_client, ledger, data_dir):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in good_entries(ledger):
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
        for kind, name in ((tarfile.SYMTYPE, "skills/ledger-lookup/passwd"),
                           (tarfile.LNKTYPE, "skills/ledger-lookup/hard")):  # fmt: skip
            member = tarfile.TarInfo(name)
            member.type, member.linkname = kind, "/etc/passwd"
            archive.addfile(member)
    refused(operator_client, data_dir, "links.tar.gz", buffer.getvalue(),
            "skills/ledger-lookup/passwd: refused: it is a link",
            "skills/ledger-lookup/hard: refused: it is a link")  # fmt: skip


def test_a_name_not_in_utf8_is_refused(operator_client, ledger, data_dir):
    data = bytearray(zip_with([*good_entries(ledger), ("skills/ledger-lookup/caf\xe9.txt", b"x")]))
    # Rewrite the name's bytes as Latin-1 and drop the UTF-8 flag, as old tools write it.
    utf8, latin1 = "caf\xe9.txt".encode(), b"caf\xe9.txt\x00"
    assert len(utf8) == len(latin1)
    data = bytes(data).replace(utf8, latin1)
    data = data.replace(b"PK\x03\x04\x14\x00\x00\x08", b"PK\x03\x04\x14\x00\x00\x00")
    central = b"PK\x01\x02\x14\x03\x14\x00\x00"
    data = data.replace(central + b"\x08", central + b"\x00")
    refused(operator_client, data_dir, "latin1.zip", data, "refused: its name is not UTF-8")


def test_a_zip_bomb_stops_at_the_byte_budget(operator_client, ledger, data_dir, settings):
    settings.PIXIE_BUNDLE_MAX_BYTES = 2_000_000
    settings.PIXIE_SKILL_FILE_MAX_BYTES = 1_000_000
    bomb = b"\x00" * 50_000_000  # 50 MB of zeros: about 50 KB compressed
    data = zip_with([*good_entries(ledger), ("skills/ledger-export/assets/zeros.bin", bomb)])
    assert len(data) < 200_000
    refused(operator_client, data_dir, "bomb.zip", data,
            "skills/ledger-export/assets/zeros.bin: refused: it holds more than 1,000,000 "
            "bytes, the limit for one file (PIXIE_SKILL_FILE_MAX_BYTES)")  # fmt: skip
    settings.PIXIE_SKILL_FILE_MAX_BYTES = 100_000_000
    refused(operator_client, data_dir, "bomb.zip", data,
            "skills/ledger-export/assets/zeros.bin: refused: extracting it passes 2,000,000 "
            "bytes, the limit for one bundle (PIXIE_BUNDLE_MAX_BYTES)")  # fmt: skip


def test_a_tar_bomb_stops_before_its_data_is_read(operator_client, ledger, data_dir, settings):
    settings.PIXIE_BUNDLE_MAX_BYTES = 2_000_000
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in good_entries(ledger):
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
        member = tarfile.TarInfo("skills/ledger-export/assets/zeros.bin")
        member.size = 50_000_000
        archive.addfile(member, io.BytesIO(b"\x00" * member.size))
    assert len(buffer.getvalue()) < 200_000
    refused(operator_client, data_dir, "bomb.tgz", buffer.getvalue(),
            "skills/ledger-export/assets/zeros.bin: refused")  # fmt: skip


def test_more_entries_than_allowed_are_refused(operator_client, ledger, data_dir, settings):
    settings.PIXIE_BUNDLE_MAX_FILES = 5
    refused(operator_client, data_dir, "many.zip", zip_of(ledger), "PIXIE_BUNDLE_MAX_FILES")


def test_what_the_folder_checks_refuse_is_refused_in_the_preview(operator_client, ledger, data_dir):
    (ledger / "skills/ledger-lookup/SKILL.md").write_text("---\nname: Not A Slug\n---\n\nx\n")
    problems = refused(operator_client, data_dir, "bad.zip", zip_of(ledger), "ledger-lookup")
    assert len(problems) >= 1
    refused(operator_client, data_dir, "notes.zip", zip_with([("README.md", b"hello")]),
            "no bundle.toml")  # fmt: skip
    refused(operator_client, data_dir, "fake.zip", b"this is not a zip", "not a .zip or .tar.gz")


def test_an_upload_over_the_bundle_ceiling_is_refused_with_a_message(
    operator_client, data_dir, settings
):
    settings.PIXIE_BUNDLE_MAX_BYTES = 50_000
    for size in (60_000, 500_000):  # read and measured; refused before the body is read
        response = upload(operator_client, "big.zip", os.urandom(size))
        assert response.status_code == 200
        assert b"the limit for one bundle is 50,000 bytes" in response.content, size
        assert b"PIXIE_BUNDLE_MAX_BYTES" in response.content
    assert uploads(data_dir) == []


def test_an_upload_of_several_megabytes_is_accepted(operator_client, ledger, data_dir):
    write(ledger / "skills/ledger-export/assets/photo.bin", os.urandom(3_500_000))
    preview = upload(operator_client, "ledger-tools.zip", zip_of(ledger))
    assert preview.context.get("preview"), preview.content[:2000]
    confirm(operator_client, preview.context["token"])
    assert SkillFile.objects.get(path="assets/photo.bin").size == 3_500_000


def test_a_forged_or_stale_token_loads_nothing(operator_client, ledger, data_dir):
    for token in ("A" * 32, "../../pixie.sqlite3", ""):
        response = confirm(operator_client, token, follow=True)
        assert b"no longer waiting" in response.content
    preview = upload(operator_client, "ledger-tools.zip", zip_of(ledger))
    token = preview.context["token"]
    cancelled = confirm(operator_client, token, cancel="Cancel", follow=True)
    assert b"not loaded" in cancelled.content
    assert catalog_rows() == (0, 0, 0, 0) and uploads(data_dir) == []
    # Another operator's session does not hold the token.
    preview = upload(operator_client, "ledger-tools.zip", zip_of(ledger))
    other = Client()
    other.force_login(make_user("ops2", is_staff=True, is_superuser=True))
    assert b"no longer waiting" in confirm(other, preview.context["token"], follow=True).content
    assert catalog_rows() == (0, 0, 0, 0)


def test_only_users_who_may_add_bundle_versions_reach_the_page(ledger, data_dir):
    member, staff = make_user("mia", is_staff=True), make_user("stu", is_staff=True)
    make_workspace("acme", owner=make_user("owen", is_staff=True), members=[member])
    for user in (member, staff):
        client = Client()
        client.force_login(user)
        assert client.get(URL).status_code == 403
        assert upload(client, "ledger-tools.zip", zip_of(ledger)).status_code == 403
    assert catalog_rows() == (0, 0, 0, 0) and uploads(data_dir) == []
    viewer = make_user("vic", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_bundleversion"))
    client = Client()
    client.force_login(viewer)
    page = client.get("/admin/catalog/bundleversion/")
    assert page.status_code == 200 and b"Upload a bundle" not in page.content
    assert client.get(URL).status_code == 403
    assert Client().get(URL).status_code == 302  # anonymous: to the login page


def test_the_upload_form_needs_its_csrf_token(operator, ledger, data_dir):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert upload(client, "ledger-tools.zip", zip_of(ledger)).status_code == 403
    assert uploads(data_dir) == []
    page = client.get(URL)
    assert b"csrfmiddlewaretoken" in page.content


def test_uploads_left_waiting_for_a_day_are_cleared_by_the_next_upload(
    operator_client, ledger, data_dir
):
    first = upload(operator_client, "ledger-tools.zip", zip_of(ledger)).context["token"]
    stale = data_dir / "uploads" / f"{first}.archive"
    leftover = data_dir / "uploads" / "extract-crashed"
    leftover.mkdir()
    day_ago = stale.stat().st_mtime - 2 * 24 * 3600
    os.utime(stale, (day_ago, day_ago))
    os.utime(leftover, (day_ago, day_ago))
    second = upload(operator_client, "ledger-tools.zip", zip_of(ledger)).context["token"]
    assert uploads(data_dir) == [f"{second}.archive"]
    assert b"no longer waiting" in confirm(operator_client, first, follow=True).content


# --- limits an attacker tried to dodge (links, devices, long names, the zip's table) -----


def tar_gz_with(entries, *, format=tarfile.PAX_FORMAT) -> bytes:
    """A .tar.gz of TarInfo members (with their bytes, or None)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=format) as archive:
        for member, data in entries:
            archive.addfile(member, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def tar_file(name, data):
    member = tarfile.TarInfo(name)
    member.size = len(data)
    return member, data


def tar_link(name):
    member = tarfile.TarInfo(name)
    member.type, member.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return member, None


def zip_link(name):
    return info(name, stat.S_IFLNK | 0o777)


def test_links_count_against_the_entry_cap_in_a_tar(operator_client, ledger, data_dir, settings):
    settings.PIXIE_BUNDLE_MAX_FILES = 40
    links = [tar_link(f"skills/ledger-lookup/l{i}") for i in range(2_000)]
    data = tar_gz_with([*(tar_file(n, d) for n, d in good_entries(ledger)), *links])
    problems = refused(operator_client, data_dir, "links.tar.gz", data,
                       "refused: the archive holds more than 40 entries, the limit for one "
                       "bundle (PIXIE_BUNDLE_MAX_FILES)")  # fmt: skip
    assert len(problems) == 1


def test_links_and_devices_count_against_the_entry_cap_in_a_zip(
    operator_client, ledger, data_dir, settings
):
    settings.PIXIE_BUNDLE_MAX_FILES = 40
    links = [(zip_link(f"skills/ledger-lookup/l{i}"), b"/etc") for i in range(900)]
    devices = [(info(f"skills/ledger-lookup/d{i}", stat.S_IFCHR | 0o644), b"") for i in range(900)]
    data = zip_with([*good_entries(ledger), *links, *devices])
    problems = refused(operator_client, data_dir, "links.zip", data,
                       "links.zip: refused: the archive holds more than 40 entries")  # fmt: skip
    assert len(problems) == 1


def test_refusals_listed_are_bounded(operator_client, ledger, data_dir):
    links = [(zip_link(f"skills/ledger-lookup/l{i}"), b"/etc") for i in range(500)]
    data = zip_with([*good_entries(ledger), *links])
    problems = refused(operator_client, data_dir, "links.zip", data,
                       "skills/ledger-lookup/l0: refused: it is a symbolic link",
                       "… and perhaps more: reading stopped after 50 refusals")  # fmt: skip
    assert len(problems) == 51


def test_a_tar_long_name_header_is_refused_before_it_is_read(operator_client, ledger, data_dir):
    """16 MB of name in a GNU long-name header, 16 KB gzipped: refused from its header's
    size; the page names no more than a line of it."""
    member = tarfile.TarInfo("skills/ledger-lookup/" + "a" * 16_000_000)
    member.size = 1
    data = tar_gz_with([*(tar_file(n, d) for n, d in good_entries(ledger)), (member, b"x")],
                       format=tarfile.GNU_FORMAT)  # fmt: skip
    assert len(data) < 100_000
    response = upload(operator_client, "long.tar.gz", data)
    problems = response.context["problems"]
    assert problems == [
        "long.tar.gz: refused: a header of the archive holds a name or attributes of "
        "16,000,022 bytes; the limit is 65,536"
    ]
    assert len(response.content) < 100_000 and uploads(data_dir) == []


def test_a_long_path_is_refused_and_shown_in_part(operator_client, ledger, data_dir):
    name = "skills/ledger-lookup/" + "b" * 3_000
    problems = refused(operator_client, data_dir, "long.zip",
                       zip_with([*good_entries(ledger), (name, b"x")]),
                       "refused: its path is 3,021 characters long; the limit is 1,024",
                       )  # fmt: skip
    [problem] = problems
    assert problem.startswith(name[:200] + "… (3,021 characters)") and len(problem) < 400


def test_a_zips_table_is_counted_before_zipfile_reads_it(ledger, tmp_path):
    """The count comes from the table's own headers, read 46 bytes at a time."""
    from catalog.archive_limits import ArchiveRefused, Limits, zip_directory_check

    path = tmp_path / "many.zip"
    path.write_bytes(zip_with([(f"f{i}", b"") for i in range(300)]))
    zip_directory_check(path, Limits(entries=300, name_bytes=100, declared_bytes=1))
    with pytest.raises(ArchiveRefused, match="more than 299 entries"):
        zip_directory_check(path, Limits(entries=299, name_bytes=100, declared_bytes=1))
    with pytest.raises(ArchiveRefused, match="name is 4 bytes long; the limit is 3"):
        zip_directory_check(path, Limits(entries=300, name_bytes=3, declared_bytes=1))


def test_loading_what_is_already_there_is_a_warning_that_nothing_was_stored(
    operator_client, ledger
):
    call_command("bundle_load", str(ledger), "--publish")
    preview = upload(operator_client, "ledger-tools.zip", zip_of(ledger))
    answer = confirm(operator_client, preview.context["token"], publish=False, follow=True)
    shown = [(m.level_tag, str(m)) for m in answer.context["messages"]]
    assert shown == [
        (
            "warning",
            "Nothing was stored: ledger-tools 1.0.0 (published) is already in the catalog "
            "with the same content.",
        )
    ]
