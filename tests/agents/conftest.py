import pytest
from django.core.management import call_command

from agents.models import Agent
from catalog.models import BundleVersion
from tests.factories import make_user, make_workspace


@pytest.fixture
def demo_catalog(db):
    for folder in ("accounts-receivable-2.1.0", "accounts-receivable-2.2.0"):
        call_command("bundle_load", f"catalog/demo/{folder}", "--publish")
    return {v.version: v for v in BundleVersion.objects.filter(bundle__slug="accounts-receivable")}


@pytest.fixture
def owner(db):
    return make_user("owen")


@pytest.fixture
def member(db):
    return make_user("mia")


@pytest.fixture
def acme(owner, member):
    return make_workspace("acme", owner=owner, members=[member])


@pytest.fixture
def agents(acme):
    return [
        Agent.objects.create(workspace=acme, slug="collections", name="Collections agent"),
        Agent.objects.create(workspace=acme, slug="front-desk", name="Front desk agent"),
    ]
