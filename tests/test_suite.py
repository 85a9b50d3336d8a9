"""The suite's own rules for running in parallel (tests/suite.py)."""

import pytest

from tests.suite import examples, redis_url_for_worker


@pytest.mark.parametrize(
    ("url", "worker", "expected"),
    [
        ("redis://127.0.0.1:6379/0", 0, "redis://127.0.0.1:6379/0"),
        ("redis://127.0.0.1:6379/0", 1, "redis://127.0.0.1:6379/1"),
        ("redis://127.0.0.1:6379", 2, "redis://127.0.0.1:6379/2"),
        (
            "redis://:pw@cache:6380/3?ssl_cert_reqs=none",
            1,
            "redis://:pw@cache:6380/4?ssl_cert_reqs=none",
        ),
        ("redis://127.0.0.1:6379/15", 1, "redis://127.0.0.1:6379/0"),  # Redis has 16
    ],
)
def test_each_worker_has_a_redis_database_of_its_own(url, worker, expected):
    assert redis_url_for_worker(url, worker) == expected


def test_two_workers_never_share_a_redis_database():
    urls = {redis_url_for_worker("redis://127.0.0.1:6379/0", n) for n in range(8)}
    assert len(urls) == 8


def test_the_quick_run_gives_a_property_test_a_tenth_of_its_examples():
    # This run is not --slow unless CI or a person asked for it.
    from tests import suite

    expected = 10_000 if suite.full_run() else 1_000
    assert examples(10_000) == expected
    assert examples(100) == (100 if suite.full_run() else 20)


class FakeItem:
    """What touches_services reads of a collected test."""

    def __init__(self, fixtures=(), markers=()):
        self.fixturenames = ["django_db_blocker", "settings", *fixtures]  # pytest-django's own
        self.markers = set(markers)

    def get_closest_marker(self, name):
        return name if name in self.markers else None


@pytest.mark.parametrize(
    ("item", "touches"),
    [
        (FakeItem(["db"]), True),
        (FakeItem(["transactional_db"]), True),
        (FakeItem(["live_server"]), True),
        (FakeItem(["postgres_only"]), True),  # a server of its own on PostgreSQL
        (FakeItem(["redis_url"]), True),
        (FakeItem(markers=["django_db"]), True),
        (FakeItem(markers=["slow"]), True),  # the soaks start stacks of their own
        (FakeItem(["tmp_path", "monkeypatch"]), False),
        (FakeItem(), False),
    ],
)
def test_the_postgresql_pass_keeps_every_test_that_touches_a_service(item, touches):
    from tests.suite import touches_services

    assert touches_services(item) is touches
