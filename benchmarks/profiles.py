"""Where the time goes in the two paths whose targets are not met: the apply of a 50-skill
plan and a catalog API request. Wall-clock time of each part, as a Markdown section.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf .venv/bin/python benchmarks/profiles.py

Each part is timed by wrapping the function that does it (no profiler overhead), over
RUNS repetitions; the apply runs in a transaction rolled back each time.
"""

import inspect
import io
import statistics
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

import reversion.revisions  # noqa: E402
from _seeds import seed_bundle, seed_workspace  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.handlers.base import BaseHandler  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.db.backends.utils import CursorWrapper  # noqa: E402
from django.test import Client  # noqa: E402
from rest_framework import authentication, pagination, serializers  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402
from rest_framework.views import APIView  # noqa: E402

import catalog.api.views as catalog_views  # noqa: E402  (rendered_once, as the views call it)
import pixie.installer.plan_apply as plan_apply_module  # noqa: E402
from catalog.models import Plan  # noqa: E402
from pixie.core.models import Membership, Workspace  # noqa: E402
from pixie.installer.plans import plan_create  # noqa: E402

RUNS = 21
spent: dict[str, float] = defaultdict(float)


@contextmanager
def timing(owner, name: str, label: str):
    """Add the time spent in owner.name to spent[label] while inside."""
    own = name in vars(owner)
    original = inspect.getattr_static(owner, name)
    call = original.fget if isinstance(original, property) else original

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - started

    setattr(owner, name, property(timed) if isinstance(original, property) else timed)
    try:
        yield
    finally:
        if own:
            setattr(owner, name, original)
        else:
            delattr(owner, name)


def measure(action, parts) -> tuple[float, dict[str, float]]:
    """(median total ms, mean ms per part) of RUNS runs of ``action``."""
    totals = []
    spent.clear()
    with contextmanager_stack(parts):
        for _ in range(RUNS):
            started = time.perf_counter()
            action()
            totals.append(time.perf_counter() - started)
    per_part = {label: spent[label] / RUNS * 1000 for _, _, label in parts if label in spent}
    return statistics.median(totals) * 1000, per_part


@contextmanager
def contextmanager_stack(parts):
    if not parts:
        yield
        return
    (owner, name, label), *rest = parts
    with timing(owner, name, label), contextmanager_stack(rest):
        yield


def table(title: str, total: float, parts: dict[str, float]) -> None:
    print(f"{title}: **{total:.1f} ms** (median of {RUNS}).\n")
    print("| part | ms | share |")
    print("| --- | ---: | ---: |")
    for label, ms in parts.items():
        print(f"| {label} | {ms:.1f} | {ms / total:.0%} |")
    print()


def apply_profile() -> None:
    owner = get_user_model().objects.create_user("profile-owner")
    workspace = seed_workspace(owner, 10_000)
    version = seed_bundle(owner, 50)
    plan = plan_create(workspace=workspace, kind="install", bundle_version=version, actor=owner)
    Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)

    def apply():
        with transaction.atomic():
            assert plan_apply_module.plan_apply(plan_id=plan.pk) == "applied"
            transaction.set_rollback(True)

    apply()  # warm
    total, parts = measure(
        apply,
        [
            (plan_apply_module, "staleness", "staleness check (re-reads what the plan read)"),
            (plan_apply_module, "bundle_version_verify", "checking the publisher's signature"),
            (plan_apply_module, "_apply_steps", "the writes (bulk inserts and updates)"),
            (reversion.revisions, "_add_to_revision", "…of which serializing the history"),
            (reversion.revisions, "_save_revision", "saving the history (one revision)"),
            (CursorWrapper, "_execute", "SQL round trips (all queries, in the parts above)"),
        ],
    )
    table("Apply of a 50-skill install into a 10,000-skill workspace", total, parts)


def api_profile() -> None:
    call_command("demo", verbosity=0, stdout=io.StringIO())
    user = get_user_model().objects.create_user("profile-reader")
    # A reader of the demo workspace: a login of no workspace sees no catalog at all.
    Membership.objects.create(workspace=Workspace.objects.get(slug="acme"), user=user,
                              role=Membership.Role.MEMBER)  # fmt: skip
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    for url in ("/livez", "/api/bundles/", "/api/bundles/accounts-receivable/versions/2.2.0/"):
        assert client.get(url).status_code == 200  # warm
        total, parts = measure(
            lambda url=url: client.get(url),
            [
                (BaseHandler, "get_response", "Django: middleware, URL, view (the whole request)"),
                (APIView, "dispatch", "DRF view, from the request's wrapping to the response"),
                (authentication.TokenAuthentication, "authenticate", "…token authentication"),
                (pagination.PageNumberPagination, "paginate_queryset", "…page and count query"),
                (catalog_views, "rendered_once", "…the response, rendered or as rendered before"),
                (serializers.Serializer, "data", "…serializing the response"),
                (serializers.ListSerializer, "data", "…serializing the page"),
                (CursorWrapper, "_execute", "…SQL round trips (all queries)"),
            ],
        )
        table(f"`GET {url}` in-process (Django's test client)", total, parts)


def main():
    print("## Where the time goes: apply and the catalog API\n")
    print("Wall-clock time of each part, measured by wrapping the function that does it.\n")
    apply_profile()
    api_profile()


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
