"""Smaller holes (issue #13, section 4), each tried the way an outsider would.

- The admin's change lists, filters and autocomplete show a member nothing of a
  workspace they do not belong to; no query string makes a change list fail.
- Every API list endpoint answers a page that does not exist with 404 and a message
  naming the pages there are; no number in a URL or a query string makes a 500.
- bundle_load and the admin upload refuse links and special files by name, without
  reading them.
- The development key-encryption key is reported by `manage.py check`; the SQLite
  database and data/ are readable by their owner only.
"""

import base64
import io
import os
import re
import signal
import stat
import subprocess
import sys
import tarfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.checks import Tags, run_checks
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.mixins import ListModelMixin
from rest_framework.pagination import PageNumberPagination
from rest_framework.test import APIClient

from agents.models import Agent
from agents.promote import assembly_promote
from catalog.bundle_files import BundleFileError
from catalog.models import Bundle, SkillVersion
from catalog.services.bundle_upload import upload_read, upload_store
from catalog.services.workspace_skills import skill_create
from egress.models import CredentialRequirement, EgressRule
from pixie.core.models import Membership, Workspace
from tests.catalog.skill_folders import bundle_folder
from tests.factories import make_user
from tests.installer.flow import install
from tests.reliability.urls import all_patterns, all_views, fill
from tests.reliability.world import build_world

BASE_DIR = Path(__file__).resolve().parents[2]
HUGE = "99999999999999999999"  # past a signed 64-bit integer


@pytest.fixture
def world(db, demo_catalog, django_capture_on_commit_callbacks):
    return build_world(demo_catalog, django_capture_on_commit_callbacks)


# --- the admin: nothing of another workspace ------------------------------------------

# Names only the workspace "Initech" uses; acme's member must never see one of them.
SECRET_NAMES = [
    "Initech Hidden Works",
    "Initech Payroll Agent",
    "Initech Layoff Memo",
    "Initech Severance Bundle",
    "vault.initech-hidden.example",
    "INITECH_HIDDEN_TOKEN",
]


@pytest.fixture
def initech(world, demo_catalog, django_capture_on_commit_callbacks):
    """A third workspace acme shares nothing with, with a row of every kind."""
    owner = make_user("ian")
    initech = Workspace.objects.create(slug="initech", name="Initech Hidden Works")
    Membership.objects.create(workspace=initech, user=owner, role=Membership.Role.OWNER)
    agent = Agent.objects.create(workspace=initech, slug="payroll", name="Initech Payroll Agent")
    install(initech, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, [agent])
    skill_create(
        workspace=initech, slug="layoff-memo", name="Initech Layoff Memo",
        short_description="Write it.", body="Write the memo.", actor=owner,
    )  # fmt: skip
    EgressRule.objects.create(
        workspace=initech, host="vault.initech-hidden.example", port=443,
        credential_name="INITECH_HIDDEN_TOKEN", approved_by=owner, approved_at=timezone.now(),
    )  # fmt: skip
    CredentialRequirement.objects.create(
        workspace=initech, name="INITECH_HIDDEN_TOKEN", host="vault.initech-hidden.example"
    )
    # A draft bundle under the workspace's own publisher (named after the workspace).
    assembly_promote(agent=agent, actor=owner, slug="severance", name="Initech Severance Bundle")
    return initech


def changelist_urls():
    """Every registered ModelAdmin's change list: an admin added later is walked too."""
    return [
        reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for model in admin.site._registry
    ]


def leaked(html: str) -> list[str]:
    return [name for name in SECRET_NAMES if name in html]


def test_no_change_list_shows_a_member_another_workspaces_names(world, initech, record_property):
    client = Client()
    client.force_login(world.users["member"])
    pages, shown, failures = 0, 0, []
    for url in changelist_urls():
        for query in ("", "?_facets=1"):
            response = client.get(url + query)
            pages += 1
            if response.status_code == 200:
                shown += 1
            elif response.status_code != 403:
                failures.append(f"{url}{query}: {response.status_code}")
                continue
            found = leaked(response.content.decode())
            if found:
                failures.append(f"{url}{query} shows {', '.join(found)}")
    assert failures == [], "\n".join(failures)
    assert shown >= 20  # the workspace pages a member may open, with and without facets
    record_property("figure", f"{pages} change lists checked ({shown} open), 0 foreign names")


def test_the_workspace_filter_offers_a_superuser_every_workspace(world, initech):
    client = Client()
    client.force_login(world.users["superuser"])
    html = client.get(reverse("admin:agents_agent_changelist")).content.decode()
    assert "Initech Hidden Works" in html and "?workspace=initech" in html
    filtered = client.get(reverse("admin:agents_agent_changelist") + "?workspace=initech")
    assert list(filtered.context["cl"].result_list) == [Agent.objects.get(slug="payroll")]


def test_a_member_filtering_by_another_workspace_sees_nothing_of_it(world, initech):
    client = Client()
    client.force_login(world.users["member"])
    response = client.get(reverse("admin:catalog_workspaceskill_changelist") + "?workspace=initech")
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == []
    assert leaked(response.content.decode()) == []


def autocomplete_requests():
    """(model label, field) for every relation of every model whose far side has an admin
    with search fields: Django's autocomplete answers for all of them, not only for the
    fields an admin names in autocomplete_fields."""
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if not (field.is_relation and field.concrete and field.related_model):
                continue
            remote_admin = admin.site._registry.get(field.related_model)
            if remote_admin is None or not remote_admin.search_fields:
                continue
            yield model._meta.app_label, model._meta.model_name, field.name


# Every autocomplete pages a stated order (a grouped queryset has none of its own).
@pytest.mark.filterwarnings("error::django.core.paginator.UnorderedObjectListWarning")
def test_autocomplete_shows_a_member_nothing_of_another_workspace(world, initech, record_property):
    client = Client()
    client.force_login(world.users["member"])
    asked, answered, failures = 0, 0, []
    for app_label, model_name, field_name in autocomplete_requests():
        for term in ("", "initech"):
            response = client.get(
                reverse("admin:autocomplete"),
                {"app_label": app_label, "model_name": model_name, "field_name": field_name,
                 "term": term},
            )  # fmt: skip
            asked += 1
            where = f"{app_label}.{model_name}.{field_name} {term!r}"
            if response.status_code >= 500:
                failures.append(f"{where}: {response.status_code}")
                continue
            answered += response.status_code == 200
            found = leaked(response.content.decode())
            if found:
                failures.append(f"{where} lists {', '.join(found)}")
    assert failures == [], "\n".join(failures)
    assert asked >= 20 and answered > 0
    record_property(
        "figure", f"{asked} autocomplete requests ({answered} answered), 0 foreign names"
    )


def hostile_queries(model) -> list[str]:
    """Query strings an outsider can type on a change list: a page past any database
    integer, an ordering that is not one, and an id past bigint for every relation."""
    queries = [f"?p={2**61 + 1}", f"?p={10**30}", "?p=-1", "?p=x", "?o=garbage", "?o=9999.-1"]
    queries += [f"?{name}={HUGE}" for name in ("workspace__id__exact", "id__exact", "pk")]
    for field in model._meta.get_fields():
        if field.is_relation and field.concrete and field.many_to_one:
            queries.append(f"?{field.name}__id__exact={HUGE}")
            queries.append(f"?{field.name}__id__exact=-{HUGE}")
    return queries


@pytest.mark.parametrize("role", ["superuser", "member"])
def test_no_query_string_makes_a_change_list_fail(role, world, record_property):
    client = Client(raise_request_exception=False)
    client.force_login(world.users[role])
    asked, failures = 0, []
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for query in hostile_queries(model):
            status = client.get(url + query).status_code
            asked += 1
            if status >= 500:
                failures.append(f"{url}{query}: {status}")
    assert failures == [], "\n".join(failures)
    record_property("figure", f"{asked} hostile change list requests as {role}, 0 server errors")


# --- the API: pages that do not exist, numbers past any integer ------------------------

PAGE_VALUES = ["0", "-1", "x", "1.5", "9", str(2**61 + 1), str(10**30), "9" * 5000]


def api_get_routes(world):
    """(name, url, view class) of every API route with a GET, its arguments filled."""
    routes = []
    for route, name, view in all_views():
        view_class = getattr(view, "cls", None)
        if not route.startswith("api/") or name in ("schema", "swagger-ui"):
            continue
        if view_class is None or not hasattr(view_class, "get"):
            continue
        url = fill(route, name, world)
        if url is not None:
            routes.append((name, url, view_class))
    return routes


def is_paged_list(view_class) -> bool:
    """A list paged by number (a history pages by cursor: tests/pixie/test_history.py)."""
    if not issubclass(view_class, ListModelMixin) or view_class.pagination_class is None:
        return False
    return issubclass(view_class.pagination_class, PageNumberPagination)


# Lists only a workspace's owners read (the tokens that reach it).
OWNERS_LISTS = {"workspace-token-list", "invitation-list"}
# Lists only operators (and auditors) read: the sources the catalog follows.
OPERATORS_LISTS = {"source-list"}


@pytest.fixture
def member_api(world):
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['member']}")
    return client


def test_every_list_endpoint_answers_a_missing_page_with_404_naming_the_pages(
    world, member_api, record_property
):
    lists = [(name, url) for name, url, view in api_get_routes(world) if is_paged_list(view)]
    assert {"bundle-list", "plan-list", "skill-list", "message-list"} <= {n for n, _ in lists}
    owner_api = APIClient(raise_request_exception=False)
    owner_api.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['owner']}")
    operator_api = APIClient(raise_request_exception=False)
    operator_api.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['operator']}")
    failures = []
    for name, url in lists:
        client = owner_api if name in OWNERS_LISTS else member_api
        client = operator_api if name in OPERATORS_LISTS else client
        first = client.get(url)
        assert first.status_code == 200, f"{url}: {first.status_code}"
        pages = -(-first.json()["count"] // 50) or 1
        for value in PAGE_VALUES:
            response = client.get(url, {"page": value})
            detail = response.json().get("detail", "") if response.status_code < 500 else ""
            said = "1 page" if pages == 1 else f"{pages} pages"
            if response.status_code != 404 or not detail.startswith("Page ") or said not in detail:
                failures.append(f"{url}?page={value[:30]}: {response.status_code} {detail!r}")
            elif len(detail) > 200:
                failures.append(f"{url}?page={value[:30]}: a {len(detail)}-character message")
    assert failures == [], "\n".join(failures)
    record_property(
        "figure",
        f"{len(lists)} list endpoints x {len(PAGE_VALUES)} missing pages: every one 404 "
        "naming the pages, 0 server errors",
    )


def test_the_bundle_list_says_which_pages_exist(world, member_api):
    response = member_api.get("/api/bundles/", {"page": "2305843009213693953"})
    assert response.status_code == 404
    assert response.json()["problems"] == [
        "Page 2,305,843,009,213,693,953 does not exist: there is 1 page."
    ]
    assert member_api.get("/api/bundles/", {"page": "x"}).json()["problems"] == [
        "Page 'x' is not a page number: there is 1 page, numbered from 1."
    ]
    assert member_api.get("/api/bundles/", {"page": "last"}).status_code == 200


def test_no_number_in_an_api_url_or_query_makes_a_server_error(world, member_api, record_property):
    """Every GET route, with hostile numbers in the query strings a list might read."""
    queries = [
        {"page": str(10**30)},
        {"page": "-" + HUGE},
        {"page_size": HUGE},
        {"limit": HUGE, "offset": HUGE},
        {"cursor": HUGE},
        {"workspace": HUGE, "id": HUGE, "ids": f"{HUGE},-{HUGE}"},
    ]
    routes = api_get_routes(world)
    failures = []
    for _name, url, _view in routes:
        for query in queries:
            status = member_api.get(url, query).status_code
            if status >= 500:
                failures.append(f"GET {url}?{query}: {status}")
    assert failures == [], "\n".join(failures)
    record_property(
        "figure", f"{len(routes)} API routes x {len(queries)} hostile queries, 0 server errors"
    )


def test_an_id_past_bigint_in_any_url_is_not_found(world, member_api, record_property):
    """Every route with a number or an object id in its path (API and admin), that number
    past a signed 64-bit integer: 404 (or a refusal), never a server error."""
    admin_client = Client(raise_request_exception=False)
    admin_client.force_login(world.users["superuser"])
    urls, failures = [], []
    for route, name in all_patterns():
        if not re.search(r"<(int|path):(\w*id|pk)>", route):
            continue
        filled = fill(re.sub(r"<(int|path):(\w*id|pk)>", HUGE, route), name, world)
        if filled is not None:
            urls.append(filled)
    for url in urls:
        client = member_api if url.startswith("/api/") else admin_client
        status = client.get(url).status_code
        if status >= 500 or status == 200:
            failures.append(f"GET {url}: {status}")
    assert failures == [], "\n".join(failures)
    assert len(urls) >= 30
    record_property("figure", f"{len(urls)} URLs with an id past bigint, 0 server errors")


# --- bundle_load: links and special files refused by name, never read -----------------

SECRET_LINE = "db_password: hunter2-OUTSIDE-SECRET: not for the catalog"


@pytest.fixture
def bundle(db, tmp_path):
    return bundle_folder(tmp_path / "ledger-tools")


@pytest.fixture
def outside(tmp_path):
    """A folder beside the bundle holding what a link would lead to."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secrets.txt").write_text(SECRET_LINE + "\nsecret_token = 'hunter2-TOML'\n")
    return folder


@contextmanager
def at_most(seconds: int):
    """Fail instead of hanging (a pipe opened for reading waits for a writer)."""

    def expired(signum, frame):
        raise AssertionError(f"still running after {seconds} s: something waited on a pipe")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def load_refused(folder: Path) -> str:
    """bundle_load's error for the folder; nothing of the bundle may have been stored."""
    with at_most(20), pytest.raises(CommandError) as refusal:
        call_command("bundle_load", str(folder))
    assert not Bundle.objects.filter(slug="ledger-tools").exists()
    message = str(refusal.value)
    for secret in ("hunter2", "db_password", "secret_token", "OUTSIDE-SECRET"):
        assert secret not in message
    return message


def test_a_skill_md_linking_outside_the_folder_is_refused_and_never_stored(bundle, outside):
    skill_md = bundle / "skills/ledger-lookup/SKILL.md"
    target = outside / "SKILL.md"
    target.write_text(skill_md.read_text().replace("Look up", "OUTSIDE-SECRET hunter2 Look up"))
    skill_md.unlink()
    skill_md.symlink_to(target)
    message = load_refused(bundle)
    assert "skills/ledger-lookup/SKILL.md: is a symbolic link" in message
    assert not SkillVersion.objects.filter(body__contains="OUTSIDE-SECRET").exists()


@pytest.mark.parametrize("manifest", ["bundle.yaml", "bundle.toml"])
def test_a_manifest_linking_to_another_file_is_refused_without_quoting_it(
    bundle, outside, manifest
):
    (bundle / "bundle.toml").unlink()
    (bundle / manifest).symlink_to(outside / "secrets.txt")
    message = load_refused(bundle)
    assert f"{manifest}: is a symbolic link; a bundle holds files, not links" in message


def test_a_manifest_link_that_leads_nowhere_is_named_as_a_link(bundle):
    (bundle / "bundle.toml").unlink()
    (bundle / "bundle.toml").symlink_to(bundle / "no-such-file")
    assert "bundle.toml: is a symbolic link" in load_refused(bundle)


def test_a_pipe_is_refused_without_waiting_for_a_writer(bundle):
    os.mkfifo(bundle / "skills/ledger-lookup/references.md")
    message = load_refused(bundle)
    assert "skills/ledger-lookup/references.md: is not a regular file" in message
    (bundle / "bundle.toml").unlink()
    os.mkfifo(bundle / "bundle.toml")
    assert "bundle.toml: is not a regular file (a device, pipe or socket)" in load_refused(bundle)


def test_a_linked_skill_folder_is_refused_by_name(bundle, outside):
    real = bundle / "skills/ledger-lookup"
    real.rename(outside / "ledger-lookup")
    real.symlink_to(outside / "ledger-lookup", target_is_directory=True)
    message = load_refused(bundle)
    assert "skills/ledger-lookup: is a symbolic link; a bundle holds folders, not links" in message


def test_a_linked_skills_folder_is_refused_by_name(bundle, outside):
    (bundle / "skills").rename(outside / "skills")
    (bundle / "skills").symlink_to(outside / "skills", target_is_directory=True)
    message = load_refused(bundle)
    assert "skills: is a symbolic link; a bundle holds folders, not links" in message


def test_a_file_swapped_for_a_link_after_it_was_looked_at_is_not_followed(
    bundle, outside, monkeypatch
):
    """lstat said "a file"; by the time it is opened it is a link: still refused."""
    from catalog.bundle_files import FileRefused, read_regular_file

    skill_md = bundle / "skills/ledger-lookup/SKILL.md"
    regular = os.lstat(skill_md)
    skill_md.unlink()
    skill_md.symlink_to(outside / "secrets.txt")
    real_lstat = os.lstat
    monkeypatch.setattr(
        os, "lstat", lambda path, *a, **k: regular if Path(path) == skill_md else real_lstat(path)
    )
    with pytest.raises(FileRefused, match="is a symbolic link"):
        read_regular_file(skill_md, 1 << 20)


def test_the_folder_named_on_the_command_line_may_itself_be_a_link(bundle, tmp_path):
    """The operator chose that path; what is inside it is checked as above."""
    (tmp_path / "current").symlink_to(bundle, target_is_directory=True)
    call_command("bundle_load", str(tmp_path / "current"), stdout=io.StringIO())
    assert Bundle.objects.filter(slug="ledger-tools").exists()


def stored_upload_problems(data: bytes) -> list[str]:
    token = upload_store([data])
    with pytest.raises(BundleFileError) as refusal:
        upload_read(token)
    return refusal.value.problems


def link_zip(bundle: Path, links: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(bundle.rglob("*")):
            name = str(path.relative_to(bundle))
            if path.is_file() and name not in links:
                archive.write(path, name)
        for name, target in links.items():
            member = zipfile.ZipInfo(name)
            member.create_system = 3
            member.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(member, target)
    return buffer.getvalue()


def link_tar(bundle: Path, links: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(bundle.rglob("*")):
            name = str(path.relative_to(bundle))
            if path.is_file() and name not in links:
                archive.add(path, name)
        for name, target in links.items():
            member = tarfile.TarInfo(name)
            member.type, member.linkname = tarfile.SYMTYPE, target
            archive.addfile(member)
    return buffer.getvalue()


@pytest.mark.parametrize("make", [link_zip, link_tar], ids=["zip", "tar.gz"])
def test_an_uploaded_archive_with_links_is_refused_naming_each(bundle, outside, settings, make):
    settings.DATA_DIR = outside.parent / "data"
    links = {
        "bundle.yaml": str(outside / "secrets.txt"),
        "skills/ledger-lookup/SKILL.md": str(outside / "secrets.txt"),
        "skills/ledger-export/references/shadow": "/etc/shadow",
    }
    problems = stored_upload_problems(make(bundle, links))
    for name in links:
        assert any(p.startswith(f"{name}: refused: it is a") and "link" in p for p in problems)
    assert not any("hunter2" in p or "db_password" in p for p in problems)


# --- development defaults: the key warned about, the files kept private ----------------


def test_check_warns_while_the_development_key_encryption_key_is_in_use(settings):
    warnings = [m for m in run_checks(tags=[Tags.security]) if m.id == "pixie.W001"]
    assert len(warnings) == 1
    assert "derived from a secret written in Pixie's source" in warnings[0].msg
    assert "Set PIXIE_KEY_ENCRYPTION_KEY" in warnings[0].hint
    output = io.StringIO()
    call_command("check", stdout=output, stderr=output)
    assert "(pixie.W001)" in output.getvalue()

    settings.PIXIE_KEY_ENCRYPTION_KEY = base64.b64encode(os.urandom(32)).decode()
    assert "pixie.W001" not in {m.id for m in run_checks(tags=[Tags.security])}


def manage(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    """manage.py as a developer runs it: default settings, SQLite under PIXIE_DATA_DIR,
    and a umask that would leave new files readable by everyone."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "DEBUG", "SECRET_KEY", "PIXIE_KEY_ENCRYPTION_KEY"}
    }
    env["PIXIE_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0o022),
    )


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_sqlite_database_and_its_folder_are_the_owners_only(tmp_path, record_property):
    data_dir = tmp_path / "data"
    # One app's migrations write into the file as all of them would (all: 8 s more).
    result = manage("migrate", "--noinput", "contenttypes", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    database = data_dir / "pixie.sqlite3"
    assert database.stat().st_size > 0  # migrate wrote into the file made private first
    assert (mode_of(data_dir), mode_of(database)) == (0o700, 0o600)
    check = manage("check", data_dir=data_dir)
    assert "pixie.W001" in check.stdout + check.stderr
    assert "pixie.W002" not in check.stdout + check.stderr
    record_property("figure", "data/ 0700 and pixie.sqlite3 0600 under umask 022")


def test_a_database_and_folder_left_readable_are_tightened_at_startup(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    database = data_dir / "pixie.sqlite3"
    database.touch()
    database.chmod(0o644)
    Path(f"{database}-wal").touch()
    Path(f"{database}-wal").chmod(0o664)
    result = manage("check", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    assert mode_of(data_dir) == 0o700
    assert mode_of(database) == 0o600
    assert mode_of(Path(f"{database}-wal")) == 0o600


def test_check_reports_data_it_could_not_tighten(tmp_path):
    """Files of another user cannot be chmod-ed by Pixie: the check names them instead."""
    from pixie import checks

    loose = tmp_path / "someone-elses.sqlite3"
    loose.touch()
    loose.chmod(0o644)
    tight = tmp_path / "mine.sqlite3"
    tight.touch()
    tight.chmod(0o600)
    assert checks.readable_by_others([tight, loose, tmp_path / "missing"]) == [f"{loose} (0644)"]


def test_check_names_a_data_folder_others_can_read(tmp_path, settings):
    loose = tmp_path / "data"
    loose.mkdir()
    loose.chmod(0o755)
    settings.DATA_DIR = loose
    from pixie import checks

    warnings = [m for m in checks.private_files_check(None) if m.id == "pixie.W002"]
    assert len(warnings) == 1 and f"{loose} (0755)" in warnings[0].msg
