"""Issue #13, section 3: any workspace owner could publish into everyone's catalog.

Globex's owner promotes an assembly to a bundle. Until an operator approves it from
the review queue, only Globex sees it: not Acme's owner (API list, detail, version,
files, download, Ask for a plan, plan creation), not a staff login of no workspace.
A bundle named like the operator's is refused; a slug one typo away is held for
review with the reason. Every step goes through the pages and endpoints people use.
"""

import re
from types import SimpleNamespace

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from reversion.models import Version

from agents.models import Agent
from agents.services import agent_skill_attach
from catalog.models import Bundle, BundleVersion, CatalogReview, Plan, Publisher
from catalog.services.workspace_skills import skill_create
from pixie.core.errors import ValidationFailed
from pixie.installer.plans import plan_create
from tests.factories import make_user, make_workspace
from tests.reliability.world import operators_group

pytestmark = pytest.mark.django_db

QUEUE = "/admin/catalog/bundleversion/review/"
ASK = "/admin/catalog/plan/ask/"


def signed_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def people(demo_catalog):
    """Acme installs from the operator's catalog; Globex's owner is the would-be impostor;
    Stu is staff of no workspace; Olivia is a superuser; Opal is in the group operators."""
    acme_owner = make_user("owen", is_staff=True)
    gina = make_user("gina", is_staff=True)
    acme = make_workspace("acme", owner=acme_owner)
    globex = make_workspace("globex", owner=gina)
    skill = skill_create(
        workspace=globex, slug="dun-politely", name="Dun politely",
        short_description="Chase an overdue invoice.",
        body="Write to the customer about the overdue invoice, politely.", actor=gina,
    )  # fmt: skip
    agent = Agent.objects.create(workspace=globex, slug="dunner", name="Dunner")
    agent_skill_attach(agent=agent, skill=skill, actor=gina)
    opal = make_user("opal", is_staff=True)
    opal.groups.add(operators_group())
    return SimpleNamespace(
        acme=acme,
        acme_owner=acme_owner,
        globex=globex,
        gina=gina,
        agent=agent,
        staff=make_user("stu", is_staff=True),
        operator=make_user("olivia", is_staff=True, is_superuser=True),
        group_operator=opal,
        catalog=demo_catalog,
    )


def promote(people, *, slug, name, version="9.9.9"):
    """Globex's owner fills in the admin's Promote page, as the issue's attacker did."""
    page = signed_in(people.gina).post(
        reverse("admin:agents_agent_promote", args=[people.agent.pk]),
        {"slug": slug, "name": name, "version": version},
        follow=True,
    )
    assert page.status_code == 200
    return page.content.decode()


def sees(user, slug, version="9.9.9") -> dict[str, bool]:
    """Every door a user could read the version through, and whether it opened."""
    api = api_as(user)
    base = f"/api/bundles/{slug}/versions/{version}/"
    listed = {b["slug"] for b in api.get("/api/bundles/").json()["results"]}
    return {
        "list": slug in listed,
        "bundle": api.get(f"/api/bundles/{slug}/").status_code == 200,
        "version": api.get(base).status_code == 200,
        "file": api.get(base + "skills/dun-politely/files/SKILL.md").status_code == 200,
        "download": api.get(base + "download").status_code == 200,
    }


NOWHERE = dict.fromkeys(["list", "bundle", "version", "file", "download"], False)
EVERYWHERE = dict.fromkeys(NOWHERE, True)


def ask_page(user) -> str:
    return signed_in(user).get(ASK).content.decode()


def approve_in_queue(operator, bundle_version):
    """The operator opens the queue and presses Approve (with the page's CSRF token)."""
    client = signed_in(operator, enforce_csrf_checks=True)
    queue = client.get(QUEUE)
    assert queue.status_code == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', queue.content.decode())[1]
    url = reverse("admin:catalog_bundleversion_approve", args=[bundle_version.pk])
    return client.post(url, {"csrfmiddlewaretoken": token}, follow=True)


def test_a_bundle_named_like_the_operators_is_refused_and_nothing_is_written(people):
    page = promote(people, slug="ar-pro", name="Accounts  receivable")
    assert "is the name of Pixie&#x27;s bundle accounts-receivable" in page
    assert "choose a name of your own" in page
    assert not Bundle.objects.filter(slug="ar-pro").exists()
    assert not Publisher.objects.filter(workspace=people.globex).exists()
    assert "Accounts receivable 9.9.9" not in ask_page(people.acme_owner)


def test_a_promotion_is_seen_only_by_its_workspace_until_an_operator_approves(people):
    page = promote(people, slug="globex-ar", name="Globex receivables")
    assert "Only Globex sees it until an operator approves it" in page
    promoted = BundleVersion.objects.get(bundle__slug="globex-ar")
    assert promoted.catalog_review == CatalogReview.PENDING

    # Acme's owner and a staff login of no workspace: no door opens.
    assert sees(people.acme_owner, "globex-ar") == NOWHERE
    assert sees(people.staff, "globex-ar") == NOWHERE
    assert "Globex receivables" not in ask_page(people.acme_owner)
    # ...and the operator's own catalog is not a staff login's to read either.
    assert api_as(people.staff).get("/api/bundles/").json()["count"] == 0
    assert sees(people.staff, "accounts-receivable", "2.1.0") == NOWHERE
    assert "accounts-receivable" in str(api_as(people.acme_owner).get("/api/bundles/").json())

    # Nor can Acme ask for a plan of it: the form, the API and the service all refuse.
    form = signed_in(people.acme_owner).post(
        ASK, {"workspace": people.acme.pk, "kind": "install", "bundle_version": promoted.pk}
    )
    assert "Select a valid choice" in form.content.decode()
    api = api_as(people.acme_owner).post(
        "/api/workspaces/acme/plans/",
        {"kind": "install", "bundle": "globex-ar", "version": "9.9.9"},
        format="json",
    )
    assert api.status_code == 400 and "No published version 9.9.9 of globex-ar" in api.text
    with pytest.raises(ValidationFailed) as refused:
        plan_create(
            workspace=people.acme, kind="install", bundle_version=promoted,
            actor=people.acme_owner,
        )  # fmt: skip
    assert refused.value.code == "not_visible"
    assert not Plan.objects.filter(workspace=people.acme).exists()

    # Globex sees its own version, marked as waiting, with its publisher named.
    assert sees(people.gina, "globex-ar") == EVERYWHERE
    detail = api_as(people.gina).get("/api/bundles/globex-ar/versions/9.9.9/").json()
    assert detail["catalog_review"] == "pending"
    assert detail["publisher"] == {
        "slug": "workspace-globex", "name": "Globex", "kind": "workspace", "trusted": False,
        "label": "Globex (workspace)",
    }  # fmt: skip
    assert "Globex receivables 9.9.9 by Globex (workspace) [awaiting review" in ask_page(
        people.gina
    )
    # Both operators see it.
    assert sees(people.operator, "globex-ar") == EVERYWHERE
    assert sees(people.group_operator, "globex-ar") == EVERYWHERE


def test_an_operator_approves_it_in_the_queue_and_every_workspace_sees_it(people):
    promote(people, slug="globex-ar", name="Globex receivables")
    promoted = BundleVersion.objects.get(bundle__slug="globex-ar")
    queue = signed_in(people.operator).get(QUEUE).content.decode()
    assert 'data-bundle="globex-ar" data-version="9.9.9"' in queue
    assert reverse("admin:catalog_bundleversion_change", args=[promoted.pk]) in queue

    page = approve_in_queue(people.group_operator, promoted)
    assert "every workspace sees it now" in page.content.decode()
    promoted.refresh_from_db()
    assert promoted.catalog_review == CatalogReview.APPROVED
    assert promoted.catalog_reviewed_by == people.group_operator
    history = Version.objects.get_for_object(promoted).first().revision
    assert history.user == people.group_operator
    assert history.comment == "Approved Globex receivables 9.9.9 for the catalog"

    assert sees(people.acme_owner, "globex-ar") == EVERYWHERE
    assert "Globex receivables 9.9.9 by Globex (workspace)" in ask_page(people.acme_owner)
    assert (
        plan_create(
            workspace=people.acme, kind="install", bundle_version=promoted, actor=people.acme_owner
        ).status
        == Plan.State.PROPOSED
    )
    assert sees(people.staff, "globex-ar") == NOWHERE  # still no workspace, still nothing


def test_a_refusal_keeps_it_private_and_its_workspace_reads_the_reason(people):
    promote(people, slug="globex-ar", name="Globex receivables")
    promoted = BundleVersion.objects.get(bundle__slug="globex-ar")
    client = signed_in(people.operator)
    refuse = reverse("admin:catalog_bundleversion_refuse", args=[promoted.pk])
    page = client.post(refuse, {"reason": "  "}, follow=True).content.decode()
    assert "Say why the version is refused" in page
    promoted.refresh_from_db()
    assert promoted.catalog_review == CatalogReview.PENDING

    client.post(refuse, {"reason": "It sends customers' card numbers to a pastebin."})
    promoted.refresh_from_db()
    assert promoted.catalog_review == CatalogReview.REFUSED
    history = Version.objects.get_for_object(promoted).first().revision
    assert history.comment.startswith("Refused Globex receivables 9.9.9 for the catalog: It sends")
    assert sees(people.acme_owner, "globex-ar") == NOWHERE
    assert 'data-bundle="globex-ar"' not in client.get(QUEUE).content.decode()

    detail = api_as(people.gina).get("/api/bundles/globex-ar/versions/9.9.9/").json()
    assert (detail["catalog_review"], detail["catalog_review_reason"]) == (
        "refused",
        "It sends customers' card numbers to a pastebin.",
    )
    assert "[refused for the catalog: It sends customers" in ask_page(people.gina)


def test_a_trusted_publisher_skips_review_but_not_the_imitation_check(people):
    promote(people, slug="globex-ar", name="Globex receivables", version="1.0.0")
    publisher = Publisher.objects.get(workspace=people.globex)
    signed_in(people.operator).post(
        reverse("admin:catalog_publisher_trust", args=[publisher.pk]), {"trusted": "1"}
    )
    publisher.refresh_from_db()
    assert publisher.trusted
    assert Version.objects.get_for_object(publisher).first().revision.comment == (
        "Marked publisher workspace-globex trusted"
    )
    # What was already waiting still waits for its own review.
    first = BundleVersion.objects.get(bundle__slug="globex-ar", version="1.0.0")
    assert first.catalog_review == CatalogReview.PENDING

    page = promote(people, slug="globex-ar", name="Globex receivables", version="1.1.0")
    assert "It is in the catalog every workspace sees." in page
    assert sees(people.acme_owner, "globex-ar", "1.1.0") == EVERYWHERE
    listed = api_as(people.acme_owner).get("/api/bundles/").json()["results"]
    (bundle,) = [b for b in listed if b["slug"] == "globex-ar"]
    assert bundle["publisher"]["trusted"] is True
    assert bundle["publisher"]["label"] == "Globex (✓ operator-approved workspace)"

    # Trusted or not, a slug two letters from the operator's is held, with the reason.
    page = promote(people, slug="acounts-receivable", name="Receivables, faster")
    held = BundleVersion.objects.get(bundle__slug="acounts-receivable")
    assert held.catalog_review == CatalogReview.PENDING
    assert held.catalog_review_flags == [
        "the slug acounts-receivable is within 2 letters of Pixie's bundle accounts-receivable"
    ]
    assert "Held because the slug acounts-receivable is within 2 letters" in page
    queue = signed_in(people.operator).get(QUEUE).content.decode()
    assert "within 2 letters of Pixie&#x27;s bundle accounts-receivable" in queue
    assert sees(people.acme_owner, "acounts-receivable") == NOWHERE


def test_who_is_not_an_operator_gets_the_permission_page_and_changes_nothing(people):
    promote(people, slug="globex-ar", name="Globex receivables")
    promoted = BundleVersion.objects.get(bundle__slug="globex-ar")
    publisher = promoted.bundle.publisher
    approve = reverse("admin:catalog_bundleversion_approve", args=[promoted.pk])
    trust = reverse("admin:catalog_publisher_trust", args=[publisher.pk])
    for user in (people.gina, people.acme_owner, people.staff):
        client = signed_in(user)
        assert client.get(QUEUE).status_code == 403
        assert client.post(approve).status_code == 403
        assert client.post(trust, {"trusted": "1"}).status_code == 403
        changelist = client.get("/admin/catalog/bundleversion/")
        assert b"Review queue" not in changelist.content
    assert Client().get(QUEUE).status_code == 302  # anonymous: to the login page
    promoted.refresh_from_db()
    publisher.refresh_from_db()
    assert (promoted.catalog_review, publisher.trusted) == (CatalogReview.PENDING, False)
    # The operator's changelist links to the queue with its count.
    page = signed_in(people.operator).get("/admin/catalog/bundleversion/").content.decode()
    assert "Review queue (1)" in page


def test_the_review_forms_need_their_csrf_token(people):
    promote(people, slug="globex-ar", name="Globex receivables")
    promoted = BundleVersion.objects.get(bundle__slug="globex-ar")
    client = signed_in(people.operator, enforce_csrf_checks=True)
    for name, data in (("approve", {}), ("refuse", {"reason": "No"})):
        url = reverse(f"admin:catalog_bundleversion_{name}", args=[promoted.pk])
        assert client.post(url, data).status_code == 403
    promoted.refresh_from_db()
    assert promoted.catalog_review == CatalogReview.PENDING


def test_the_queue_reads_a_fixed_number_of_queries_whatever_its_length(
    people, django_assert_max_num_queries
):
    client = signed_in(people.operator)
    for minor in range(12):
        promote(people, slug="globex-ar", name="Globex receivables", version=f"1.{minor}.0")
    with django_assert_max_num_queries(8):
        page = client.get(QUEUE)
    assert page.content.decode().count('class="review-row"') == 12


def test_leaving_the_group_operators_ends_an_operators_reach(people):
    promote(people, slug="globex-ar", name="Globex receivables")
    people.group_operator.groups.clear()
    assert signed_in(people.group_operator).get(QUEUE).status_code == 403
    assert sees(people.group_operator, "globex-ar") == NOWHERE
