"""What changed between two versions of a bundle, as an owner deciding on an upgrade or an
operator reviewing a release reads it: skills added, removed and changed (each field and
supporting file), hosts, credential names and notes; only versions the reader may see."""

import pytest
from django.urls import reverse

from catalog.models import Bundle, Publisher
from tests.catalog.skill_folders import write
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace
from tests.installer.test_plan_files import ledger_bundle, publish

pytestmark = pytest.mark.django_db

URL = "/api/bundles/accounts-receivable/compare/"


@pytest.fixture
def reader(db):
    """The owner of a workspace: reads the catalog."""
    owner = make_user("owen")
    make_workspace("acme", owner=owner)
    return owner


def test_the_newest_version_is_compared_with_the_one_before(demo_catalog, reader):
    response = api_for(reader).get(URL)
    assert response.status_code == 200
    comparison = response.json()
    assert (comparison["before"], comparison["after"]) == ("2.1.0", "2.2.0")
    skills = {skill["slug"]: skill for skill in comparison["skills"]}
    assert skills["payment-plan"]["change"] == "added"
    assert skills["invoice-chase"]["change"] == "changed"
    body = next(f for f in skills["invoice-chase"]["fields"] if f["field"] == "body")
    assert any(line.startswith("+") for line in body["diff"])
    assert skills["ar-ground-rules"]["change"] == "unchanged"
    assert [h["host"] for h in comparison["hosts"] if h["change"] == "added"] == [
        "payments.example.com"
    ]
    assert [c["name"] for c in comparison["credentials"] if c["change"] == "added"] == [
        "PAYMENTS_API_KEY"
    ]
    assert comparison["notes"]["changed"] and comparison["identical"] is False


def test_the_other_way_round_the_new_skill_is_removed(demo_catalog, reader):
    comparison = api_for(reader).get(f"{URL}?from=2.2.0&to=2.1.0").json()
    skills = {skill["slug"]: skill["change"] for skill in comparison["skills"]}
    assert skills["payment-plan"] == "removed"
    assert [h["change"] for h in comparison["hosts"]] == ["removed"]


def test_a_version_compared_with_itself_is_identical(demo_catalog, reader):
    comparison = api_for(reader).get(f"{URL}?from=2.1.0&to=2.1.0").json()
    assert comparison["identical"] is True
    assert {skill["change"] for skill in comparison["skills"]} == {"unchanged"}


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("to=9.9.9", 404, "Bundle accounts-receivable has no version '9.9.9' you can see; its "
         "versions are 2.1.0, 2.2.0"),
        ("from=" + "9" * 70, 400, "'from' must be a version of the bundle, like 2.1.0"),
        ("from=%00", 400, "'from' must be a version of the bundle"),
    ],
)  # fmt: skip
def test_a_wrong_comparison_names_what_is_wrong(demo_catalog, reader, query, status, words):
    response = api_for(reader).get(f"{URL}?{query}")
    assert response.status_code == status
    assert words in response.json()["detail"]


def test_a_login_of_no_workspace_sees_no_version_to_compare(demo_catalog):
    loner = make_user("lou")
    response = api_for(loner).get(URL)
    assert response.status_code == 404
    assert "2.1.0" not in response.content.decode()


def test_a_workspaces_unapproved_version_is_not_compared_for_others(tmp_path, reader):
    """Globex's own 1.1.0 waits for review: Acme's owner compares only what it may see."""
    publish(ledger_bundle(tmp_path, "1.0.0"))
    folder = ledger_bundle(tmp_path, "1.1.0")
    publish(folder)
    globex_owner = make_user("gil")
    globex = make_workspace("globex", owner=globex_owner)
    bundle = Bundle.objects.get(slug="ledger-tools")
    publisher = Publisher.objects.create(slug="globex", name="Globex", kind="workspace",
                                         workspace=globex)  # fmt: skip
    bundle.publisher = publisher
    bundle.save(update_fields=["publisher"])
    bundle.versions.filter(version="1.1.0").update(catalog_review="pending")
    response = api_for(reader).get("/api/bundles/ledger-tools/compare/?to=1.1.0")
    assert response.status_code == 404
    assert (
        api_for(globex_owner).get("/api/bundles/ledger-tools/compare/?to=1.1.0").json()["after"]
        == "1.1.0"
    )


def test_a_changed_script_is_diffed_and_a_new_mode_called_out(tmp_path, reader):
    publish(ledger_bundle(tmp_path, "1.0.0"))
    folder = ledger_bundle(tmp_path, "1.1.0")
    script = folder / "skills/ledger-export/scripts/export.py"
    write(script, "print('aged debt too')\n", executable=False)
    publish(folder)
    comparison = api_for(reader).get("/api/bundles/ledger-tools/compare/").json()
    export = next(s for s in comparison["skills"] if s["slug"] == "ledger-export")
    (changed,) = export["files"]
    assert changed["path"] == "scripts/export.py" and changed["content"] == "text"
    assert changed["mode"] == "no longer executable"
    assert "+print('aged debt too')" in changed["diff"]


def test_a_comparison_reads_a_fixed_number_of_queries(
    tmp_path, reader, django_assert_max_num_queries
):
    publish(ledger_bundle(tmp_path, "1.0.0"))
    folder = ledger_bundle(tmp_path, "1.1.0")
    for n in range(30):
        write(folder / f"skills/ledger-export/references/note-{n}.md", f"Note {n}.\n")
    publish(folder)
    with django_assert_max_num_queries(10):
        response = api_for(reader).get("/api/bundles/ledger-tools/compare/")
    assert len(response.json()["skills"][1]["files"]) == 30


# --- the operator's page ------------------------------------------------------------


def test_an_operator_compares_two_versions_in_the_admin(demo_catalog, operator_client):
    bundle = Bundle.objects.get(slug="accounts-receivable")
    url = reverse("admin:catalog_bundle_compare", args=[bundle.pk])
    response = operator_client.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    assert "{#" not in page
    main = page.split('id="content-main"', 1)[1]
    assert "@payment-plan" in main and "payments.example.com" in main
    assert "PAYMENTS_API_KEY" in main and "<ins>" in main
    # A new skill's whole text is there to read, folded away under the list of changes.
    added = main.split('id="skill-payment-plan"', 1)[1].split('class="compare-skill"', 1)[0]
    assert "<details><summary>Read the new skill whole" in added
    change = operator_client.get(reverse("admin:catalog_bundle_change", args=[bundle.pk]))
    assert url in change.content.decode()


def test_the_admin_page_names_a_version_that_does_not_exist(demo_catalog, operator_client):
    bundle = Bundle.objects.get(slug="accounts-receivable")
    url = reverse("admin:catalog_bundle_compare", args=[bundle.pk])
    response = operator_client.get(f"{url}?to=9.9.9")
    assert response.status_code == 200
    assert "has no version &#x27;9.9.9&#x27; you can see" in response.content.decode()


def test_a_workspace_member_reads_the_admin_page_and_a_login_of_no_workspace_is_refused(
    demo_catalog, reader
):
    bundle = Bundle.objects.get(slug="accounts-receivable")
    url = reverse("admin:catalog_bundle_compare", args=[bundle.pk])
    assert admin_for(reader).get(url).status_code == 200
    assert admin_for(make_user("nobody")).get(url).status_code == 403


def test_a_skill_added_before_the_others_moves_none_of_them(demo_catalog, reader):
    """2.2.0 inserts @payment-plan; the skills after it keep their order among themselves."""
    comparison = api_for(reader).get(URL).json()
    assert [s["slug"] for s in comparison["skills"] if s["moved"]] == []


def test_a_swap_in_the_order_is_called_out(tmp_path, reader):
    publish(ledger_bundle(tmp_path, "1.0.0"))
    folder = ledger_bundle(tmp_path, "1.1.0")
    toml = (folder / "bundle.toml").read_text()
    order = '["ledger-lookup", "ledger-export"]'
    swapped = toml.replace(order, '["ledger-export", "ledger-lookup"]')
    write(folder / "bundle.toml", swapped)
    publish(folder)
    comparison = api_for(reader).get("/api/bundles/ledger-tools/compare/").json()
    assert {s["slug"] for s in comparison["skills"] if s["moved"]} == {
        "ledger-lookup", "ledger-export"
    }  # fmt: skip
