import pytest

from pixie.celery import app as celery_app


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
def fast_password_hashing(settings):
    # PBKDF2 costs ~0.2 s a user; tests that make dozens of users need not pay it.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
