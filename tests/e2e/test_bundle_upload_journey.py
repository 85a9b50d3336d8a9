"""An operator uploads a bundle archive, reads the preview, publishes, reads its files."""

import pytest
from playwright.sync_api import expect

from catalog.models import BundleVersion
from tests.catalog.bundle_archives import ledger_bundle, zip_of, zip_with_evil

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def both_themes(tab, name, part=None):
    """Screenshot the page (or one part of it) in the admin's light and dark themes, as
    its toggle sets them."""
    for theme in ("light", "dark"):
        tab.page.evaluate(
            f"localStorage.setItem('theme', '{theme}');"
            f"document.documentElement.dataset.theme = '{theme}'"
        )
        tab.shot(f"{name}-{theme}", part)
    tab.page.evaluate("localStorage.setItem('theme', 'auto')")


def test_operator_uploads_previews_publishes_and_reads_the_files(
    operator, person, tmp_path, settings
):
    settings.DATA_DIR = tmp_path / "data"
    folder = ledger_bundle(tmp_path / "ledger-tools")
    archive, evil = tmp_path / "ledger-tools.zip", tmp_path / "evil.zip"
    archive.write_bytes(zip_of(folder))
    evil.write_bytes(zip_with_evil(folder))
    tab = person(operator, password="operator-pass-1")
    page = tab.page

    tab.go("/admin/catalog/bundleversion/")
    page.get_by_role("link", name="Upload a bundle").click()
    expect(page.locator("h1")).to_have_text("Upload a bundle")

    # A hostile archive: every problem named, nothing kept.
    page.set_input_files("#id_archive", str(evil))
    page.get_by_role("button", name="Check and preview").click()
    problems = page.locator("#upload-problems")
    expect(problems).to_contain_text("../evil: refused")
    expect(problems).to_contain_text("skills/ledger-lookup/passwd: refused: it is a symbolic link")
    both_themes(tab, "bundle-upload-refused")

    page.set_input_files("#id_archive", str(archive))
    page.get_by_label("Publish after loading").check()
    page.get_by_role("button", name="Check and preview").click()
    preview = page.locator("#upload-preview")
    expect(preview).to_contain_text("new skill version")
    expect(preview).to_contain_text("past the Agent Skills guidance")
    both_themes(tab, "bundle-upload-preview")
    expect(page.get_by_label("Publish after loading")).to_be_checked()
    assert not BundleVersion.objects.exists()
    page.get_by_role("button", name="Load ledger-tools 1.0.0").click()

    # Loaded as a draft; publishing asked for opens its confirmation first.
    expect(page.locator(".messagelist")).to_contain_text("Loaded ledger-tools 1.0.0 (draft)")
    expect(page.locator("#release-impact")).to_contain_text("Ledger Tools 1.0.0")
    assert BundleVersion.objects.get(version="1.0.0").status == "draft"
    page.get_by_role("button", name="Yes, publish 1 version").click()
    expect(page.locator(".messagelist")).to_contain_text("Published Ledger Tools 1.0.0.")
    assert BundleVersion.objects.get(version="1.0.0").status == "published"
    files = page.locator("#skill-files")
    expect(files).to_contain_text("scripts/export.py")
    expect(files).to_contain_text("past the Agent Skills guidance")
    both_themes(tab, "bundle-version-files")

    from catalog.models import SkillVersion

    export = SkillVersion.objects.get(package__slug="ledger-export")
    tab.go(f"/admin/catalog/skillversion/{export.pk}/change/")
    expect(page.locator("#skill-files")).to_contain_text("references/statement-fields.md")
    both_themes(tab, "skill-version-files", part="#skill-files")
