"""The bundle loader meets hostile files: it refuses them with a message naming the file,
never crashes, and writes nothing. CI runs a light pass; PIXIE_HEAVY=1 a heavy one."""

import os
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from catalog.models import BundleVersion, SkillPackage, SkillVersion
from tests.suite import examples

pytestmark = pytest.mark.django_db
HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
EXAMPLES = 1_000 if HEAVY else examples(40)  # about 10 ms each: a folder copied and loaded
DEMO = Path(__file__).resolve().parents[2] / "catalog" / "demo" / "accounts-receivable-2.1.0"
PIECES = ["---\n", "name: ", "description: ", "version: ", "approvals:\n", "  - operation: ",
          "    rule: ", "@query-ledger", "@nowhere", "\x00", "\ud7ff", "[[hosts]]\n", 'host = "',
          "port = ", "slug = ", "skills = [", '"', "]\n", "{", "}", "- ", ": ", "\n", "NaN",
          "&anchor", "*anchor", "!!python/object:os.system", "x" * 9000]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=20), max_size=30).map("".join)


def counts():
    return (
        BundleVersion.objects.count(),
        SkillVersion.objects.count(),
        SkillPackage.objects.count(),
    )


def test_hostile_files_are_refused_cleanly(tmp_path, record_property):

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=not HEAVY,
    )
    @given(manifest=st.none() | texts, skill=st.none() | texts)
    def check(manifest, skill):
        assume(manifest is not None or skill is not None)  # the untouched demo loads fine
        before = counts()
        folder = tmp_path / "bundle"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(DEMO, folder)
        if manifest is not None:
            (folder / "bundle.toml").write_text(manifest, encoding="utf-8", errors="surrogatepass")
        if skill is not None:
            (folder / "skills" / "take-payment" / "SKILL.md").write_text(
                skill, encoding="utf-8", errors="surrogatepass"
            )
        try:
            call_command("bundle_load", str(folder))
        except CommandError as refused:
            assert "nothing was loaded" in str(refused)
            assert (
                ("bundle.toml" in str(refused))
                or ("SKILL.md" in str(refused))
                or ("skills" in str(refused))
            )
            assert counts() == before

    check()
    record_property("figure", f"{EXAMPLES:,} hostile bundle folders, none loaded half-way")
