"""The plan pages in the admin, as an owner, a member and a stranger use them."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from catalog.models import Installation, Plan
from catalog.services import bundle_version_publish
from catalog.services.workspace_skills import skill_edit
from pixie.installer.plans import plan_create
from tests.factories import make_bundle_version, make_skill_version, make_user, make_workspace
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


def browser(user, **kwargs):
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    client = Client(**kwargs)
    client.force_login(user)
    return client


def review_url(plan):
    return reverse("admin:catalog_plan_review", args=[plan.pk])


def test_owner_asks_reads_and_approves_a_plan_in_the_admin(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    client = browser(owner)
    response = client.post(
        reverse("admin:catalog_plan_ask"),
        {
            "workspace": acme.pk,
            "kind": "install",
            "bundle_version": demo_catalog["2.1.0"].pk,
            "agents": [a.pk for a in agents],
        },
    )
    plan = Plan.objects.get()
    assert response.status_code == 302 and response.url == review_url(plan)
    page = client.get(review_url(plan)).content.decode()
    assert "Expands reach: adds 1 host and 1 credential" in page
    expected = [
        "@invoice-chase",
        "ledger.example.com:443",
        "LEDGER_API_TOKEN",
        "not confirmed",
        "Taking a payment needs a person",
        "Collections agent",
        "Approve the whole plan",
    ]
    for text in expected:
        assert text in page, text
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:catalog_plan_approve", args=[plan.pk]), follow=True)
    assert "approved; applying it now" in response.content.decode()
    status = client.get(reverse("admin:catalog_plan_status", args=[plan.pk])).json()
    assert status == {
        "status": "applied",
        "label": "Applied",
        "error": "",
        "done": True,
        "progress": None,
    }
    assert Installation.objects.get().bundle_version == demo_catalog["2.1.0"]


@pytest.fixture
def forked_upgrade(acme, owner, demo_catalog, django_capture_on_commit_callbacks):
    """2.1.0 installed, @invoice-chase edited here, and the upgrade to 2.2.0 asked for."""
    from catalog.models import WorkspaceSkill

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    chase = WorkspaceSkill.objects.get(slug="invoice-chase")
    skill_edit(skill=chase, actor=owner, body=chase.head.body + "\n\nCopy the account manager.")
    return plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )


def test_the_upgrade_page_shows_the_fork_and_its_three_choices(forked_upgrade, owner):
    plan = forked_upgrade
    client = browser(owner)
    page = client.get(review_url(plan)).content.decode()
    expected = [
        "Keep my version",
        "Take the new version (mine stays in history)",
        "What merging does to the text here",
        "Base (2.1.0)",
        "Now, r2 (an edit here)",  # each column says what it is: the skill now, and how
        "Incoming (2.2.0)",
        "keeps 1 fork",
        "Base (2.1.0), now, r2 (an edit here) and incoming (2.2.0), aligned",
    ]
    for text in expected:
        assert text in page, text
    # The owner's own line sits in the aligned table as a change of theirs.
    assert re.search(r'<tr class="yours">.*?Copy the account manager\.', page)
    response = client.post(
        reverse("admin:catalog_plan_choices", args=[plan.pk]), {"fork-invoice-chase": "merge"}
    )
    newer = Plan.objects.latest("pk")
    assert response.url == review_url(newer)
    assert next(s for s in newer.steps if s["type"] == "skill.fork")["choice"] == "merge"
    plan.refresh_from_db()
    assert plan.status == Plan.State.SUPERSEDED


def test_a_member_reads_the_plan_without_buttons(acme, owner, member, demo_catalog):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    client = browser(member)
    page = client.get(review_url(plan)).content.decode()
    assert "@invoice-chase" in page
    assert "Approve the whole plan" not in page
    assert "Only an owner of Acme can approve" in page
    response = client.post(reverse("admin:catalog_plan_approve", args=[plan.pk]), follow=True)
    assert "Only an owner of Acme can do this" in response.content.decode()
    plan.refresh_from_db()
    assert plan.status == Plan.State.PROPOSED


def test_a_user_of_another_workspace_gets_404(acme, owner, demo_catalog):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    stranger = make_user("stranger")
    make_workspace("globex", owner=stranger)
    client = browser(stranger)
    for name in ("review", "status"):
        assert client.get(reverse(f"admin:catalog_plan_{name}", args=[plan.pk])).status_code == 404
    assert client.post(reverse("admin:catalog_plan_approve", args=[plan.pk])).status_code == 404
    plan.refresh_from_db()
    assert plan.status == Plan.State.PROPOSED


def test_a_plan_address_that_is_no_number_is_not_found_not_a_server_error(owner):
    client = browser(owner)
    assert client.get("/admin/catalog/plan/1/history/2/widgets.css/change/").status_code == 404


def test_approving_without_a_csrf_token_is_refused(acme, owner, demo_catalog):
    plan = plan_create(
        workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"], actor=owner
    )
    client = browser(owner, enforce_csrf_checks=True)
    assert client.post(reverse("admin:catalog_plan_approve", args=[plan.pk])).status_code == 403
    plan.refresh_from_db()
    assert plan.status == Plan.State.PROPOSED


@pytest.mark.parametrize("size", [5, 50])
def test_the_plan_page_runs_bounded_queries_whatever_the_bundle_size(
    size, acme, owner, django_assert_max_num_queries
):
    skills = [make_skill_version(f"step-{i}", body="Use @query-ledger.") for i in range(size)]
    bundle_version = make_bundle_version("big", skills=skills)
    bundle_version_publish(bundle_version=bundle_version, actor=owner)
    plan = plan_create(workspace=acme, kind="install", bundle_version=bundle_version, actor=owner)
    client = browser(owner)
    with django_assert_max_num_queries(12):
        page = client.get(review_url(plan))
    assert page.content.decode().count('tag add">create') == size


def test_owner_confirms_a_credential_in_the_admin_and_a_member_cannot(
    acme, owner, member, demo_catalog, django_capture_on_commit_callbacks
):
    from egress.models import CredentialRequirement

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    requirement = CredentialRequirement.objects.get()
    url = reverse("admin:egress_credentialrequirement_changelist")
    data = {"action": "confirm_supplied", "_selected_action": [requirement.pk]}
    # The action is not offered to a member; posted anyway, it does nothing.
    page = browser(member).post(url, data, follow=True).content.decode()
    assert "confirmed as supplied" not in page
    assert not CredentialRequirement.objects.get().confirmed
    page = browser(owner).post(url, data, follow=True).content.decode()
    assert "LEDGER_API_TOKEN confirmed as supplied." in page
    assert CredentialRequirement.objects.get().confirmed_by == owner


def test_the_plan_page_links_what_it_names_and_tells_its_story(
    acme, owner, member, agents, demo_catalog, django_capture_on_commit_callbacks
):
    """Before approval a skill the plan would create is readable on the plan's own page;
    the timeline says who did what when; once applied the page speaks of what it did."""
    plan = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                       actor=owner, agents=agents)  # fmt: skip
    client = browser(member)
    page = client.get(review_url(plan)).content.decode()
    skill_page = reverse("admin:catalog_plan_skill", args=[plan.pk, "invoice-chase"])
    assert f'href="{skill_page}"' in page
    agent_page = reverse("admin:agents_agent_change", args=[agents[0].pk])
    assert f'href="{agent_page}"' in page
    assert 'id="plan-timeline"' in page and "<strong>Proposed</strong> by owen" in page
    text = client.get(skill_page).content.decode()
    assert "Chase an overdue invoice" in text and "would leave it" in text
    nothing = reverse("admin:catalog_plan_skill", args=[plan.pk, "nothing"])
    assert client.get(nothing).status_code == 404
    stranger = make_user("sam")
    assert browser(stranger).get(skill_page).status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        browser(owner).post(reverse("admin:catalog_plan_approve", args=[plan.pk]))
    plan.refresh_from_db()
    assert plan.status == Plan.State.APPLIED
    page = client.get(review_url(plan)).content.decode()
    assert 'id="plan-done"' in page and 'tag add">created' in page
    assert "<strong>Approved</strong> by owen" in page and "<strong>Applied</strong>" in page
    from catalog.models import WorkspaceSkill

    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    assert reverse("admin:catalog_workspaceskill_change", args=[chase.pk]) in page
    credential = reverse("admin:egress_credentialrequirement_change",
                         args=[acme.credential_requirements.get().pk])  # fmt: skip
    assert f'href="{credential}"' in page


def test_approving_with_another_fork_choice_recomputes_instead(
    forked_upgrade, owner, django_capture_on_commit_callbacks
):
    """What is approved is what the page showed: a choice other than the plan's makes a
    new plan to read, and approves nothing."""
    plan = forked_upgrade
    client = browser(owner)
    approve = reverse("admin:catalog_plan_approve", args=[plan.pk])
    shown = next(s for s in plan.steps if s["type"] == "skill.fork")["choice"]
    other = "merge" if shown != "merge" else "keep"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(approve, {"fork-invoice-chase": other})
    newer = Plan.objects.latest("pk")
    assert newer.pk != plan.pk and response.url == review_url(newer)
    assert (newer.status, Plan.objects.get(pk=plan.pk).status) == ("proposed", "superseded")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:catalog_plan_approve", args=[newer.pk]),
                    {"fork-invoice-chase": other})  # fmt: skip
    newer.refresh_from_db()
    assert newer.status == Plan.State.APPLIED


def test_a_fork_shows_the_merge_against_yours_and_the_size_of_the_chosen_text(
    forked_upgrade, owner
):
    """The merge folds away unless chosen, shown as what it does to the text here; the
    size is of the text the choice leaves."""
    plan = forked_upgrade
    (fork,) = [s for s in plan.steps if s["type"] == "skill.fork"]
    page = browser(owner).get(review_url(plan)).content.decode()
    mine = fork["mine_body"]
    lines = mine.count("\n") + 1
    assert (
        f"{lines} line{'s' if lines != 1 else ''}, about {(len(mine) + 3) // 4} tokens as chosen"
        in page
    )
    assert "<details><summary><strong>What merging does to the text here</strong>" in page


def test_a_line_either_side_deleted_reads_as_deleted_in_the_three_columns():
    from catalog.diff_display import aligned_three

    base = "One.\nTwo.\nThree.\nFour.\n"
    yours = "One.\nTwo, mine.\nThree.\nFour.\n"
    new = "One.\nTwo.\nFour.\n"  # the catalog deleted Three.
    html = aligned_three(base, yours, new)
    assert '<td class="removed"><del>Three.</del></td>' in html
    assert aligned_three(base, new, yours).count('class="removed"') == 1  # yours deleted it
