"""What a page says after an action matches what happened: a save that stored nothing is a
warning, not a green success; an approval says whether the plan is applied already."""

import html
import re

import pytest
from django.contrib import admin
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.test import RequestFactory
from django.urls import reverse

from agents.models import Agent
from catalog.models import Plan, WorkspaceSkill
from pixie.installer.plans import plan_create
from pixie.sharing.models import Message
from tests.clients import admin_for
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


def notices(answer) -> list[tuple[str, str]]:
    """The messages on the page a person lands on, each as (level, words)."""
    found = re.findall(r'<ul class="messagelist">(.*?)</ul>', answer.content.decode(), re.S)
    return [
        (level, " ".join(html.unescape(words).split()))
        for block in found
        for level, words in re.findall(r'<li class="([^"]*)">(.*?)</li>', block, re.S)
    ]


@pytest.fixture
def installed(acme, owner, demo_catalog, django_capture_on_commit_callbacks):
    return install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)


def test_saving_a_skill_unchanged_warns_that_nothing_was_saved(owner, installed):
    skill = WorkspaceSkill.objects.select_related("head").get(slug="invoice-chase")
    head = skill.head
    form = {"name": head.name, "short_description": head.short_description, "body": head.body}
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    answer = admin_for(owner).post(edit, form, follow=True)
    assert notices(answer) == [
        ("warning", "@invoice-chase already reads like this: nothing was saved.")
    ]
    answer = admin_for(owner).post(edit, {**form, "body": head.body + "\n\nBe kind."}, follow=True)
    assert notices(answer) == [("success", "@invoice-chase saved as revision 2.")]


def test_restoring_the_text_a_skill_holds_warns_that_nothing_was_restored(owner, installed):
    skill = WorkspaceSkill.objects.get(slug="invoice-chase")
    restore = reverse("admin:catalog_workspaceskill_restore", args=[skill.pk, 1])
    answer = admin_for(owner).post(restore, follow=True)
    assert notices(answer) == [
        ("warning", "@invoice-chase already holds revision 1's text: nothing was restored.")
    ]


def test_saving_the_approval_policy_unchanged_warns_that_nothing_was_saved(acme, owner):
    policy = reverse("admin:pixie_workspace_policy", args=[acme.pk])
    form = {
        "second_owner": "off", "expiry": "off", "expiry_days": "14", "findings": "off",
        "findings_severity": "warning",
    }  # fmt: skip
    answer = admin_for(owner).post(policy, form, follow=True)
    assert notices(answer) == [
        ("warning", "The approval policy of Acme is unchanged: nothing was saved.")
    ]
    answer = admin_for(owner).post(policy, {**form, "expiry": "advisory"}, follow=True)
    assert notices(answer) == [("success", "The approval policy of Acme is saved.")]


def test_saving_an_agent_unchanged_warns_that_nothing_was_saved(acme, owner):
    agent = Agent.objects.create(
        workspace=acme, slug="collections", name="Collections agent", system_prompt="Be polite."
    )
    edit = reverse("admin:agents_agent_edit", args=[agent.pk])
    form = {"name": agent.name, "system_prompt": agent.system_prompt}
    answer = admin_for(owner).post(edit, form, follow=True)
    assert notices(answer) == [
        ("warning", "Collections agent already reads like this: nothing was saved.")
    ]
    answer = admin_for(owner).post(edit, {**form, "name": "Collections"}, follow=True)
    assert notices(answer) == [("success", "Collections is saved.")]


@pytest.mark.django_db(transaction=True)
def test_approving_says_applied_when_the_page_shows_applied(acme, owner, demo_catalog):
    """Tasks run in-process, as in ./scripts/dev: the plan is applied as the approval
    commits, before the plan's page is drawn again."""
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    answer = admin_for(owner).post(
        reverse("admin:catalog_plan_approve", args=[plan.pk]), follow=True
    )
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED
    assert notices(answer) == [("success", f"Plan #{plan.pk} approved and applied.")]
    assert "applying it now" not in answer.content.decode()


def test_approving_says_applying_while_a_worker_has_yet_to_apply_it(acme, owner, demo_catalog):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    # The approval queues the task as it commits; no worker has run it when the page is drawn.
    answer = admin_for(owner).post(
        reverse("admin:catalog_plan_approve", args=[plan.pk]), follow=True
    )
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPROVED
    assert notices(answer) == [("success", f"Plan #{plan.pk} approved; applying it now.")]


def test_an_inbox_action_that_touched_no_message_warns_so(acme, owner):
    request = RequestFactory().post("/admin/pixie/message/")
    request.user, request.session = owner, {}
    request._messages = FallbackStorage(request)
    message_admin = admin.site._registry[Message]
    none = Message.objects.none()
    message_admin.retry_dispatch(request, none)
    message_admin.keep_received(request, none)
    said = [(m.level_tag, m.message) for m in get_messages(request)]
    assert said == [
        ("warning", "None of the selected messages had failed: nothing was tried again."),
        (
            "warning",
            "None of the selected messages was a received one waiting for review: nothing "
            "was kept.",
        ),
    ]
