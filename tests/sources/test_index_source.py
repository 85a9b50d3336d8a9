"""A discovery index source checked against a real site served on loopback: its entries
(archives and SKILL.md files), each checked against the index's digest, become a draft
with the index as provenance; an unchanged index makes nothing and downloads nothing
more; what cannot be trusted (a wrong digest, a hostile archive, another host, a private
address, an index too big or too long, a server too slow) is refused in words on the
source, and nothing is made."""

import hashlib
import json

import pytest
from django.core.management import call_command

from catalog.models import Bundle, BundleVersion
from catalog.services import bundle_version_publish
from catalog.services.signing import bundle_version_verify
from pixie.sources.index_fetch import index_url_problems
from pixie.sources.index_format import index_digest, index_parse
from pixie.sources.models import Source
from pixie.sources.services import INDEX_REF, source_check
from tests.factories import make_user, make_workspace
from tests.sources.index_server import (
    INDEX,
    SCHEMA,
    a_tar_gz,
    a_zip,
    sha256,
    site_serving,
    skill_md,
)

pytestmark = pytest.mark.django_db

METADATA = {"slug": "acme-skills", "name": "Acme skills", "publisher": "acme"}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def site(settings):
    """The site on loopback, which PIXIE_SOURCES_ALLOW_PRIVATE lets a source reach (a
    test of the refusal turns it off)."""
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = True
    with site_serving() as serving:
        yield serving


@pytest.fixture
def operator():
    user = make_user("olga", is_superuser=True, is_staff=True, email="olga@example.com")
    make_workspace("ops", owner=user)
    return user


def an_index_source(site, **fields) -> Source:
    fields.setdefault("metadata", METADATA)
    fields.setdefault("url", site.index_url)
    return Source.objects.create(kind=Source.Kind.INDEX, **fields)


def invoice_archive(body: str = "Chase the invoice politely.") -> bytes:
    return a_zip({
        "SKILL.md": skill_md("invoice-chase", body),
        "templates/letter.md": b"Dear customer,\n",
    })  # fmt: skip


def two_skills(site, *, invoice: str = "Chase the invoice politely.") -> list[dict]:
    entries = [
        {"name": "invoice-chase", "type": "archive", "data": invoice_archive(invoice)},
        {"name": "payment-reminder", "type": "skill-md",
         "data": skill_md("payment-reminder", "Remind them of the payment.")},
    ]  # fmt: skip
    site.publish(entries)
    return entries


def skills_of(version: BundleVersion) -> dict[str, int]:
    return {
        entry.skill_version.package.slug: entry.skill_version_id
        for entry in version.skills.select_related("skill_version__package")
    }


def the_digest(site) -> str:
    """What the source records as seen: the chosen entries' digest (every entry here)."""
    index = index_parse(site.files[INDEX], max_entries=100)
    return index_digest(index.entries)


def nothing_made(checked: Source) -> None:
    assert checked.waiting_draft is None
    assert checked.last_commit == ""
    assert not BundleVersion.objects.exists()
    assert not Bundle.objects.exists()


# What it makes


def test_the_first_check_makes_a_draft_with_the_index_as_provenance(site, operator):
    entries = two_skills(site)
    source = an_index_source(site)

    checked = source_check(source, actor=operator)

    assert checked.last_result == "draft", checked.last_message
    draft = checked.waiting_draft
    assert (draft.bundle.slug, draft.version, draft.status) == ("acme-skills", "1.0.0", "draft")
    assert set(skills_of(draft)) == {"invoice-chase", "payment-reminder"}
    digest = the_digest(site)
    assert checked.last_commit == digest
    provenance = draft.provenance
    assert (provenance.repository, provenance.ref, provenance.commit) == (
        site.index_url, INDEX_REF, digest,
    )  # fmt: skip
    for entry in entries:  # the index's digests, each named
        assert f"{entry['name']} ({entry['type']}) {sha256(entry['data'])}" in provenance.message
    assert f"the index lists 2 skills at {digest[:12]}" in checked.last_message
    assert "draft acme-skills 1.0.0 made" in checked.last_message
    # The archive's other file is the skill's; signed with the provenance, and verified.
    invoice = draft.skills.get(skill_version__package__slug="invoice-chase").skill_version
    assert [f.path for f in invoice.files.all()] == ["templates/letter.md"]
    published = bundle_version_publish(bundle_version=draft, actor=operator)
    assert digest in published.manifest
    bundle_version_verify(bundle_version=published)


def test_an_unchanged_index_makes_nothing_and_downloads_nothing(site, operator):
    two_skills(site)
    source = an_index_source(site)
    bundle_version_publish(bundle_version=source_check(source).waiting_draft, actor=operator)
    site.requests.clear()

    checked = source_check(source, actor=operator)

    assert checked.last_result == "unchanged", checked.last_message
    assert "are still at" in checked.last_message
    assert site.requests == [INDEX]  # the index only: its digests say the rest
    assert BundleVersion.objects.count() == 1
    assert checked.waiting_draft is None


def test_one_changed_skill_makes_a_draft_with_only_that_skill_new(site, operator):
    two_skills(site)
    source = an_index_source(site)
    first = source_check(source, actor=operator).waiting_draft
    bundle_version_publish(bundle_version=first, actor=operator)
    before_digest = source.last_commit or Source.objects.get(pk=source.pk).last_commit
    two_skills(site, invoice="Chase the invoice, firmly this time.")

    checked = source_check(source, actor=operator)

    assert checked.last_result == "draft", checked.last_message
    draft = checked.waiting_draft
    assert draft.version == "1.0.1"
    before, after = skills_of(first), skills_of(draft)
    assert after["payment-reminder"] == before["payment-reminder"]  # reused
    assert after["invoice-chase"] != before["invoice-chase"]
    assert f"moved from {before_digest[:12]} to" in checked.last_message
    assert checked.last_commit == the_digest(site) != before_digest


def test_a_skill_md_entry_is_the_skill_and_a_tar_gz_archive_is_unpacked(site, operator):
    site.publish([
        {"name": "code-review", "type": "skill-md", "url": "/skills/code-review/SKILL.md",
         "data": skill_md("code-review", "Review the code for bugs.")},
        {"name": "deploy", "type": "archive", "url": "../../archives/deploy.tar.gz",
         "data": a_tar_gz({"SKILL.md": skill_md("deploy", "Run scripts/deploy.sh."),
                           "scripts/deploy.sh": b"#!/bin/sh\necho deploy\n"})},
    ])  # fmt: skip

    checked = source_check(an_index_source(site, skills=["code-review", "deploy"]))

    assert checked.last_result == "draft", checked.last_message
    versions = {
        entry.skill_version.package.slug: entry.skill_version
        for entry in checked.waiting_draft.skills.select_related("skill_version__package")
    }
    assert "Review the code for bugs." in versions["code-review"].skill_md
    deploy = versions["deploy"].files.get()
    assert (deploy.path, deploy.executable) == ("scripts/deploy.sh", True)
    assert {"skills/code-review/SKILL.md", "archives/deploy.tar.gz"} <= set(site.requests)


def test_the_source_chooses_its_skills_by_name_and_a_missing_one_is_reported(site, operator):
    two_skills(site)
    source = an_index_source(site, skills=["payment-reminder"])

    checked = source_check(source, actor=operator)

    assert checked.last_result == "draft", checked.last_message
    assert set(skills_of(checked.waiting_draft)) == {"payment-reminder"}
    assert not any(path.endswith(".zip") for path in site.requests)  # never downloaded
    source.skills = ["payment-reminder", "gone-skill"]
    source.save()

    checked = source_check(source, actor=operator)

    assert checked.last_result == "folder_gone"
    assert "gone-skill listed by the source is not in the index" in checked.last_message


# What it refuses


def test_a_wrong_digest_is_refused_naming_the_entry_and_nothing_is_made(site):
    right = invoice_archive()
    site.publish([
        {"name": "payment-reminder", "type": "skill-md", "data": skill_md("payment-reminder")},
        {"name": "invoice-chase", "type": "archive", "data": right,
         "digest": sha256(right + b"tampered")},
    ])  # fmt: skip

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    message = checked.last_message
    assert "The entry invoice-chase (archive)" in message
    assert f"its bytes' digest is {sha256(right)}" in message
    assert f"not the index's {sha256(right + b'tampered')}" in message
    nothing_made(checked)


def test_an_archive_climbing_out_of_its_folder_is_refused(site):
    site.publish([{"name": "invoice-chase", "type": "archive", "data": a_zip({
        "SKILL.md": skill_md("invoice-chase"), "../../etc/cron.d/evil": b"* * * * * root sh\n",
    })}])  # fmt: skip

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert "../../etc/cron.d/evil: refused: its path climbs out of the folder" in (
        checked.last_message
    )
    nothing_made(checked)


@pytest.mark.parametrize("deflated", [False, True], ids=["download", "unpacked"])
def test_an_archive_past_the_bundle_ceiling_is_refused(site, settings, deflated):
    settings.PIXIE_BUNDLE_MAX_BYTES = 50_000
    files = {"SKILL.md": skill_md("invoice-chase"), "data.bin": b"\0" * 200_000}
    big = a_zip(files, deflated=deflated)  # deflated: a few hundred bytes, a bomb unpacked
    site.publish([{"name": "invoice-chase", "type": "archive", "data": big}])

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    message = checked.last_message
    if deflated:
        assert len(big) < 5_000
        assert "data.bin: refused: extracting it passes 50,000 bytes, the limit for one bundle" in (
            message
        )
    else:
        assert f"invoice-chase.zip is {len(big):,} bytes; the limit is 50,000" in message
    assert "(PIXIE_BUNDLE_MAX_BYTES)" in message
    nothing_made(checked)


def test_an_archive_without_skill_md_at_its_root_is_refused(site):
    wrapped = a_zip({"invoice-chase/SKILL.md": skill_md("invoice-chase")})
    site.publish([{"name": "invoice-chase", "type": "archive", "data": wrapped}])

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert "the archive has no SKILL.md at its root" in checked.last_message
    nothing_made(checked)


def test_an_entry_on_another_host_is_refused(site):
    other = site.base_url.replace("127.0.0.1", "localhost")
    elsewhere = f"{other}/payment-reminder/SKILL.md"
    site.publish([{"name": "payment-reminder", "type": "skill-md", "url": elsewhere,
                   "digest": "sha256:" + "a" * 64}])  # fmt: skip

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert "is on another host than the index (http://127.0.0.1:" in checked.last_message
    assert not any("payment-reminder" in path for path in site.requests)  # never asked
    nothing_made(checked)


def test_a_redirect_is_followed_on_the_same_host_and_refused_to_another(site):
    two_skills(site)
    site.redirects["old/index.json"] = f"/{INDEX}"  # entries: relative to where it landed
    site.redirects["moved/index.json"] = site.url(INDEX).replace("127.0.0.1", "localhost")

    followed = source_check(an_index_source(site, url=site.url("old/index.json")))
    refused = source_check(an_index_source(site, url=site.url("moved/index.json"),
                                           metadata={**METADATA, "slug": "other"}))  # fmt: skip

    assert followed.last_result == "draft", followed.last_message
    assert refused.last_result == "failed"
    assert f"The index {site.url('moved/index.json')} redirects to http://localhost:" in (
        refused.last_message
    )
    assert "on another host than the index (http://127.0.0.1:" in refused.last_message
    assert refused.waiting_draft is None and refused.bundle_id is None


def test_a_loopback_index_is_refused_when_the_setting_is_off(site, settings):
    two_skills(site)
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False
    https = site.index_url.replace("http://", "https://")

    plain = source_check(an_index_source(site))
    loopback = source_check(Source.objects.create(kind="index", url=https, metadata=METADATA))

    assert plain.last_result == loopback.last_result == "failed"
    assert "plain http://, turned off" in plain.last_message
    assert "127.0.0.1 is a loopback address" in loopback.last_message
    assert "PIXIE_SOURCES_ALLOW_PRIVATE" in loopback.last_message
    assert site.requests == []  # nothing was asked of it
    nothing_made(loopback)


def test_an_index_with_too_many_entries_is_refused(site, settings):
    settings.PIXIE_SOURCES_INDEX_MAX_ENTRIES = 3
    site.publish([
        {"name": f"skill-{n}", "type": "skill-md", "data": skill_md(f"skill-{n}")}
        for n in range(4)
    ])

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert "The index lists 4 skills; the limit for one source is 3" in checked.last_message
    assert "PIXIE_SOURCES_INDEX_MAX_ENTRIES" in checked.last_message
    assert site.requests == [INDEX]
    nothing_made(checked)


def test_an_index_too_big_is_refused(site, settings):
    two_skills(site)
    settings.PIXIE_SOURCES_INDEX_MAX_BYTES = 100

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert f"The index {site.index_url} is {len(site.files[INDEX]):,} bytes; the limit is 100" in (
        checked.last_message
    )
    nothing_made(checked)


def test_a_server_too_slow_is_cut_off_at_the_deadline(site, settings):
    two_skills(site)
    site.slow.add(INDEX)  # a byte every 0.2 seconds
    settings.PIXIE_SOURCES_FETCH_SECONDS = 0.6

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert "took longer than 0.6 seconds" in checked.last_message
    assert "PIXIE_SOURCES_FETCH_SECONDS" in checked.last_message
    nothing_made(checked)


@pytest.mark.parametrize(
    ("index", "words"),
    [
        ({"skills": []}, "it has no $schema"),
        ({"$schema": SCHEMA.replace("0.2.0", "0.3.0"), "skills": []}, "version 0.2.0"),
        ({"$schema": SCHEMA, "skills": {}}, "'skills' must be a list"),
        ({"$schema": SCHEMA, "skills": [{"name": "Bad Name", "type": "skill-md", "url": "a",
                                          "digest": "sha256:" + "a" * 64}]},
         "entry #1: its name 'Bad Name' is not a skill's name"),  # fmt: skip
        ({"$schema": SCHEMA, "skills": [{"name": "ok", "type": "skill-md", "url": "a",
                                          "digest": "md5:abc"}]},
         "entry ok: its digest 'md5:abc' is not sha256:"),  # fmt: skip
        ({"$schema": SCHEMA, "skills": [{"name": "ok", "type": "skill-md", "url": "a",
                                          "digest": "sha256:" + "a" * 64}] * 2},
         "entry ok: listed twice"),  # fmt: skip
    ],
)
def test_an_index_not_of_the_format_is_refused_in_words(site, index, words):
    site.put(INDEX, json.dumps(index).encode())

    checked = source_check(an_index_source(site))

    assert checked.last_result == "failed"
    assert words in checked.last_message
    nothing_made(checked)


def test_a_hostile_index_costs_its_length():
    deep = b'{"$schema": "x", "skills": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    with pytest.raises(Exception, match="nests its JSON too deeply|is not a discovery index"):
        index_parse(deep, max_entries=10)
    many = {"$schema": SCHEMA, "skills": [
        {"name": f"s{n}", "type": "skill-md", "url": "x", "digest": "sha256:" + "0" * 64}
        for n in range(5_000)
    ]}  # fmt: skip
    parsed = index_parse(json.dumps(many).encode(), max_entries=5_000)
    assert len(parsed.entries) == 5_000


def test_an_entry_of_another_type_is_skipped_and_named(site):
    site.publish([
        {"name": "payment-reminder", "type": "skill-md", "data": skill_md("payment-reminder")},
        {"name": "future", "type": "mcp-server", "url": "future.json",
         "digest": "sha256:" + hashlib.sha256(b"").hexdigest()},
    ])  # fmt: skip

    checked = source_check(an_index_source(site))

    assert checked.last_result == "draft", checked.last_message
    assert "skipped, of a type Pixie does not read: future (type 'mcp-server')" in (
        checked.last_message
    )


def test_sources_check_checks_an_index_source(site, capsys):
    two_skills(site)
    source = an_index_source(site)

    call_command("sources_check", "--source", str(source.pk))

    assert capsys.readouterr().out.startswith(f"draft     #{source.pk} {site.index_url}: ")
    call_command("sources_check", "--source", str(source.pk))
    assert capsys.readouterr().out.startswith(f"unchanged #{source.pk}")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.com/index.json", "must be an https:// URL"),
        ("file:///etc/passwd", "must be an https:// URL"),
        ("http://example.com/index.json", "plain http://, turned off"),
        ("https://user:secret@example.com/index.json", "must not hold a user or a password"),
        ("https://example.com/a/../index.json", "must not contain '.' or '..'"),
        ("https://example.com/index.json#top", "no spaces, control characters or fragment"),
        ("https://exa mple.com/index.json", "no spaces, control characters or fragment"),
        ("https://0x7f.1/index.json", "DNS name or an IP address"),
        ("https://example.com:0/index.json", "port 0"),
    ],
)
def test_an_index_url_is_checked_as_text_first(url, words):
    assert words in index_url_problems(url, allow_private=False)[0]


def test_a_well_formed_index_url_passes():
    for url in [
        "https://example.com/.well-known/agent-skills/index.json",
        "https://cdn.example.com:8443/skills/index.json?v=3",
        "https://[2606:4700:4700::1111]/.well-known/agent-skills/index.json",
    ]:
        assert index_url_problems(url, allow_private=False) == [], url
    assert index_url_problems("http://127.0.0.1:8000/index.json", allow_private=True) == []
