"""Two workers checking one source at one moment make one draft (PostgreSQL's row locks:
the second finds the source taken and leaves it to the first)."""

import threading

import pytest
from django.db import connections

from catalog.models import BundleVersion
from pixie.sources.models import Source
from pixie.sources.services import SourceBusy, source_check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgres_only")]


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


def test_two_checks_of_one_source_at_once_make_one_draft(upstream):
    upstream.skill("invoice-chase", "Chase the invoice politely.")
    upstream.commit("A skill")
    upstream.push()
    source = Source.objects.create(
        url=upstream.url, ref="main", metadata={"slug": "acme-skills", "publisher": "acme"}
    )
    barrier = threading.Barrier(2)
    outcomes, lock = [], threading.Lock()

    def worker():
        try:
            barrier.wait(timeout=30)
            result = source_check(Source.objects.get(pk=source.pk)).last_result
        except SourceBusy:
            result = "busy"
        except Exception as exc:  # noqa: BLE001 - the test reports any other error
            result = f"error: {exc!r}"
        finally:
            connections.close_all()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert sorted(outcomes) in (["busy", "draft"], ["draft", "unchanged"]), outcomes
    assert BundleVersion.objects.count() == 1
    assert Source.objects.get(pk=source.pk).waiting_draft is not None


def test_a_change_while_a_check_holds_the_source_is_refused_at_once(upstream, operator):
    """A check holds the source's row for as long as it fetches (up to two minutes): an
    operator's save meanwhile is refused in words, not left waiting, and changes nothing."""
    from django.db import transaction
    from django.test import Client
    from django.urls import reverse

    source = Source.objects.create(url=upstream.url, ref="main", metadata={"slug": "acme"})
    held, release = threading.Event(), threading.Event()

    def checking():
        try:
            with transaction.atomic():
                Source.objects.select_for_update().get(pk=source.pk)
                held.set()
                release.wait(timeout=60)
        finally:
            connections.close_all()

    holder = threading.Thread(target=checking)
    holder.start()
    try:
        assert held.wait(timeout=30)
        client = Client()
        client.force_login(operator)
        change = reverse("admin:sources_source_change", args=[source.pk])
        response = client.post(
            change,
            {"kind": "git", "url": upstream.url, "ref": "develop", "folder": "", "skills": "",
             "metadata": 'slug = "acme"', "credential_variable": "", "interval": "01:00:00",
             "bundle": ""},  # fmt: skip
            follow=True,
        )
        paused = client.post(
            reverse("admin:sources_source_pause", args=[source.pk]), {"paused": "1"}, follow=True
        )
    finally:
        release.set()
        holder.join(timeout=60)

    assert "is being checked right now; try again" in response.content.decode()
    assert "is being checked right now; try again" in paused.content.decode()
    source.refresh_from_db()
    assert (source.ref, source.paused) == ("main", False)
