"""Delivery URLs through Django's test client, as the ``skills`` client reads them: what each
token serves (and never serves), how a wrong one is answered, the headers every answer
carries, conditional reads, what the logs keep of a request (never its token), and what
an index costs in queries whatever the number of skills."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import secrets
import zipfile
from urllib.parse import urljoin, urlsplit

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.views.debug import ExceptionReporter
from reversion.models import Version

from agents.models import AgentSkill
from agents.services import (
    agent_skill_attach,
    agent_skill_override,
    agent_skill_update,
    agent_skills_reorder,
)
from catalog.models import BundleVersion, WorkspaceSkill
from catalog.services.workspace_skills import (
    NewSkill,
    skill_create,
    skill_edit,
    skill_set_advertised,
    skills_create,
)
from pixie.core.logs import JsonFormatter
from pixie.core.models import AuditEntry
from pixie.core.people.tokens import token_create
from pixie.delivery import views
from pixie.delivery.index import NOT_ADVERTISED, token_index
from pixie.delivery.models import DeliveryToken, SkillArchive
from pixie.delivery.tokens import (
    PREFIX,
    delivery_token_create,
    delivery_token_revoke,
    delivery_token_rotate,
)
from tests.batches import bulk_inserts
from tests.catalog.skill_folders import skill_md, write
from tests.factories import make_user, make_workspace
from tests.installer.flow import install

pytestmark = pytest.mark.django_db

INDEX = ".well-known/agent-skills/index.json"
OLDER_INDEX = ".well-known/skills/index.json"  # the client's older path: the same index


# --- reading delivery URLs as the client does ---------------------------------------------


def base(secret: str) -> str:
    return f"/deliver/{secret}/"


def read_index(client, secret: str, path: str = INDEX, **extra) -> dict:
    response = client.get(base(secret) + path, **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


def names(document: dict) -> list[str]:
    return [skill["name"] for skill in document["skills"]]


def archive_path(secret: str, entry: dict, index_path: str = INDEX) -> str:
    """Where the client fetches an entry's archive: its url resolved against the index's."""
    return urlsplit(urljoin(f"http://testserver{base(secret)}{index_path}", entry["url"])).path


def fetch_archive(client, secret: str, entry: dict) -> dict[str, bytes]:
    """The archive an index entry names, checked against the entry's digest, unpacked."""
    response = client.get(archive_path(secret, entry))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    data = response.getvalue()
    assert entry["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def skill_md_served(client, secret: str, slug: str) -> str:
    entry = next(e for e in read_index(client, secret)["skills"] if e["name"] == slug)
    return fetch_archive(client, secret, entry)["SKILL.md"].decode()


def wrong_secret() -> str:
    return PREFIX + secrets.token_urlsafe(32)


# --- the workspace: the demo bundle installed for both agents, pinned ---------------------


@pytest.fixture
def installed(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    return agents


@pytest.fixture
def tokens(acme, owner, installed):
    """Secrets of three tokens of acme: the collections agent's, the front desk's, the
    workspace's."""
    collections, front_desk = installed
    return {
        "collections": delivery_token_create(
            workspace=acme, actor=owner, name="Collections laptops", agent=collections
        )[1],
        "front-desk": delivery_token_create(
            workspace=acme, actor=owner, name="Front desk", agent=front_desk
        )[1],
        "workspace": delivery_token_create(workspace=acme, actor=owner, name="Everything")[1],
    }


def attachment(agent, slug: str) -> AgentSkill:
    return AgentSkill.objects.select_related("agent", "skill__head").get(
        agent=agent, skill__slug=slug
    )


def skill(workspace, slug: str) -> WorkspaceSkill:
    return WorkspaceSkill.objects.select_related("workspace").get(workspace=workspace, slug=slug)


def local_skill(workspace, actor, slug: str, *, description: str = "What it does.",
                body: str = "Use the ledger.") -> WorkspaceSkill:  # fmt: skip
    """A workspace's own skill (advertised, as a new one is)."""
    return skill_create(workspace=workspace, slug=slug, actor=actor, name=slug.title(),
                        short_description=description, body=body)  # fmt: skip


# --- 1. what each token serves ------------------------------------------------------------


def test_an_agents_token_serves_its_enabled_advertised_skills_in_the_agents_order(
    client, acme, owner, installed, tokens
):
    collections, front_desk = installed
    order = ["take-payment", "ar-ground-rules", "invoice-chase", "apply-credit-note"]
    agent_skills_reorder(agent=collections, slugs=order, actor=owner)
    assert names(read_index(client, tokens["collections"])) == order
    # The older index path is the same document.
    assert read_index(client, tokens["collections"], OLDER_INDEX) == read_index(
        client, tokens["collections"]
    )
    before = read_index(client, tokens["collections"])["skills"]
    credit_note = next(e for e in before if e["name"] == "apply-credit-note")

    agent_skill_update(attachment=attachment(collections, "invoice-chase"), actor=owner,
                       enabled=False)  # fmt: skip
    skill_set_advertised(skill=skill(acme, "apply-credit-note"), advertised=False, actor=owner)

    assert names(read_index(client, tokens["collections"])) == ["take-payment", "ar-ground-rules"]
    # The other agent keeps its own order and its disabled-here skill.
    assert names(read_index(client, tokens["front-desk"])) == [
        "ar-ground-rules", "invoice-chase", "take-payment"
    ]  # fmt: skip
    # The workspace's token: every advertised skill, whatever the agents hold.
    assert names(read_index(client, tokens["workspace"])) == [
        "ar-ground-rules", "invoice-chase", "take-payment"
    ]  # fmt: skip
    # A skill taken off the menu is not served, even at the URL an index gave before.
    gone = client.get(archive_path(tokens["collections"], credit_note))
    assert gone.status_code == 404
    assert b"npx skills update" in gone.content
    index = token_index(DeliveryToken.objects.get(name="Collections laptops"))
    assert {e.slug: e.refusal for e in index.left_out} == {"apply-credit-note": NOT_ADVERTISED}


def test_a_pin_is_honoured_a_follower_gets_the_head_and_an_override_its_own_body(
    client, acme, owner, installed, tokens
):
    collections, front_desk = installed
    chase = skill(acme, "invoice-chase")
    first_body = chase.head.body
    skill_edit(skill=chase, actor=owner, body="Chase politely, then firmly, then call.\n")
    agent_skill_update(attachment=attachment(front_desk, "invoice-chase"), actor=owner, pin=False)
    agent_skill_override(
        attachment=attachment(collections, "take-payment"),
        body="Collections take card payments only, never bank transfers.\n",
        actor=owner,
    )

    pinned = skill_md_served(client, tokens["collections"], "invoice-chase")
    assert first_body.strip() in pinned and "then call" not in pinned
    for follower in ("front-desk", "workspace"):
        assert "Chase politely, then firmly, then call." in skill_md_served(
            client, tokens[follower], "invoice-chase"
        )

    overridden = skill_md_served(client, tokens["collections"], "take-payment")
    assert "Collections take card payments only" in overridden
    assert overridden.startswith("---\nname: take-payment\n")
    for other in ("front-desk", "workspace"):
        assert "Collections take card payments" not in skill_md_served(
            client, tokens[other], "take-payment"
        )
    digests = {
        who: next(
            e["digest"]
            for e in read_index(client, tokens[who])["skills"]
            if e["name"] == "take-payment"
        )  # fmt: skip
        for who in tokens
    }
    assert digests["collections"] != digests["front-desk"] == digests["workspace"]


def test_a_token_of_another_workspace_never_serves_this_ones_skills(client, acme, owner, tokens):
    gia = make_user("gia")
    globex = make_workspace("globex", owner=gia)
    # A skill of the same name as one of acme's, and one of its own.
    local_skill(globex, gia, "invoice-chase", body="Email once; never call.")
    local_skill(globex, gia, "ledger-notes")
    _, globex_secret = delivery_token_create(workspace=globex, actor=gia, name="Globex")

    assert names(read_index(client, globex_secret)) == ["invoice-chase", "ledger-notes"]
    assert "Email once; never call." in skill_md_served(client, globex_secret, "invoice-chase")
    # acme's archives, whatever their slug, are not under globex's URL.
    for entry in read_index(client, tokens["workspace"])["skills"]:
        response = client.get(archive_path(globex_secret, entry))
        assert response.status_code == 404, entry["name"]
    # Nor are globex's under acme's.
    for entry in read_index(client, globex_secret)["skills"]:
        assert client.get(archive_path(tokens["workspace"], entry)).status_code == 404


def test_a_wrong_a_revoked_and_an_api_token_answer_the_same_404(client, acme, owner, tokens):
    token = DeliveryToken.objects.get(name="Everything")
    _, api_secret = token_create(user=owner, actor=owner, name="Owen's laptop")
    live = client.get(base(tokens["workspace"]) + INDEX)
    assert live.status_code == 200
    delivery_token_revoke(token=token, actor=owner)

    answers = {
        "revoked": client.get(base(tokens["workspace"]) + INDEX),
        "wrong": client.get(base(wrong_secret()) + INDEX),
        "api token": client.get(base(api_secret) + INDEX),
        "not a token": client.get(base("hello") + INDEX),
        "no token": client.get("/deliver/" + INDEX),
        "revoked, its base": client.get(base(tokens["workspace"])),
    }
    first = answers["revoked"]
    assert first.status_code == 404
    assert first.content.startswith(b"Nothing is delivered at this address.")
    headers = ("Content-Type", "Content-Length", "Cache-Control", "Referrer-Policy")
    for what, answer in answers.items():
        assert answer.status_code == first.status_code, what
        assert answer.content == first.content, what
        assert [answer.get(h) for h in headers] == [first.get(h) for h in headers], what


def test_a_rotated_token_stops_and_its_replacement_serves_the_same(client, owner, tokens):
    token = DeliveryToken.objects.get(name="Collections laptops")
    before = read_index(client, tokens["collections"])
    _, replacement = delivery_token_rotate(token=token, actor=owner)
    assert client.get(base(tokens["collections"]) + INDEX).status_code == 404
    assert read_index(client, replacement) == before


def test_a_delivery_token_authenticates_nowhere_else(client, owner, tokens):
    # What the endpoint shows a credential that is one: the agents.
    _, api_secret = token_create(user=owner, actor=owner, name="Owen's laptop")
    shown = client.get("/api/workspaces/acme/agents/", HTTP_AUTHORIZATION=f"Bearer {api_secret}")
    assert shown.status_code == 200 and b"collections" in shown.content
    for scheme in ("Bearer", "Token"):
        for secret in tokens.values():
            response = client.get(
                "/api/workspaces/acme/agents/", HTTP_AUTHORIZATION=f"{scheme} {secret}"
            )
            assert response.status_code == 401, (scheme, response.content)
            assert b"collections" not in response.content
            assert b"Collections agent" not in response.content


def test_the_hosts_own_well_known_index_is_never_served(client, tokens):
    for path in ("/.well-known/agent-skills/index.json", "/.well-known/skills/index.json",
                 "/deliver/.well-known/agent-skills/index.json"):  # fmt: skip
        response = client.get(path)
        assert response.status_code == 404, path
        assert b"invoice-chase" not in response.content, path


def test_the_bare_base_url_says_what_it_is_for(client, tokens):
    for path in (base(tokens["collections"]), base(tokens["collections"]).rstrip("/")):
        response = client.get(path)
        assert response.status_code == 404
        assert response.content.startswith(b"This is a Pixie delivery URL")
        assert b"npx skills add" in response.content
    # Under it, a path that is neither the index nor an archive.
    response = client.get(base(tokens["collections"]) + "SKILL.md")
    assert (response.status_code, response.content) == (
        404, b"No such file under this delivery URL.\n"
    )  # fmt: skip


def test_delivery_urls_are_read_only(tokens):
    # As a client outside the test suite meets it: CSRF checked like any other POST.
    client = Client(enforce_csrf_checks=True)
    for secret in (tokens["workspace"], wrong_secret()):
        for method in ("post", "put", "patch", "delete"):
            response = getattr(client, method)(base(secret) + INDEX)
            assert response.status_code == 405, (method, response.content)
            assert response["Allow"] == "GET, HEAD"
    head = client.head(base(tokens["workspace"]) + INDEX)
    assert head.status_code == 200 and head.content == b""


def test_an_address_sending_wrong_tokens_waits_while_another_is_served(client, settings, tokens):
    # Per hour, so a test never straddles the counter's window.
    settings.PIXIE_DELIVERY_WRONG_TOKEN_RATE = "3/h"
    here, elsewhere = {"REMOTE_ADDR": "203.0.113.7"}, {"REMOTE_ADDR": "198.51.100.9"}
    # Reads with a good token are not counted, however many.
    for _ in range(5):
        assert client.get(base(tokens["workspace"]) + INDEX, **here).status_code == 200
    for _ in range(3):
        assert client.get(base(wrong_secret()) + INDEX, **here).status_code == 404
    for secret in (tokens["workspace"], wrong_secret()):
        refused = client.get(base(secret) + INDEX, **here)
        assert refused.status_code == 429, refused.content
        assert 0 < int(refused["Retry-After"]) <= 3600
        assert refused["Cache-Control"].startswith("private")
    assert client.get(base(tokens["workspace"]) + INDEX, **elsewhere).status_code == 200


def test_every_delivery_answer_is_private_and_sends_no_referrer(client, settings, tokens):
    settings.PIXIE_DELIVERY_WRONG_TOKEN_RATE = "1/h"
    secret = tokens["workspace"]
    index = client.get(base(secret) + INDEX)
    entry = json.loads(index.content)["skills"][0]
    archive = client.get(archive_path(secret, entry))
    answers = {
        "index": index,
        "archive": archive,
        "index, not modified": client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH=index["ETag"]),
        "archive, not modified": client.get(
            archive_path(secret, entry), HTTP_IF_NONE_MATCH=archive["ETag"]
        ),
        "base": client.get(base(secret)),
        "no such file": client.get(base(secret) + "robots.txt"),
        "post": client.post(base(secret) + INDEX),
        "wrong token": client.get(base(wrong_secret()) + INDEX),
    }
    answers["too many"] = client.get(base(secret) + INDEX)
    assert answers["too many"].status_code == 429
    for what, response in answers.items():
        assert response["Referrer-Policy"] == "no-referrer", what
        assert "private" in response["Cache-Control"].split(", "), what
        assert "Set-Cookie" not in response, what


# --- skills the client would refuse -------------------------------------------------------


def test_a_skill_whose_name_the_client_refuses_is_left_out_with_the_reason(
    client, acme, owner, installed, tokens
):
    collections, _ = installed
    for slug in ("a--b", "trailing-"):
        made = local_skill(acme, owner, slug)
        agent_skill_attach(agent=collections, skill=made, actor=owner)
    for who, name in (("workspace", "Everything"), ("collections", "Collections laptops")):
        served = names(read_index(client, tokens[who]))
        assert "a--b" not in served and "trailing-" not in served, who
        assert "ar-ground-rules" in served, who
        index = token_index(DeliveryToken.objects.get(name=name))
        left_out = {entry.slug: entry.refusal for entry in index.left_out}
        assert set(left_out) == {"a--b", "trailing-"}, who
        assert all("not one the skills client accepts" in why for why in left_out.values())


def test_a_description_the_client_counts_as_too_long_is_left_out_with_the_reason(
    client, acme, owner
):
    # 600 characters to Pixie (its limit is 1,024), 1,200 to the client: JavaScript counts
    # a character past U+FFFF twice, and the client skips an entry over 1,024 unsaid.
    local_skill(acme, owner, "ledger-emoji", description="📒" * 600)
    local_skill(acme, owner, "ledger-plain", description="📒" * 512)
    token, secret = delivery_token_create(workspace=acme, actor=owner, name="Everything")
    assert names(read_index(client, secret)) == ["ledger-plain"]
    (left_out,) = token_index(token).left_out
    assert (left_out.slug, left_out.refusal) == (
        "ledger-emoji", "its description is over the skills client's 1,024 characters"
    )  # fmt: skip


def publish_one_skill(tmp_path, slug: str, files: dict[str, bytes], version: str = "1.0.0"):
    """A bundle of one skill with these supporting files, loaded and published."""
    root = tmp_path / slug
    write(
        root / "bundle.toml",
        f'slug = "{slug}-bundle"\nname = "Big"\nversion = "{version}"\n'
        f'description = "One big skill."\nskills = ["{slug}"]\n',
    )
    folder = root / "skills" / slug
    write(folder / "SKILL.md", skill_md(slug, "A skill with many files.", "Read the files.\n"))
    for path, data in files.items():
        write(folder / path, data)
    call_command("bundle_load", str(root), "--publish", verbosity=0)
    return BundleVersion.objects.get(bundle__slug=f"{slug}-bundle", version=version)


def supporting_files(count: int) -> dict[str, bytes]:
    return {f"references/part-{n:04}.md": b"See the ledger.\n" for n in range(count)}


def test_a_skill_past_the_clients_thousand_files_is_left_out_with_the_reason(
    client, tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    # Pixie takes 2,000 files a skill (PIXIE_SKILL_MAX_FILES); the client 1,000 entries.
    version = publish_one_skill(tmp_path, "many-files", supporting_files(1000))
    install(acme, version, owner, django_capture_on_commit_callbacks)
    local_skill(acme, owner, "ledger-notes")
    token, secret = delivery_token_create(workspace=acme, actor=owner, name="Everything")

    assert names(read_index(client, secret)) == ["ledger-notes"]
    (left_out,) = token_index(token).left_out
    assert left_out.slug == "many-files"
    assert left_out.refusal == "it has 1,001 files; the skills client takes at most 1,000"
    assert SkillArchive.objects.count() == 1  # nothing was built for it


def test_a_skill_of_exactly_the_clients_thousand_files_is_served(
    client, tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    # 999 files and SKILL.md: the 1,000 entries the client takes.
    version = publish_one_skill(tmp_path, "enough-files", supporting_files(999))
    install(acme, version, owner, django_capture_on_commit_callbacks)
    _, secret = delivery_token_create(workspace=acme, actor=owner, name="Everything")

    (entry,) = read_index(client, secret)["skills"]
    assert entry["name"] == "enough-files"
    unpacked = fetch_archive(client, secret, entry)
    assert len(unpacked) == 1000
    assert unpacked["references/part-0998.md"] == b"See the ledger.\n"


def test_a_skill_past_the_clients_50_mib_is_left_out_with_the_reason(
    client, tmp_path, acme, owner, django_capture_on_commit_callbacks
):
    # Four files of 13 MiB (each under Pixie's own limit for one file): 52 MiB unpacked.
    # The same bytes, so one stored blob.
    data = b"\0" * (13 << 20)
    files = {f"assets/data-{n}.bin": data for n in range(4)}
    version = publish_one_skill(tmp_path, "large-skill", files)
    install(acme, version, owner, django_capture_on_commit_callbacks)
    token, secret = delivery_token_create(workspace=acme, actor=owner, name="Everything")

    assert names(read_index(client, secret)) == []
    (left_out,) = token_index(token).left_out
    assert left_out.refusal == "it unpacks to 52.0 MiB; the skills client takes at most 50 MiB"
    assert not SkillArchive.objects.exists()  # nothing was built for it


# --- 2. conditional reads -----------------------------------------------------------------


def test_the_index_and_an_archive_answer_304_to_their_etag(client, acme, owner, tokens):
    secret = tokens["workspace"]
    index = client.get(base(secret) + INDEX)
    etag = index["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    again = client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH=etag)
    assert (again.status_code, again.content, again["ETag"]) == (304, b"", etag)
    assert client.get(base(secret) + OLDER_INDEX, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # A list of tags, the right one among them.
    listed = client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH=f'"nope", {etag}')
    assert listed.status_code == 304
    # A proxy that compresses the response weakens its tag (nginx's gzip): If-None-Match
    # compares weakly (RFC 9110), so its clients still get 304; a bare * too.
    assert client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH=f"W/{etag}").status_code == 304
    assert client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH="*").status_code == 304
    assert client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH=etag[:-2] + '"').status_code == 200

    entry = json.loads(index.content)["skills"][0]
    archive = client.get(archive_path(secret, entry))
    assert archive["ETag"] == '"' + entry["digest"].removeprefix("sha256:") + '"'
    repeat = client.get(archive_path(secret, entry), HTTP_IF_NONE_MATCH=archive["ETag"])
    assert (repeat.status_code, repeat.content) == (304, b"")
    assert "immutable" in repeat["Cache-Control"]

    # The index changes with a skill: the old tag no longer matches.
    skill_edit(skill=skill(acme, "ar-ground-rules"), actor=owner, body="New ground rules.\n")
    changed = client.get(base(secret) + INDEX, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    # Someone else's tag, or a wrong token with the right tag, is no shortcut.
    assert client.get(base(wrong_secret()) + INDEX, HTTP_IF_NONE_MATCH=etag).status_code == 404


# --- 3. the token never reaches a log, an error report or the history ---------------------


class Records(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def records(caplog):
    """Every record of the request, at DEBUG: caplog's, and the two request loggers' own
    (in case either stops propagating)."""
    caplog.set_level(logging.DEBUG)
    handler = Records()
    loggers = [logging.getLogger(name) for name in ("django.request", "pixie.request")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    yield lambda: [*caplog.records, *handler.records]
    for logger, level in zip(loggers, levels, strict=True):
        logger.removeHandler(handler)
        logger.setLevel(level)


def assert_nowhere(secret: str, records: list[logging.LogRecord]) -> None:
    formatter = JsonFormatter()
    for record in records:
        where = f"{record.name}: {record.getMessage()[:200]}"
        assert secret not in record.getMessage(), where
        assert secret not in str(vars(record)), where
        assert secret not in formatter.format(record), where
        request = getattr(record, "request", None)
        if request is not None:
            assert secret not in repr(request), where
            assert secret not in str(request.META), where
            assert secret not in request.get_full_path(), where
            exc_info = record.exc_info or (None, None, None)
            reporter = ExceptionReporter(request, *exc_info)
            assert secret not in reporter.get_traceback_text(), where
            assert secret not in reporter.get_traceback_html(), where


def test_a_token_reaches_no_log_line_and_no_error_report(client, monkeypatch, records, tokens):
    secret = tokens["collections"]
    index = read_index(client, secret)
    fetch_archive(client, secret, index["skills"][0])
    wrong = wrong_secret()
    assert client.get(base(wrong) + INDEX).status_code == 404
    assert client.get(base(secret)).status_code == 404

    def broken(token):
        raise RuntimeError("the index could not be read")

    monkeypatch.setattr(views, "token_index", broken)
    views.INDEXES.clear()  # the index read above is kept in memory: read it again
    client.raise_request_exception = False
    failed = client.get(base(secret) + INDEX)
    assert failed.status_code == 500

    seen = records()
    paths = [getattr(r, "path", "") for r in seen if r.name == "pixie.request"]
    assert paths.count("/deliver/…/" + INDEX) >= 2, paths
    errors = [r for r in seen if r.name == "django.request" and r.levelno >= logging.ERROR]
    assert errors and errors[-1].exc_info is not None
    assert any(getattr(r, "status_code", None) == 404 for r in seen if r.name == "django.request")
    for leaked in (secret, wrong):
        assert_nowhere(leaked, seen)
        assert leaked not in failed.content.decode()


def test_the_history_of_a_token_keeps_no_secret(owner, acme, agents):
    token, secret = delivery_token_create(workspace=acme, actor=owner, name="Desk", agent=agents[0])
    _, rotated = delivery_token_rotate(token=token, actor=owner)
    entries = list(AuditEntry.objects.select_related("revision"))
    versions = list(Version.objects.all())
    assert versions and entries
    for value in (secret, rotated):
        for entry in entries:
            assert value not in str(vars(entry)) and value not in str(vars(entry.revision))
        for version in versions:
            assert value not in version.serialized_data
            assert value not in version.object_repr
        for row in DeliveryToken.objects.all():
            assert value not in str(vars(row))


# --- 4. an index's queries do not grow with its skills ------------------------------------


def agent_with_skills(workspace, owner, slug: str, count: int):
    from agents.models import Agent

    agent = Agent.objects.create(workspace=workspace, slug=slug, name=f"{slug} agent")
    made = skills_create(
        workspace=workspace,
        actor=owner,
        skills=[
            NewSkill(
                slug=f"{slug}-{n:03}",
                name=f"Skill {n}",
                short_description=f"Skill number {n}.",
                body=f"Do thing {n}.\n",
            )
            for n in range(count)
        ],
    )
    AgentSkill.objects.bulk_create(
        AgentSkill(agent=agent, skill=s, position=n, pinned_revision_id=s.head_id)
        for n, s in enumerate(made, start=1)
    )
    return delivery_token_create(workspace=workspace, actor=owner, name=slug, agent=agent)[1]


def index_queries(client, secret: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(base(secret) + INDEX)
    assert response.status_code == 200
    return len(queries)


def test_an_index_costs_the_same_queries_for_10_skills_as_for_500(
    client, acme, owner, django_assert_max_num_queries
):
    small = agent_with_skills(acme, owner, "small", 10)
    large = agent_with_skills(acme, owner, "large", 500)
    # The first read builds every archive (one insert for all, in batches on SQLite) and
    # records the client: bounded too, the same bound for 10 as for 500.
    with django_assert_max_num_queries(13 + bulk_inserts(SkillArchive, 10)):
        first_small = client.get(base(small) + INDEX)
    with django_assert_max_num_queries(13 + bulk_inserts(SkillArchive, 500)):
        first_large = client.get(base(large) + INDEX)
    assert len(json.loads(first_large.content)["skills"]) == 500
    assert len(json.loads(first_small.content)["skills"]) == 10
    assert SkillArchive.objects.count() == 510
    # After it, the same number whatever the skills: the token, the attachments, their
    # files, the archives' digests, the client (and last_used_at once a minute).
    with django_assert_max_num_queries(6):
        after_small = index_queries(client, small)
    with django_assert_max_num_queries(6):
        after_large = index_queries(client, large)
    assert after_small == after_large


def test_an_archive_costs_the_same_queries_for_10_skills_as_for_500(
    client, acme, owner, django_assert_max_num_queries
):
    small = agent_with_skills(acme, owner, "small", 10)
    large = agent_with_skills(acme, owner, "large", 500)
    counts = []
    for secret in (small, large):
        entry = read_index(client, secret)["skills"][-1]
        fetch_archive(client, secret, entry)  # the client's first fetch records it
        with django_assert_max_num_queries(12), CaptureQueriesContext(connection) as queries:
            assert client.get(archive_path(secret, entry)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_marketplaces_token_reaches_no_log_line_either(client, monkeypatch, records, tokens):
    """Claude Code's marketplace, its token in a header and in the path, read, refused and
    failing: no log record and no error report holds the token."""
    secret = tokens["workspace"]
    header = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    assert client.get("/claude/marketplace.json", **header).status_code == 200
    path_form = client.get(f"/deliver/{secret}/claude/marketplace.json")
    plugin = path_form.json()["plugins"][0]["source"]["url"].split("testserver", 1)[1]
    assert client.get(plugin).status_code == 200
    wrong = wrong_secret()
    assert client.get("/claude/marketplace.json", HTTP_AUTHORIZATION=f"Bearer {wrong}"
                      ).status_code == 404  # fmt: skip

    def broken(workspace_id):
        raise RuntimeError("the marketplace could not be read")

    monkeypatch.setattr(views, "workspace_marketplace", broken)
    views.MARKETPLACES.clear()
    client.raise_request_exception = False
    assert client.get("/claude/marketplace.json", **header).status_code == 500
    assert client.get(f"/deliver/{secret}/claude/marketplace.json").status_code == 500
    seen = records()
    for leaked in (secret, wrong):
        assert_nowhere(leaked, seen)
