"""The read-only catalog API, as a client with a session or a token uses it."""

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from catalog.models import Status
from catalog.services import bundle_version_publish, bundle_version_yank
from tests.factories import make_bundle_version, make_skill_version, make_user, make_workspace

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/bundles/",
    "/api/bundles/accounts-receivable/",
    "/api/bundles/accounts-receivable/versions/2.1.0/",
    "/api/schema/",
    "/api/docs/",
]


@pytest.fixture
def demo_catalog():
    call_command("bundle_load", "catalog/demo/accounts-receivable-2.1.0", "--publish")
    call_command("bundle_load", "catalog/demo/accounts-receivable-2.2.0", "--publish")


@pytest.fixture
def api():
    """A member of a workspace: the catalog is what a workspace sees."""
    reader = make_user("reader")
    make_workspace("readers", members=[reader])
    client = APIClient()
    client.force_authenticate(reader)
    return client


@pytest.mark.parametrize("url", ENDPOINTS)
def test_anonymous_requests_are_refused(url, demo_catalog):
    response = APIClient().get(url)
    assert response.status_code in (401, 403)
    assert b"ledger" not in response.content


def test_a_token_from_drf_create_token_authenticates(demo_catalog, capsys):
    make_user("robot")
    call_command("drf_create_token", "robot")
    token = Token.objects.get(user__username="robot").key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/bundles/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/bundles/").status_code == 401


def test_the_bundle_list_shows_the_latest_published_version(api, demo_catalog):
    body = api.get("/api/bundles/").json()
    assert body["count"] == 1
    (bundle,) = body["results"]
    assert bundle["slug"] == "accounts-receivable"
    assert bundle["latest_version"] == "2.2.0"
    assert bundle["publisher"]["slug"] == "pixie"


def test_a_bundle_lists_its_versions_newest_first_with_yanks(api, demo_catalog, operator):
    from catalog.models import BundleVersion

    bundle_version_yank(
        bundle_version=BundleVersion.objects.get(version="2.1.0"),
        actor=operator,
        reason="Superseded",
    )
    body = api.get("/api/bundles/accounts-receivable/").json()
    assert [(v["version"], v["status"]) for v in body["versions"]] == [
        ("2.2.0", "published"),
        ("2.1.0", "yanked"),
    ]
    assert body["versions"][1]["yank_reason"] == "Superseded"


def test_a_bundle_version_has_skills_in_order_hosts_credentials_and_rules(api, demo_catalog):
    body = api.get("/api/bundles/accounts-receivable/versions/2.2.0/").json()
    assert [s["slug"] for s in body["skills"]] == [
        "ar-ground-rules",
        "invoice-chase",
        "take-payment",
        "payment-plan",
        "apply-credit-note",
    ]
    assert all(s["body"] for s in body["skills"])
    assert {h["host"] for h in body["hosts"]} == {"ledger.example.com", "payments.example.com"}
    assert {c["name"] for c in body["credentials"]} == {"LEDGER_API_TOKEN", "PAYMENTS_API_KEY"}
    operations = {r["operation"]: r["skill"] for r in body["approval_rules"]}
    assert operations["take-payment"] == "take-payment"
    assert operations["apply-credit-note"] == "apply-credit-note"


def test_drafts_are_hidden_from_workspace_users_and_shown_to_staff(api, operator):
    draft = make_bundle_version("secret-plans", skills=[make_skill_version()])
    assert api.get("/api/bundles/").json()["count"] == 0
    assert api.get("/api/bundles/secret-plans/versions/1.0.0/").status_code == 404
    staff = APIClient()
    staff.force_authenticate(operator)
    assert staff.get("/api/bundles/secret-plans/versions/1.0.0/").json()["status"] == Status.DRAFT
    bundle_version_publish(bundle_version=draft, actor=operator)
    assert api.get("/api/bundles/").json()["count"] == 1


def test_unknown_bundles_and_versions_answer_404(api, demo_catalog):
    assert api.get("/api/bundles/nope/").status_code == 404
    assert api.get("/api/bundles/accounts-receivable/versions/9.9.9/").status_code == 404


def test_api_lists_and_details_run_bounded_queries(api, operator, django_assert_max_num_queries):
    skills = [make_skill_version(f"s-{i}") for i in range(60)]
    for i in range(60):
        bundle_version_publish(
            bundle_version=make_bundle_version(f"b-{i}", skills=[skills[i]]), actor=operator
        )
    big = make_bundle_version("big", skills=skills)
    bundle_version_publish(bundle_version=big, actor=operator)
    with django_assert_max_num_queries(6):
        assert api.get("/api/bundles/").status_code == 200
    with django_assert_max_num_queries(6):
        assert api.get("/api/bundles/big/").status_code == 200
    with django_assert_max_num_queries(8):
        body = api.get("/api/bundles/big/versions/1.0.0/").json()
    assert len(body["skills"]) == 60


def test_the_bundle_list_pages_with_its_count_in_one_query(
    api, operator, django_assert_num_queries
):
    skill = make_skill_version("shared")
    for i in range(61):
        bundle_version_publish(
            bundle_version=make_bundle_version(f"b-{i:02}", skills=[skill]), actor=operator
        )
    make_bundle_version("a-draft", skills=[make_skill_version("hidden")])
    # The catalog's stamp, the user's roles and memberships, the page with its count, the
    # page's versions: four queries, however many bundles; asked again at the same stamp,
    # the stamp alone (the facts and the page were kept under it).
    with django_assert_num_queries(4):
        first = api.get("/api/bundles/").json()
    with django_assert_num_queries(1):
        assert api.get("/api/bundles/").json() == first
    assert first["count"] == 61 and len(first["results"]) == 50
    assert first["next"].endswith("?page=2") and first["previous"] is None
    second = api.get("/api/bundles/?page=2").json()
    assert second["count"] == 61 and second["next"] is None
    assert [b["slug"] for b in first["results"] + second["results"]] == [
        f"b-{i:02}" for i in range(61)
    ]
    assert api.get("/api/bundles/?page=last").json()["results"] == second["results"]
    for page in ("3", "0", "x", "1.5"):
        assert api.get(f"/api/bundles/?page={page}").status_code == 404, page


@pytest.mark.parametrize("page", [str(2**63 // 50 + 1), "23520925636752813588480"])
def test_a_page_past_the_end_of_any_table_is_not_found_rather_than_a_server_error(
    api, demo_catalog, page
):
    # Found by schemathesis (tests/reliability/test_api_fuzz.py): the database refused an
    # OFFSET past 2**63 and the list answered 500.
    response = api.get(f"/api/bundles/?page={page}")
    assert response.status_code == 404
    assert response.json()["detail"].endswith("does not exist: there is 1 page.")


def test_an_empty_catalog_lists_no_bundles(api):
    assert api.get("/api/bundles/").json() == {
        "count": 0, "next": None, "previous": None, "results": []
    }  # fmt: skip


def test_a_published_versions_contents_are_read_once_and_its_status_every_time(
    api, demo_catalog, operator, django_assert_num_queries
):
    from catalog.models import BundleVersion

    url = "/api/bundles/accounts-receivable/versions/2.1.0/"
    first = api.get(url).json()
    # The version's row, with the user's right to see it in the same query: its contents
    # never change.
    with django_assert_num_queries(1):
        again = api.get(url).json()
    assert again == first and list(again) == list(first)
    bundle_version_yank(
        bundle_version=BundleVersion.objects.get(version="2.1.0"), actor=operator, reason="Bad"
    )
    yanked = api.get(url).json()
    assert (yanked["status"], yanked["yank_reason"]) == ("yanked", "Bad")
    assert yanked["skills"] == first["skills"]


def test_a_drafts_contents_are_read_afresh(operator):
    from catalog.models import BundleHost

    draft = make_bundle_version("work-in-progress", skills=[make_skill_version()])
    staff = APIClient()
    staff.force_authenticate(operator)
    url = "/api/bundles/work-in-progress/versions/1.0.0/"
    before = {h["host"] for h in staff.get(url).json()["hosts"]}
    BundleHost.objects.create(bundle_version=draft, host="api.example.com", port=443)
    assert {h["host"] for h in staff.get(url).json()["hosts"]} == before | {"api.example.com"}


def test_the_openapi_schema_describes_the_catalog(api):
    schema = api.get("/api/schema/?format=json").json()
    assert "/api/bundles/{slug}/versions/{version}/" in schema["paths"]
