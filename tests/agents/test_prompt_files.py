"""An agent's composed prompt lists each skill's supporting files after its body."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from agents.models import AgentSkill
from agents.selectors import composed_prompt
from tests.catalog.ledger_install import install_ledger_tools

pytestmark = pytest.mark.django_db

EXPORT_FILES_LINE = (
    "Files of @ledger-export (not inlined): assets/logo.png (75 bytes), "
    "references/statement-fields.md (322 bytes), scripts/export.py (376 bytes, executable)"
)


@pytest.fixture
def ledger(tmp_path, acme, owner, agents, django_capture_on_commit_callbacks):
    return install_ledger_tools(
        tmp_path, acme, owner, django_capture_on_commit_callbacks, agents=agents[:1]
    )


def test_the_prompt_lists_the_files_after_the_skill_body(
    ledger, owner, agents, django_assert_num_queries
):
    agent = agents[0]
    with django_assert_num_queries(3):  # attachments, tools, every skill's files
        prompt = composed_prompt(agent)
    export = next(part for part in prompt.parts if part.slug == "ledger-export")
    lookup = next(part for part in prompt.parts if part.slug == "ledger-lookup")
    assert export.files_line == EXPORT_FILES_LINE
    assert lookup.files == [] and lookup.files_line == ""
    assert f"{ledger['ledger-export'].head.body}\n\n{EXPORT_FILES_LINE}" in prompt.text
    assert "Files of @ledger-lookup" not in prompt.text
    assert "\x89PNG" not in prompt.text  # listed, never inlined

    api = APIClient()
    api.force_authenticate(owner)
    body = api.get("/api/workspaces/acme/agents/collections/prompt/").json()
    by_slug = {part["slug"]: part for part in body["parts"]}
    assert by_slug["ledger-export"]["files"] == [
        {"path": "assets/logo.png", "size": 75, "executable": False},
        {"path": "references/statement-fields.md", "size": 322, "executable": False},
        {"path": "scripts/export.py", "size": 376, "executable": True},
    ]
    assert by_slug["ledger-export"]["files_line"] == EXPORT_FILES_LINE
    assert by_slug["ledger-lookup"]["files"] == []
    assert body["text"] == prompt.text

    owner.is_staff = True
    owner.save()
    browser = Client()
    browser.force_login(owner)
    page = browser.get(reverse("admin:agents_agent_prompt", args=[agent.pk])).content.decode()
    assert "Files of @ledger-export (not inlined):" in page
    assert "<code>scripts/export.py</code> (376 bytes, executable)" in page
    assert "<code>assets/logo.png</code> (75 bytes)" in page
    assert "Files of @ledger-lookup" not in page


def test_a_pinned_revision_lists_its_own_files_and_an_override_keeps_them(ledger, owner, agents):
    from agents.services import agent_skill_override

    attachment = AgentSkill.objects.get(agent=agents[0], skill__slug="ledger-export")
    agent_skill_override(attachment=attachment, body="Our own export steps.", actor=owner)
    export = next(p for p in composed_prompt(agents[0]).parts if p.slug == "ledger-export")
    assert export.body == "Our own export steps."
    assert export.files_line == EXPORT_FILES_LINE
