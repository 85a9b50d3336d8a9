"""The operator's pages show each skill's files, lines and estimated tokens."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import BundleVersion, SkillVersion
from catalog.skill_content import sha256_of

from .bundle_archives import ledger_bundle, many_skills_bundle

pytestmark = pytest.mark.django_db


@pytest.fixture
def ledger(tmp_path):
    folder = ledger_bundle(tmp_path / "ledger-tools")
    call_command("bundle_load", str(folder), "--publish")
    return folder


def test_a_bundle_version_page_lists_files_sizes_and_totals(operator_client, ledger):
    version = BundleVersion.objects.get(version="1.0.0")
    page = operator_client.get(f"/admin/catalog/bundleversion/{version.pk}/change/")
    text = page.content.decode()
    script = (ledger / "skills/ledger-export/scripts/export.py").read_bytes()
    assert "scripts/export.py" in text and sha256_of(script)[:12] in text
    assert "yes (100755)" in text and "image/png" in text
    assert "past the Agent Skills guidance" in text
    assert "1 of 2 skills past the Agent Skills guidance" in text
    assert "2 skills,\n    5 supporting files" in text
    api = "/api/bundles/ledger-tools/versions/1.0.0/"
    assert api + "download" in text
    assert api + "skills/ledger-export/files/assets/logo.png" in text
    assert "SKILL.md only: no supporting files." in text  # ledger-lookup


def test_a_skill_version_page_lists_its_files_and_size(operator_client, ledger):
    export = SkillVersion.objects.get(package__slug="ledger-export")
    text = operator_client.get(f"/admin/catalog/skillversion/{export.pk}/change/").content.decode()
    assert "references/statement-fields.md" in text and "text/markdown" in text
    assert "past the Agent Skills guidance" in text
    lookup = SkillVersion.objects.get(package__slug="ledger-lookup")
    text = operator_client.get(f"/admin/catalog/skillversion/{lookup.pk}/change/").content.decode()
    assert "SKILL.md only" in text and "past the Agent Skills guidance" not in text


def queries_of(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_the_pages_run_the_same_queries_for_2_or_20_skills(operator_client, tmp_path):
    counts = {}
    for count in (2, 20):
        slug = f"many-{count}"
        call_command("bundle_load", str(many_skills_bundle(tmp_path / slug, count, slug=slug)))
        version = BundleVersion.objects.get(bundle__slug=slug)
        skill = version.skills.first().skill_version
        counts[count] = (
            queries_of(operator_client, f"/admin/catalog/bundleversion/{version.pk}/change/"),
            queries_of(operator_client, f"/admin/catalog/skillversion/{skill.pk}/change/"),
        )
    assert counts[2] == counts[20], counts
    bundle_page, skill_page = counts[20]
    # A draft's page scans its skills' text for findings: its skills, their Markdown files,
    # those files' bytes, its hosts and credentials (five).
    assert bundle_page <= 23 and skill_page <= 10, counts
