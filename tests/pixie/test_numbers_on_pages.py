"""One rule for numbers on the admin's pages: a count or a size of 1,000 or more is written
with a comma between its thousands (floatformat:"g" in a template, f"{n:,}" in Python), as
the bundle and skill pages always wrote them."""

import types

import pytest
from django.contrib import admin
from django.template.loader import render_to_string
from django.urls import reverse

from agents.models import Agent
from catalog.models import BundleVersion
from tests.clients import admin_for

pytestmark = pytest.mark.django_db


def test_an_agents_prompt_counts_its_tokens_with_a_comma(acme, owner):
    agent = Agent.objects.create(
        workspace=acme, slug="collections", name="Collections", system_prompt="Be polite. " * 500
    )
    page = admin_for(owner).get(reverse("admin:agents_agent_prompt", args=[agent.pk]))
    assert "Contents: about 1,375 tokens" in page.content.decode()
    assert "System prompt <span class=\"quiet\">about 1,375 tokens</span>" in page.content.decode()


def test_a_changed_files_size_is_written_with_a_comma():
    files = [
        {
            "change": "changed", "path": "scripts/export.py", "content": "binary", "mode": "",
            "old": {"size": 12345, "sha256": "a" * 64},
            "new": {"size": 1048576, "sha256": "b" * 64},
        }
    ]  # fmt: skip
    drawn = render_to_string("admin/catalog/plan/_files.html", {"files": files})
    assert "12,345 bytes" in drawn and "1,048,576 bytes" in drawn


def test_the_bundle_versions_list_counts_skills_with_a_comma():
    version_admin = admin.site._registry[BundleVersion]
    assert version_admin.skill_count(types.SimpleNamespace(skill_count=1234)) == "1,234"
    assert version_admin.skill_count(types.SimpleNamespace(skill_count=5)) == "5"
