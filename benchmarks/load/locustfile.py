"""Locust scenarios against Pixie's production stack, through the real API with token auth.

Run by benchmarks/load.py, which seeds the database and names the classes to
run; PIXIE_LOAD_SEED is the JSON file benchmarks/load/seed.py printed. Every
virtual user takes an account of its own (a token and a workspace only it
uses), so one user's plans never go stale against another's. No think time:
each user sends its next request as soon as the last one answered, so the
concurrency is the number of users.

Request names are "<group>: <method> <route>"; benchmarks/load.py reports by them.

- CatalogBrowser: the bundle list, then one bundle version in full.
- PlanOwner: install a demo bundle, upgrade it, uninstall it; each plan is
  created, approved, and polled until the Celery worker has applied it.
- InboxReader: the workspace's messages, each opened (decrypted) by the server.
- Livez, BundleList, BundleVersionDetail: one request each, for the
  throughput ratio of issue 8 (benchmarks/load.py --ratio).
- BundleListConditional, BundleVersionConditional: the same two requests sent with
  If-None-Match of the ETag the user was first given, each expected to answer 304
  (issue 18: a client that already holds the resource).
"""

import json
import os
import random
import time
from pathlib import Path

from locust import FastHttpUser, constant, events, task
from locust.exception import StopUser

SEED = json.loads(Path(os.environ["PIXIE_LOAD_SEED"]).read_text())
_unused_accounts = list(reversed(SEED["accounts"]))
# How often a plan's page is asked for while the worker applies it, and for how long.
POLL_EVERY = float(os.environ.get("PIXIE_LOAD_POLL_EVERY", "0.2"))
APPLY_TIMEOUT = float(os.environ.get("PIXIE_LOAD_APPLY_TIMEOUT", "60"))

BUNDLE_LIST = "catalog: GET /api/bundles/"
BUNDLE_VERSION = "catalog: GET /api/bundles/{slug}/versions/{version}/"
PLAN_CREATE = "plans: POST /api/workspaces/{ws}/plans/"
PLAN_APPROVE = "plans: POST /api/workspaces/{ws}/plans/{id}/approve/"
PLAN_POLL = "plans: GET /api/workspaces/{ws}/plans/{id}/"
INBOX = "inbox: GET /api/workspaces/{ws}/messages/"
LIVEZ = "trivial: GET /livez"
BUNDLE_LIST_304 = "catalog 304: GET /api/bundles/ If-None-Match"
BUNDLE_VERSION_304 = "catalog 304: GET /api/bundles/{slug}/versions/{version}/ If-None-Match"
ETAG = "setup: GET the ETag"


class PixieUser(FastHttpUser):
    abstract = True
    wait_time = constant(0)

    def on_start(self):
        if not _unused_accounts:
            raise StopUser("more virtual users than seeded accounts")
        self.account = _unused_accounts.pop()
        self.workspace = self.account["workspace"]
        # scripts/prod sits behind a TLS proxy, which says so in X-Forwarded-Proto.
        self.headers = {
            "Authorization": f"Token {self.account['token']}",
            "X-Forwarded-Proto": "https",
        }

    def get(self, path, name, expect=200, check=None):
        with self.client.get(path, headers=self.headers, name=name, catch_response=True) as r:
            return self._check(r, expect, check)

    def post(self, path, name, body=None, expect=200):
        with self.client.post(
            path, json=body, headers=self.headers, name=name, catch_response=True
        ) as r:
            return self._check(r, expect)

    def fetch(self, path, name, expect=200, headers=None):
        """GET and check the status only: the body is read but not parsed, so the
        throughput ratio measures the server rather than the client's JSON parser."""
        headers = {**self.headers, **(headers or {})}
        with self.client.get(path, headers=headers, name=name, catch_response=True) as r:
            if r.status_code != expect:
                r.failure(f"HTTP {r.status_code}, expected {expect}: {r.text[:300]}")
            return r

    @staticmethod
    def _check(response, expect, check=None):
        """The answer's JSON (or text), or None after marking the request failed."""
        if response.status_code != expect:
            response.failure(
                f"HTTP {response.status_code}, expected {expect}: {response.text[:300]}"
            )
            return None
        if "json" not in response.headers.get("Content-Type", ""):
            return response.text
        data = response.json()
        problem = check(data) if check else None
        if problem:
            response.failure(problem)
            return None
        return data


class CatalogBrowser(PixieUser):
    weight = 2

    @task
    def browse(self):
        self.get("/api/bundles/", BUNDLE_LIST)
        slug, version = random.choice(SEED["catalog"])
        self.get(f"/api/bundles/{slug}/versions/{version}/", BUNDLE_VERSION)


class PlanOwner(PixieUser):
    weight = 1

    @task
    def install_upgrade_uninstall(self):
        bundle = SEED["bundle"]
        steps = [
            {"kind": "install", "bundle": bundle, "version": SEED["install"], "agents": ["worker"]},
            {"kind": "upgrade", "bundle": bundle, "version": SEED["upgrade"]},
            {"kind": "uninstall", "bundle": bundle},
        ]
        for body in steps:
            if not self.plan_through(body):
                # The workspace is now in a state the next cycle does not expect.
                raise StopUser()

    def plan_through(self, body) -> bool:
        plans = f"/api/workspaces/{self.workspace}/plans/"
        plan = self.post(plans, PLAN_CREATE, body, expect=201)
        if plan is None:
            return False
        if self.post(f"{plans}{plan['id']}/approve/", PLAN_APPROVE, expect=202) is None:
            return False
        approved = time.perf_counter()

        def still_on_its_way(seen):
            # A plan that failed, went stale or took too long fails the poll that saw it.
            waited = time.perf_counter() - approved
            if seen["status"] not in ("approved", "applying", "applied"):
                return f"plan {seen['id']} ({seen['kind']}) is {seen['status']}: {seen['error']}"
            if seen["status"] != "applied" and waited > APPLY_TIMEOUT:
                return f"plan {seen['id']} ({seen['kind']}) not applied after {waited:.0f} s"
            return None

        while True:
            time.sleep(POLL_EVERY)  # gevent's sleep, under locust
            seen = self.get(f"{plans}{plan['id']}/", PLAN_POLL, check=still_on_its_way)
            if seen is None:
                return False
            if seen["status"] == "applied":
                PLAN_WAITS.append(time.perf_counter() - approved)
                return True


# Seconds from each approval to its owner seeing the plan applied: a wait, not a
# request, so it is kept apart from locust's figures and written out at the end.
PLAN_WAITS: list[float] = []


@events.quitting.add_listener
def _write_plan_waits(environment, **kwargs):
    if os.environ.get("PIXIE_LOAD_PLAN_WAITS") and PLAN_WAITS:
        Path(os.environ["PIXIE_LOAD_PLAN_WAITS"]).write_text(json.dumps(PLAN_WAITS))


class InboxReader(PixieUser):
    weight = 1

    @task
    def read_inbox(self):
        self.get(f"/api/workspaces/{self.workspace}/messages/", INBOX)


# One request each, for the throughput ratio; benchmarks/load.py runs them one at a time.


class Livez(PixieUser):
    @task
    def livez(self):
        self.fetch("/livez", LIVEZ)


class BundleList(PixieUser):
    @task
    def bundle_list(self):
        self.fetch("/api/bundles/", BUNDLE_LIST)


class BundleVersionDetail(PixieUser):
    @task
    def bundle_version(self):
        slug, version = SEED["catalog"][0]
        self.fetch(f"/api/bundles/{slug}/versions/{version}/", BUNDLE_VERSION)


class Conditional(PixieUser):
    """GET once for the ETag (under its own name, not measured), then only If-None-Match
    with it: every answer is a 304 while the resource is unchanged."""

    abstract = True
    path = ""
    request_name = ""

    def on_start(self):
        super().on_start()
        self.etag = self.fetch(self.path, ETAG).headers.get("ETag", "")

    @task
    def conditional(self):
        self.fetch(self.path, self.request_name, expect=304, headers={"If-None-Match": self.etag})


class BundleListConditional(Conditional):
    path = "/api/bundles/"
    request_name = BUNDLE_LIST_304


class BundleVersionConditional(Conditional):
    path = "/api/bundles/{}/versions/{}/".format(*SEED["catalog"][0])
    request_name = BUNDLE_VERSION_304
