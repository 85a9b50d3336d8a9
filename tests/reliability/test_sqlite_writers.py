"""On the default database (a SQLite file, tasks in-process), simultaneous writes wait
their turn: eight owners approving at the same moment all get their answer, none a 500
"database is locked" (5 of 8 did, before writes took the lock as they began).

A Pixie of its own in a subprocess (runserver, a thread a request), on a copy of a
migrated SQLite file, as ./scripts/dev runs it."""

import json
import threading

import pytest
import requests

from tests.sharing.second_server import SecondServer

pytestmark = [pytest.mark.django_db]

OWNERS = 8
SETUP = """
import json
from django.core.management import call_command
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from catalog.models import BundleVersion
from pixie.installer.plans import plan_create
from pixie.core.models import Membership, Workspace

call_command("bundle_load", "catalog/demo/accounts-receivable-2.1.0", "--publish", verbosity=0)
version = BundleVersion.objects.get(bundle__slug="accounts-receivable", version="2.1.0")
asked = []
for n in range(COUNT):
    owner = get_user_model().objects.create_user(f"owner{n}")  # a token, no password to hash
    workspace = Workspace.objects.create(slug=f"shop-{n}", name=f"Shop {n}")
    Membership.objects.create(workspace=workspace, user=owner, role="owner")
    plan = plan_create(workspace=workspace, kind="install", bundle_version=version, actor=owner)
    asked.append({"workspace": workspace.slug, "plan": plan.pk,
                  "token": Token.objects.create(user=owner).key})
with open(OUT, "w") as out:
    json.dump(asked, out)
"""


@pytest.fixture
def shop_server(tmp_path, migrated_sqlite):
    server = SecondServer(tmp_path / "shop", migrated_sqlite)
    server._env = server.env()
    migrated_sqlite.copy_to(server.database)
    out = server.directory / "asked.json"
    server._manage("shell", "-v", "0", "-c", f"OUT = {str(out)!r}\nCOUNT = {OWNERS}\n" + SETUP)
    server.asked = json.loads(out.read_text())
    server.start()
    yield server
    server.stop()


def test_eight_owners_approving_at_once_on_sqlite_all_get_their_answer(shop_server):
    start = threading.Barrier(OWNERS)
    answers: dict[int, tuple[int, str]] = {}

    def approve(n, asked):
        path = f"/api/workspaces/{asked['workspace']}/plans/{asked['plan']}/approve/"
        url = shop_server.url + path
        start.wait()
        answer = requests.post(url, headers={"Authorization": f"Token {asked['token']}"},
                               timeout=120)  # fmt: skip
        answers[n] = (answer.status_code, answer.text[:300])

    threads = [
        threading.Thread(target=approve, args=(n, asked))
        for n, asked in enumerate(shop_server.asked)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert sorted(status for status, _ in answers.values()) == [202] * OWNERS, answers
    for asked in shop_server.asked:
        plan = requests.get(
            f"{shop_server.url}/api/workspaces/{asked['workspace']}/plans/{asked['plan']}/",
            headers={"Authorization": f"Token {asked['token']}"}, timeout=30,
        ).json()  # fmt: skip
        assert plan["status"] == "applied", plan
