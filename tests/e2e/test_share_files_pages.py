"""What a sender sees before sharing a skill that has files, or one over a share's limits,
and an agent's prompt listing files: in Chromium, in the light and the dark theme."""

import pytest
from playwright.sync_api import expect

from agents.models import Agent
from catalog.models import WorkspaceSkill
from tests.catalog.ledger_install import install_ledger_tools
from tests.factories import add_local_contact, make_user, make_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def in_theme(tab, theme: str, path: str):
    tab.go(path)
    tab.page.evaluate(f"localStorage.setItem('theme', '{theme}')")
    tab.page.reload()
    assert tab.page.evaluate("document.documentElement.dataset.theme") == theme


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_share_page_names_files_left_behind_and_refuses_a_long_skill(
    person, tmp_path, django_capture_on_commit_callbacks, theme
):
    ann = make_user("ann", is_staff=True)
    alpha = make_workspace("alpha", owner=ann)
    make_workspace("beta", owner=make_user("bob", is_staff=True))
    add_local_contact(workspace=alpha, other_slug="beta", actor=ann)
    agent = Agent.objects.create(workspace=alpha, slug="finance", name="Finance agent")
    install_ledger_tools(tmp_path, alpha, ann, django_capture_on_commit_callbacks, agents=[agent])
    export = WorkspaceSkill.objects.get(workspace=alpha, slug="ledger-export")

    tab = person(ann)
    in_theme(tab, theme, f"/admin/catalog/workspaceskill/{export.pk}/share/")
    main = tab.page.locator("#content-main")
    expect(main).to_contain_text("@ledger-export cannot be shared: its body is")
    expect(main).to_contain_text("a share carries at most 8,000 per skill.")
    expect(main).to_contain_text("Files that stay behind")
    expect(main).to_contain_text("scripts/export.py")
    expect(tab.page.get_by_role("button", name="Share")).to_have_count(0)
    tab.shot(f"share-refused-{theme}")

    in_theme(tab, theme, f"/admin/agents/agent/{agent.pk}/prompt/")
    expect(tab.page.locator(".prompt-files")).to_contain_text(
        "scripts/export.py (376 bytes, executable)"
    )
    tab.page.locator(".prompt-files").scroll_into_view_if_needed()
    tab.shot(f"prompt-files-{theme}", full_page=False)  # the viewport
