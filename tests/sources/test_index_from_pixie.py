"""One Pixie follows another: an index source pointed at a live Pixie's delivery index
(the discovery index the ``skills`` client reads) makes a draft of exactly the skills a
workspace there runs, byte for byte; the workspace's upgrade there becomes a draft here
with the one skill it changed; nothing new upstream makes nothing."""

from pathlib import Path

import pytest
from django.core.management import call_command

from catalog.models import BundleVersion, Plan
from pixie.delivery.tokens import delivery_token_create
from pixie.sources.models import Source
from pixie.sources.services import source_check
from tests.catalog.skill_folders import bundle_folder, ledger_lookup_skill
from tests.delivery.conftest import serial_live_server  # noqa: F401 (a fixture)
from tests.delivery.test_skills_cli import apply
from tests.factories import make_user, make_workspace

pytestmark = [pytest.mark.django_db(transaction=True)]  # served by another thread

MIRRORED = {
    "slug": "ledger-mirror",
    "name": "Ledger mirror",
    "hosts": [{"host": "ledger.example.com", "port": 443, "purpose": "Read the ledger."}],
    "approvals": [
        {
            "skill": "ledger-export",
            "operation": "send-statement",
            "rule": "Sending a statement to a customer needs a person's yes.",
        }
    ],
}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = True  # the other Pixie is on loopback


def publish(root: Path, version: str, *, lookup_line: str = "") -> BundleVersion:
    folder = bundle_folder(root / version, version=version)
    if lookup_line:
        ledger_lookup_skill(folder / "skills" / "ledger-lookup", extra_line=lookup_line)
    call_command("bundle_load", str(folder), "--publish", verbosity=0)
    return BundleVersion.objects.get(bundle__slug="ledger-tools", version=version)


def skill_texts(version: BundleVersion) -> dict[str, str]:
    return {
        entry.skill_version.package.slug: entry.skill_version.skill_md
        for entry in version.skills.select_related("skill_version__package")
    }


def test_an_index_source_follows_another_pixies_delivery_index(serial_live_server, tmp_path):  # noqa: F811
    owner = make_user("owen")
    acme = make_workspace("acme", owner=owner)
    first = publish(tmp_path / "published", "1.0.0")
    apply(acme, owner, Plan.Kind.INSTALL, first)
    _, secret = delivery_token_create(workspace=acme, actor=owner, name="Mirror")
    index = f"{serial_live_server}/deliver/{secret}/.well-known/agent-skills/index.json"
    # An index carries skills, not a bundle's hosts and approvals: the source gives them.
    source = Source.objects.create(
        kind=Source.Kind.INDEX, url=index, ref="", metadata=MIRRORED,
    )  # fmt: skip

    checked = source_check(source)

    assert checked.last_result == "draft", checked.last_message
    draft = checked.waiting_draft
    assert (draft.bundle.slug, draft.version) == ("ledger-mirror", "1.0.0")
    assert skill_texts(draft) == skill_texts(first)
    assert draft.provenance.repository == index

    # The workspace there upgrades to a version that changes one skill.
    second = publish(tmp_path / "published", "1.1.0", lookup_line="Quote the account back.\n")
    apply(acme, owner, Plan.Kind.UPGRADE, second)
    checked = source_check(Source.objects.get(pk=source.pk))

    assert checked.last_result == "draft", checked.last_message
    upgraded = checked.waiting_draft
    assert skill_texts(upgraded) == skill_texts(second)
    assert "Quote the account back." in skill_texts(upgraded)["ledger-lookup"]
    assert "replacing the waiting draft 1.0.0" in checked.last_message

    again = source_check(Source.objects.get(pk=source.pk))
    assert (again.last_result, again.waiting_draft_id) == ("unchanged", upgraded.pk)
