import pytest
from django.core.management import call_command

from pixie.celery import app as celery_app
from tests import suite


def pytest_addoption(parser):
    suite.add_options(parser)


def pytest_collection_modifyitems(config, items):
    suite.deselect_slow(config, items)
    suite.deselect_pure(config, items)
    suite.heaviest_first(items)


def pytest_terminal_summary(terminalreporter):
    suite.report_over_budget(terminalreporter)


@pytest.fixture(autouse=True)
def tasks_run_eagerly():
    """Tasks run in-process unless a test starts a real worker and says otherwise."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_superuser(
        username="olivia", password="operator-pass-1", email="olivia@example.com"
    )


@pytest.fixture
def operator_client(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture(autouse=True)
def outbound_dispatch_to_public_addresses_only(settings):
    """As in production: contacts' inboxes on loopback or private addresses are
    refused. A test that delivers to a server it started on loopback says so with
    the ``loopback_inboxes`` fixture."""
    settings.PIXIE_DISPATCH_ALLOW_PRIVATE = False


@pytest.fixture
def loopback_inboxes(settings):
    """Two servers on one machine, as a developer runs them (DEBUG's default)."""
    settings.PIXIE_DISPATCH_ALLOW_PRIVATE = True


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    """Each test counts the inbox's rate limits from zero (in Redis too: a key prefix
    of its own, whose counters expire by themselves)."""
    import uuid

    from pixie.delivery.views import LIMITED

    ratelimit = {**settings.CACHES["ratelimit"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    settings.CACHES = {**settings.CACHES, "ratelimit": ratelimit}
    LIMITED.clear()  # what this process learnt of the counters it no longer reads


@pytest.fixture(scope="session")
def worker_data_dir(tmp_path_factory):
    """This worker's DATA_DIR: uploads waiting for their load, and the like (never data/)."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory):
    """A migrated SQLite database to copy for a server a test starts (tests/migrated.py):
    one for the whole run, in the folder the run's workers share."""
    from tests.migrated import migrated_once

    return migrated_once(suite.run_folder(tmp_path_factory) / "migrated")


@pytest.fixture(scope="session", autouse=True)
def migrate_early(request, tmp_path_factory):
    """If a test of this run will need the migrated SQLite database, start making it now,
    while the others run."""
    if any("migrated_sqlite" in item.fixturenames for item in request.session.items):
        from tests.migrated import migrate_in_background

        migrate_in_background(suite.run_folder(tmp_path_factory) / "migrated")


@pytest.fixture(autouse=True)
def data_dir_of_this_worker(settings, worker_data_dir):
    settings.DATA_DIR = worker_data_dir


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    # PBKDF2 costs ~0.2 s a user; tests that make dozens of users need not pay it (nor
    # the rows a module makes once, tests/module_rows.py).
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


def pytest_configure(config):
    import os

    from tests.services import defaults_pass

    suite.configure(config)
    if defaults_pass() and os.environ.get("DATABASE_URL"):
        raise pytest.UsageError(
            "PIXIE_TEST_DEFAULTS=1 is for the run without DATABASE_URL (it lets tests that "
            "need PostgreSQL skip under CI); unset one of them"
        )


@pytest.fixture
def postgres_only(django_db_blocker):
    """Real concurrency needs PostgreSQL; outside CI (or on CI's defaults pass) a SQLite
    run skips, in CI it fails."""
    from django.db import connection

    from tests.services import service_missing

    if connection.vendor != "postgresql":
        service_missing("needs PostgreSQL (set DATABASE_URL); CI runs it there")


@pytest.fixture
def redis_url(request):
    """REDIS_URL's server, in a database of this xdist worker's own."""
    import os

    import redis

    from tests.services import service_missing

    shared = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    url = suite.redis_url_for_worker(shared, suite.worker_number(request.config))
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError:
        service_missing(f"needs Redis at {url}")
    return url


@pytest.fixture
def queue(redis_url):
    """A queue of this test's own on the real broker, and tasks sent for real."""
    import uuid

    name = f"pixie-test-{uuid.uuid4().hex[:8]}"
    keys = ("broker_url", "task_always_eager", "task_default_queue")
    previous = {key: celery_app.conf[key] for key in keys}
    celery_app.conf.update(broker_url=redis_url, task_always_eager=False, task_default_queue=name)
    _forget_broker_connections()
    yield name
    celery_app.conf.update(previous)
    _forget_broker_connections()


def _forget_broker_connections():
    """Drop pooled connections so the next send uses the broker configured now
    (what Celery itself does after a fork)."""
    celery_app._pool = None
    if "amqp" in celery_app.__dict__:
        celery_app.amqp._producer_pool = None
        # An in-process worker narrows the app's queues to its own; forget that too.
        celery_app.amqp.__dict__.pop("queues", None)


# The demo workspace's people and the demo catalog, as the plans and agents tests use them.


@pytest.fixture
def demo_catalog(db):
    from catalog.models import BundleVersion

    for folder in ("accounts-receivable-2.1.0", "accounts-receivable-2.2.0"):
        call_command("bundle_load", f"catalog/demo/{folder}", "--publish")
    return {v.version: v for v in BundleVersion.objects.filter(bundle__slug="accounts-receivable")}


@pytest.fixture
def owner(db):
    from tests.factories import make_user

    return make_user("owen")


@pytest.fixture
def member(db):
    from tests.factories import make_user

    return make_user("mia")


@pytest.fixture
def acme(owner, member):
    from tests.factories import make_workspace

    return make_workspace("acme", owner=owner, members=[member])


@pytest.fixture
def agents(acme):
    from agents.models import Agent

    return [
        Agent.objects.create(workspace=acme, slug="collections", name="Collections agent"),
        Agent.objects.create(workspace=acme, slug="front-desk", name="Front desk agent"),
    ]


@pytest.fixture(autouse=True)
def every_plan_step_has_its_type():
    """Every plan any test makes (installs, upgrades, forks, re-slugs, repoints, real
    skills) is checked against the step types the API's schema describes
    (pixie.installer.steps): a key the planner adds without its type fails the test."""
    from django.db.models.signals import post_save

    from catalog.models import Plan
    from pixie.installer.steps import step_problems

    def check(sender, instance, **kwargs):
        problems = [p for step in instance.steps or [] for p in step_problems(step)]
        assert not problems, f"plan #{instance.pk}'s steps: " + "; ".join(problems[:10])

    post_save.connect(check, sender=Plan, dispatch_uid="every_plan_step_has_its_type")
    yield
    post_save.disconnect(sender=Plan, dispatch_uid="every_plan_step_has_its_type")
