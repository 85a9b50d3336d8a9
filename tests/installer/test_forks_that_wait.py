"""A plan that must not leave a local edit as it is by default (the plan Pixie prepares
after a yank, a rollback) waits for the owner's choice on each fork, the recommended one
marked: approving is refused until then, nothing changes, and choosing computes the plan
again to be read. The home says the installed version was yanked, to every reader, and
links the waiting plan instead of offering another."""

import pytest
from django.urls import reverse

from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_edit
from pixie.core.errors import ValidationFailed
from pixie.installer.plans import plan_approve, plan_create, plan_rollback
from tests.clients import api_for
from tests.installer.flow import approve_and_apply, install
from tests.installer.test_plan_pages import browser
from tests.pixie.test_notifications import yank

pytestmark = pytest.mark.django_db

OWN_LINE = "Always copy the account manager."


def edit_chase(workspace, owner) -> WorkspaceSkill:
    chase = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\n" + OWN_LINE)
    return chase


@pytest.fixture
def yanked(acme, owner, member, demo_catalog, operator_client, django_capture_on_commit_callbacks):
    """2.1.0 installed in Acme, @invoice-chase edited here, then 2.1.0 yanked: Pixie's
    upgrade to 2.2.0 waits."""
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture)
    edit_chase(acme, owner)
    yank(operator_client, demo_catalog["2.1.0"], capture, reason="Charges twice")
    return Plan.objects.get(workspace=acme, status=Plan.State.PROPOSED)


def test_after_a_yank_the_edited_skill_waits_for_a_choice_and_approving_is_refused(
    yanked, acme, owner
):
    (fork,) = [s for s in yanked.steps if s["type"] == "skill.fork"]
    assert (fork["slug"], fork["decided"]) == ("invoice-chase", False)
    assert fork["recommended"] == ("merge" if "merge" in fork["choices"] else "take")
    assert "the plan waits for your choice" in fork["reason"]
    assert "waits for your choice for 1 fork" in yanked.summary
    answer = api_for(owner).post(f"/api/workspaces/acme/plans/{yanked.pk}/approve/")
    assert answer.status_code == 400 and answer.json()["code"] == "fork_undecided"
    assert answer.json()["detail"].startswith(
        f"Plan #{yanked.pk} waits for your choice for @invoice-chase (recommended: "
    )
    yanked.refresh_from_db()
    assert yanked.status == Plan.State.PROPOSED and yanked.decided_by is None


def test_the_plan_page_marks_the_recommendation_and_approve_waits_for_the_choice(
    yanked, owner, django_capture_on_commit_callbacks
):
    client = browser(owner)
    review = reverse("admin:catalog_plan_review", args=[yanked.pk])
    page = client.get(review).content.decode()
    assert "Your choice for @invoice-chase (part of the approval below): needed before" in page
    assert "<strong>(recommended)</strong>" in page
    assert 'value="Approve the whole plan" disabled data-blocked="1"' in page
    assert "Approving waits for your choice for @invoice-chase" in page
    assert 'name="fork-invoice-chase" value="keep" data-shown="" >' in page  # none checked
    # Approving without a choice (a page whose script did not run) is refused in words.
    approve = reverse("admin:catalog_plan_approve", args=[yanked.pk])
    refused = client.post(approve, follow=True)
    assert any("waits for your choice" in str(m) for m in refused.context["messages"])
    assert Plan.objects.get(pk=yanked.pk).status == Plan.State.PROPOSED
    # Choosing computes it again, decided; that one is approved and applied.
    chosen = client.post(approve, {"fork-invoice-chase": "take"})
    again = Plan.objects.get(status=Plan.State.PROPOSED)
    assert chosen["Location"] == reverse("admin:catalog_plan_review", args=[again.pk])
    (fork,) = [s for s in again.steps if s["type"] == "skill.fork"]
    assert (fork["choice"], fork["decided"]) == ("take", True)
    assert again.options["recommend"] == "merge"
    approve_and_apply(again, owner, django_capture_on_commit_callbacks)
    chase = WorkspaceSkill.objects.get(workspace=again.workspace, slug="invoice-chase")
    assert OWN_LINE not in chase.head.body


def test_the_home_says_yanked_to_every_reader_and_links_the_waiting_plan(
    yanked, acme, owner, member
):
    home = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    waiting = reverse("admin:catalog_plan_review", args=[yanked.pk])
    for person, words in ((owner, "your approval"), (member, "an owner's approval")):
        page = browser(person).get(home).content.decode()
        assert "<strong>Yanked:</strong> Charges twice" in page
        assert f'<a href="{waiting}">Plan #{yanked.pk} waits for {words}</a>' in page
        assert "Plan the upgrade to 2.2.0" not in page


def test_an_upgrade_an_owner_asks_for_still_keeps_a_fork_unless_they_choose(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    edit_chase(acme, owner)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    (fork,) = [s for s in plan.steps if s["type"] == "skill.fork"]
    assert (fork["choice"], fork["decided"], fork["recommended"]) == ("keep", True, None)
    plan_approve(plan=plan, actor=owner)


def test_a_rollback_waits_for_a_choice_on_a_skill_edited_since_restoring_recommended(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture)
    upgrade = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    approve_and_apply(upgrade, owner, capture)
    edit_chase(acme, owner)
    rollback = plan_rollback(
        workspace=acme, bundle="accounts-receivable", generation=1, actor=owner
    )
    (fork,) = [s for s in rollback.steps if s["type"] == "skill.fork"]
    assert (fork["decided"], fork["recommended"]) == (False, "take")
    with pytest.raises(ValidationFailed, match="@invoice-chase \\(recommended: take\\)"):
        plan_approve(plan=rollback, actor=owner)
    # The skills nobody edited since return to generation 1 with no choice asked.
    assert all(s.get("decided", True) for s in rollback.steps if s.get("slug") != "invoice-chase")
    chosen = plan_rollback(
        workspace=acme, bundle="accounts-receivable", generation=1, actor=owner,
        fork_choices={"invoice-chase": "take"},
    )  # fmt: skip
    approve_and_apply(chosen, owner, capture)
    assert Installation.objects.get().bundle_version == demo_catalog["2.1.0"]
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    assert OWN_LINE not in chase.head.body


def test_a_rollback_page_says_what_each_column_is_and_that_pixie_made_the_merge(
    acme, owner, demo_catalog, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture)
    edit_chase(acme, owner)
    upgrade = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner,
        fork_choices={"invoice-chase": "merge"},
    )  # fmt: skip
    approve_and_apply(upgrade, owner, capture)
    rollback = plan_rollback(
        workspace=acme, bundle="accounts-receivable", generation=1, actor=owner
    )
    page = browser(owner).get(reverse("admin:catalog_plan_review", args=[rollback.pk]))
    page = page.content.decode()
    assert "Now, r3 (a merge Pixie made)" in page and "Incoming (2.1.0)" in page
    assert "Restore generation 1's text (the current one stays in history)" in page
    assert "Keep the current text" in page and "text you wrote" not in page


def test_a_waiting_repoint_does_not_stand_in_for_the_upgrade_on_the_home(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    """Only a plan that changes the installation takes the place of Plan the upgrade: a
    repoint waiting moves pins, and the newer version is still offered."""
    from pixie.installer.repoint import repoint_create

    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], owner, capture, agents)
    edit_chase(acme, owner)  # the pinned agents are now behind
    # A repoint of that installation's pins, as its page and an upgrade's page ask for.
    repoint = repoint_create(workspace=acme, actor=owner, installation=Installation.objects.get())
    page = browser(owner).get(reverse("admin:pixie_workspace_dashboard", args=[acme.pk]))
    page = page.content.decode()
    assert "Plan the upgrade to 2.2.0" in page
    assert f"Plan #{repoint.pk} waits" not in page
