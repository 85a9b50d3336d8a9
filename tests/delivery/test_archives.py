"""The archives delivery serves: the same content gives the same bytes, in any order, in
another process, after the stored copy is lost; the zip is one the ``skills`` client
unpacks (SKILL.md at its root, no folders, stored, each file's mode, a fixed date); and
what the client would refuse is known before anything is built."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import stat
import struct
import subprocess
import sys
import zipfile

import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.models import BundleVersion
from pixie.delivery.archives import (
    CLIENT_MAX_BYTES,
    ArchiveFile,
    SkillContent,
    build_zip,
)
from pixie.delivery.index import token_index
from pixie.delivery.models import SkillArchive
from pixie.delivery.tokens import delivery_token_create
from tests.catalog.skill_folders import bundle_folder, tree
from tests.installer.flow import install
from tests.suite import examples

ZIP_DATE = (1980, 1, 1, 0, 0, 0)

# --- generated skill content --------------------------------------------------------------

# Path parts from a safe alphabet (a letter outside ASCII too: the zip marks its name
# UTF-8), never "." or "..".
PART = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.é", min_size=1, max_size=10).filter(
    lambda part: part not in {".", ".."}
)
PATH = st.lists(PART, min_size=1, max_size=3).map("/".join)
FILE = st.tuples(st.binary(max_size=300), st.booleans())  # (bytes, executable)


def _a_tree(paths) -> bool:
    """Paths a folder can hold at once: no file where another has a folder, no SKILL.md."""
    folders = {"/".join(p.split("/")[:n]) for p in paths for n in range(1, p.count("/") + 1)}
    return not (folders & set(paths)) and "SKILL.md" not in paths


@st.composite
def skill_entries(draw) -> list[tuple[str, bytes, bool]]:
    skill_md = draw(st.text(max_size=400))
    files = draw(st.dictionaries(PATH, FILE, max_size=6).filter(_a_tree))
    entries = [("SKILL.md", skill_md.encode("utf-8"), False)]
    entries += [(path, data, executable) for path, (data, executable) in files.items()]
    return entries


def local_header(data: bytes, info: zipfile.ZipInfo) -> tuple[int, int, bytes]:
    """(flags, method, name) of an entry's local header, which the client checks against
    the central directory's."""
    at = info.header_offset
    signature, _, flags, method = struct.unpack("<IHHH", data[at : at + 10])
    assert signature == 0x04034B50
    name_length, extra_length = struct.unpack("<HH", data[at + 26 : at + 30])
    assert extra_length == 0
    return flags, method, data[at + 30 : at + 30 + name_length]


@settings(max_examples=examples(200), deadline=None)
@given(entries=skill_entries(), order=st.randoms(use_true_random=False))
def test_the_same_entries_in_any_order_give_the_same_zip(entries, order):
    data = build_zip(entries)
    shuffled = list(entries)
    order.shuffle(shuffled)
    assert build_zip(shuffled) == data

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        infos = archive.infolist()
        assert [i.filename for i in infos] == sorted(path for path, _, _ in entries)
        assert "SKILL.md" in archive.namelist()  # at the root: no wrapper folder
        wanted = {path: (content, executable) for path, content, executable in entries}
        for info in infos:
            content, executable = wanted[info.filename]
            assert not info.is_dir() and not info.filename.endswith("/")
            assert info.compress_type == zipfile.ZIP_STORED
            assert info.date_time == ZIP_DATE
            assert info.create_system == 3
            mode = info.external_attr >> 16
            assert stat.S_ISREG(mode)
            assert stat.S_IMODE(mode) == (0o755 if executable else 0o644)
            assert info.extra == b"" and info.comment == b""
            assert archive.read(info) == content
            flags, method, name = local_header(data, info)
            assert (flags, method) == (info.flag_bits, zipfile.ZIP_STORED)
            assert name.decode("utf-8" if flags & 0x800 else "cp437") == info.filename


BUILD_ELSEWHERE = """
import base64, hashlib, json, sys
import django
django.setup()
from pixie.delivery.archives import build_zip
sets = json.load(sys.stdin)
print(json.dumps([
    hashlib.sha256(build_zip([(p, base64.b64decode(d), x) for p, d, x in entries])).hexdigest()
    for entries in sets
]))
"""


def test_another_process_builds_the_same_bytes():
    """Another server (here a process with its own hash seed) rebuilds the same digests."""
    seen: list[list[tuple[str, bytes, bool]]] = []

    @settings(max_examples=examples(100), deadline=None, database=None)
    @given(entries=skill_entries())
    def collect(entries):
        seen.append(entries)

    collect()
    payload = [[(p, base64.b64encode(d).decode(), x) for p, d, x in entries] for entries in seen]
    env = {**os.environ, "PYTHONHASHSEED": "12345", "DJANGO_SETTINGS_MODULE": "pixie.settings"}
    done = subprocess.run(  # noqa: S603 (this interpreter, our own code)
        [sys.executable, "-c", BUILD_ELSEWHERE],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    here = [hashlib.sha256(build_zip(entries)).hexdigest() for entries in seen]
    assert json.loads(done.stdout) == here


# --- what the client would refuse, before anything is built -------------------------------


def content(slug="ledger-lookup", description="Look the ledger up.", files=(), skill_md="x"):
    return SkillContent(slug=slug, description=description, skill_md=skill_md, files=list(files))


def files(count: int, size: int = 1, path: str = "refs/f{n}.md") -> list[ArchiveFile]:
    return [ArchiveFile(path.format(n=n), "0" * 64, size, False) for n in range(count)]


@pytest.mark.parametrize(
    "slug,served",
    [
        ("ledger-lookup", True),
        ("a" * 64, True),
        ("a1-b2-c3", True),
        ("a" * 65, False),
        ("a--b", False),
        ("trailing-", False),
        ("-leading", False),
        ("Capital", False),
    ],
)
def test_a_name_is_served_only_as_the_client_spells_names(slug, served):
    refusal = content(slug=slug).refusal()
    assert (refusal == "") is served, refusal
    if not served:
        assert f"@{slug}" in refusal


def test_the_file_count_counts_skill_md_as_the_client_does():
    assert content(files=files(999)).refusal() == ""  # 1,000 entries with SKILL.md
    assert content(files=files(1000)).refusal() == (
        "it has 1,001 files; the skills client takes at most 1,000"
    )


def test_the_unpacked_size_counts_skill_md_and_every_file():
    skill_md = "x" * 100
    room = CLIENT_MAX_BYTES - len(skill_md)
    assert content(skill_md=skill_md, files=files(2, room // 2)).refusal() == ""
    over = content(skill_md=skill_md, files=files(2, room // 2 + 1))
    assert over.refusal() == "it unpacks to 50.0 MiB; the skills client takes at most 50 MiB"


def test_a_description_is_measured_as_the_client_measures_it():
    assert content(description="d" * 1024).refusal() == ""
    assert "description is over" in content(description="d" * 1025).refusal()
    assert "no description" in content(description="   ").refusal()
    # JavaScript's String.length counts a character past U+FFFF twice: 600 of them are
    # 1,200 to the client, which skips the entry.
    assert len("📒" * 600) == 600
    assert "description is over" in content(description="📒" * 600).refusal()
    assert content(description="📒" * 512).refusal() == ""


@pytest.mark.parametrize(
    "path",
    ["../escape.md", "a/../b.md", "/etc/passwd", "C:/x.md", "a\\b.md", "./a.md", "SKILL.md"],
)
def test_a_path_the_client_refuses_to_unpack_is_refused(path):
    refused = content(files=[ArchiveFile(path, "0" * 64, 1, False)]).refusal()
    assert refused == "a file's path is one the skills client refuses to unpack"


def test_the_content_key_names_the_content_not_the_order_of_its_files():
    a = ArchiveFile("a.md", "1" * 64, 1, False)
    b = ArchiveFile("b.sh", "2" * 64, 1, True)
    assert content(files=[a, b]).content_key == content(files=[b, a]).content_key
    keys = {
        content(files=[a, b]).content_key,
        content(files=[a]).content_key,
        content(files=[a, ArchiveFile("b.sh", "2" * 64, 1, False)]).content_key,  # mode
        content(files=[a, ArchiveFile("c.sh", "2" * 64, 1, True)]).content_key,  # path
        content(files=[a, ArchiveFile("b.sh", "3" * 64, 1, True)]).content_key,  # bytes
        content(files=[a, b], skill_md="y").content_key,
    }
    assert len(keys) == 6


# --- what a token serves, byte for byte, after the stored copy is gone --------------------


@pytest.fixture
def published(tmp_path, db):
    folder = bundle_folder(tmp_path / "ledger-tools")
    call_command("bundle_load", str(folder), "--publish", verbosity=0)
    return folder, BundleVersion.objects.get(bundle__slug="ledger-tools")


def served_archives(index) -> dict[str, bytes]:
    return {
        entry.slug: bytes(SkillArchive.objects.get(content_key=entry.content.content_key).content)
        for entry in index.served
    }


@pytest.mark.django_db
def test_an_archive_is_the_published_folder_and_its_digest_survives_a_rebuild(
    client, published, acme, owner, django_capture_on_commit_callbacks
):
    folder, version = published
    install(acme, version, owner, django_capture_on_commit_callbacks)
    token, secret = delivery_token_create(workspace=acme, actor=owner, name="Everything")

    first = token_index(token)
    digests = {entry.slug: entry.digest for entry in first.served}
    assert set(digests) == {"ledger-export", "ledger-lookup"}
    archives = served_archives(first)
    for slug, data in archives.items():
        assert hashlib.sha256(data).hexdigest() == digests[slug]
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = {
                info.filename: (archive.read(info), bool((info.external_attr >> 16) & 0o111))
                for info in archive.infolist()
            }
        # Byte for byte what was published, SKILL.md included, the script executable.
        assert unpacked == tree(folder / "skills" / slug), slug
    assert tree(folder / "skills" / "ledger-export")["scripts/export.py"][1] is True

    # Computed again: the same digests, nothing built.
    built_at = dict(SkillArchive.objects.values_list("content_key", "built_at"))
    assert {e.slug: e.digest for e in token_index(token).served} == digests
    assert dict(SkillArchive.objects.values_list("content_key", "built_at")) == built_at

    # The stored archives lost (a restored database, a new server): rebuilt the same.
    index_before = client.get(f"/deliver/{secret}/.well-known/agent-skills/index.json")
    SkillArchive.objects.all().delete()
    rebuilt = token_index(token)
    assert {e.slug: e.digest for e in rebuilt.served} == digests
    assert served_archives(rebuilt) == archives
    index_after = client.get(f"/deliver/{secret}/.well-known/agent-skills/index.json")
    assert index_after.content == index_before.content
    assert index_after["ETag"] == index_before["ETag"]
