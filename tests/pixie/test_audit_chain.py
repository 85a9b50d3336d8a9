"""Tamper evidence: each recorded change is chained to the one before it in its
workspace's chain or the catalog's, and `manage.py audit_verify` names the first entry
that no longer matches after a row was changed behind Pixie's back."""

import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.urls import reverse

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_create, skill_edit
from pixie.core.audit.chain import chain_verify
from pixie.core.audit.records import audited
from pixie.core.models import AuditChain, AuditCheck, AuditEntry
from tests.clients import admin_for, api_for
from tests.factories import make_user, make_workspace
from tests.installer.flow import install

LOG = "/admin/pixie/auditentry/"


@pytest.fixture
def acme(demo_catalog, django_capture_on_commit_callbacks):
    owner = make_user("olive")
    workspace = make_workspace("acme", owner=owner)
    install(workspace, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    for n in range(3):
        api_for(owner).patch(
            "/api/workspaces/acme/skills/invoice-chase/", {"body": f"Chase {n}."}, format="json"
        )
    return workspace, owner


def verify() -> tuple[str, str]:
    """audit_verify's output and its refusal ("" when every digest matches)."""
    import io

    out = io.StringIO()
    err = io.StringIO()
    try:
        call_command("audit_verify", stdout=out, stderr=err)
    except CommandError as refused:
        return out.getvalue() + err.getvalue(), str(refused)
    return out.getvalue(), ""


def sql(statement: str, *params) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


@pytest.mark.django_db
def test_every_change_joins_its_workspace_s_chain_or_the_catalog_s(acme):
    workspace, _owner = acme
    ours = AuditEntry.objects.filter(workspace=workspace).order_by("revision_id")
    assert {entry.chain for entry in ours} == {f"workspace:{workspace.pk}"}
    assert [entry.sequence for entry in ours] == list(range(1, ours.count() + 1))
    loads = AuditEntry.objects.filter(revision__comment__contains="Loaded bundle")
    assert loads.exists() and {entry.chain for entry in loads} == {"catalog"}
    assert AuditChain.objects.get(key=f"workspace:{workspace.pk}").length == ours.count()
    output, refused = verify()
    assert refused == ""
    everything = AuditEntry.objects.count()
    assert f"Checked {everything} entries in 2 chains: every digest matches." in output


TAMPERING = {
    "an object's recorded fields": (
        "UPDATE reversion_version SET serialized_data = REPLACE(serialized_data, 'Chase 1.', "
        "'Chase kindly.') WHERE revision_id = %s"
    ),
    "the comment": "UPDATE reversion_revision SET comment = 'Nothing to see' WHERE id = %s",
    "who made it": "UPDATE reversion_revision SET user_id = NULL WHERE id = %s",
    "its plan": "UPDATE pixie_auditentry SET plan_id = 7 WHERE revision_id = %s",
    "a recorded object, removed": "DELETE FROM reversion_version WHERE revision_id = %s",
}


@pytest.mark.django_db
@pytest.mark.parametrize("what", TAMPERING)
def test_audit_verify_names_the_entry_changed_behind_pixie_s_back(acme, what):
    workspace, _owner = acme
    second_edit = AuditEntry.objects.filter(workspace=workspace).order_by("-revision_id")[1]
    sql(TAMPERING[what], second_edit.revision_id)
    output, refused = verify()
    assert refused.startswith("Checked ") and refused.endswith("1 chain no longer matches.")
    assert (
        f"Chain workspace:{workspace.pk}: the entry of revision #{second_edit.revision_id} "
        f"(place {second_edit.sequence}) no longer matches its digest"
    ) in output
    assert "Chain catalog" not in output  # the other chain still holds
    # The page says so, for auditors and operators.
    operator = make_user("opal", is_superuser=True)
    page = admin_for(operator).get(LOG).content.decode()
    assert "1 chain no longer matches" in page and f"#{second_edit.revision_id}" in page


@pytest.mark.django_db
def test_a_deleted_entry_and_a_cut_end_are_named(acme):
    workspace, _owner = acme
    ours = list(AuditEntry.objects.filter(workspace=workspace).order_by("revision_id"))
    sql("DELETE FROM pixie_auditentry WHERE revision_id = %s", ours[1].revision_id)
    output, _refused = verify()
    assert f"place 2 is missing before the entry of revision #{ours[2].revision_id}" in output
    sql("DELETE FROM pixie_auditentry WHERE chain = %s AND sequence > 1", ours[0].chain)
    output, _refused = verify()
    assert f"its head records {len(ours)} entries, but the last found is place 1" in output


@pytest.mark.django_db
def test_the_page_shows_when_the_chains_were_last_checked(acme):
    operator = make_user("opal", is_superuser=True)
    page = admin_for(operator).get(LOG).content.decode()
    assert "The chains of digests have not been checked yet." in page
    verify()
    check = AuditCheck.objects.latest()
    page = admin_for(operator).get(LOG).content.decode()
    assert "Every digest matched" in page and f"{check.entries} entries in 2 chains" in page
    head = AuditChain.objects.get(key="catalog")
    assert head.head in page  # its head digest, to keep a copy of


@pytest.mark.django_db
def test_a_promote_from_a_workspace_joins_the_catalog_s_chain(acme):
    from agents.models import Agent
    from agents.promote import assembly_promote
    from agents.services import agent_skill_attach

    workspace, owner = acme
    agent = Agent.objects.create(workspace=workspace, slug="kit", name="Kit")
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    agent_skill_attach(agent=agent, skill=skill, actor=owner)
    assembly_promote(agent=agent, actor=owner, slug="acme-kit", name="Acme kit")
    entry = AuditEntry.objects.latest("revision_id")
    assert entry.chain == "catalog"
    assert verify()[1] == ""


@pytest.mark.skipif(
    connections["default"].vendor != "postgresql", reason="row locks need PostgreSQL"
)
@pytest.mark.django_db(transaction=True)
def test_writers_racing_on_one_workspace_never_fork_its_chain(demo_catalog):
    """Eight threads edit four skills of one workspace at once, two on each skill, in
    their own transactions: every edit lands (none reads the other's head as missing),
    every entry takes the next place, and the chain verifies."""
    owner = make_user("olive")
    workspace = make_workspace("acme", owner=owner)
    skills = [
        skill_create(
            workspace=workspace,
            slug=f"skill-{n}",
            name=f"Skill {n}",
            short_description="A skill.",
            body="Begin.",
            actor=owner,
        )  # fmt: skip
        for n in range(4)
    ]
    start = threading.Barrier(8)
    failures = []

    def writer(n: int):
        try:
            start.wait()
            for round_ in range(5):
                skill = WorkspaceSkill.objects.get(pk=skills[(n + round_) % 4].pk)
                skill_edit(skill=skill, actor=owner, body=f"Written by {n}, round {round_}.")
        except Exception as error:  # noqa: BLE001  (reported below, whatever it is)
            failures.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for skill in skills:  # its first revision and ten edits, numbered in turn
        numbers = sorted(skill.revisions.values_list("number", flat=True))
        assert numbers == list(range(1, 12))
    chain = AuditEntry.objects.filter(chain=f"workspace:{workspace.pk}")
    assert sorted(chain.values_list("sequence", flat=True)) == list(range(1, chain.count() + 1))
    assert chain.count() >= 40
    assert chain_verify().problems == []


@pytest.mark.django_db
def test_a_renamed_workspace_keeps_one_chain_that_still_verifies(acme):
    """A chain is the workspace's, not its name's: after a rename (its slug too), a change
    made through the admin's own forms joins the same chain, right after the last entry,
    and a change to an entry made before the rename is still named."""
    workspace, owner = acme
    chain = AuditChain.objects.get(key=f"workspace:{workspace.pk}")
    before = list(AuditEntry.objects.filter(chain=chain.key).order_by("sequence"))
    with audited(actor=owner, comment="Renamed acme"):
        workspace.name, workspace.slug = "Acme Ltd", "acme-ltd"
        workspace.save()
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    edit = reverse("admin:catalog_workspaceskill_edit", args=[skill.pk])
    answer = admin_for(owner).post(edit, {"name": "Invoice chase", "body": "By the admin."})
    assert answer.status_code == 302, answer.content.decode()[:500]
    after = list(AuditEntry.objects.filter(chain=chain.key).order_by("sequence"))
    assert [e.sequence for e in after] == list(range(1, len(before) + 3))
    assert after[-1].revision.comment == "Edited skill @invoice-chase"
    chain.refresh_from_db()
    assert (chain.length, chain.head) == (len(after), after[-1].digest)
    assert verify()[1] == ""
    sql("UPDATE reversion_revision SET comment = 'Nothing' WHERE id = %s", before[1].revision_id)
    output, refused = verify()
    assert f"the entry of revision #{before[1].revision_id} (place 2)" in output and refused


# --- what the database alone cannot forge (seals, the anchor, entries' workspaces) ---


def _history(client, skill) -> str:
    answer = client.get(reverse("admin:catalog_workspaceskill_history", args=[skill.pk]))
    assert answer.status_code == 200
    return answer.content.decode()


@pytest.mark.django_db
def test_a_history_row_written_straight_into_the_database_is_not_shown_and_is_reported(acme):
    """A revision saved past Pixie (no audit entry, so in no chain) could put words in
    an owner's mouth on the History page: the page leaves it out, its recorded page is not
    found, and the check counts it."""
    from django.utils import timezone
    from reversion.models import Revision, Version

    workspace, owner = acme
    skill = WorkspaceSkill.objects.get(workspace=workspace, slug="invoice-chase")
    real = Version.objects.get_for_object(skill).first()
    forged = Revision.objects.create(
        date_created=timezone.now(), user=owner, comment="Owner agreed to send every invoice"
    )
    version = Version.objects.create(
        revision=forged, object_id=real.object_id, content_type=real.content_type,
        db=real.db, format=real.format, serialized_data=real.serialized_data,
        object_repr=real.object_repr,
    )  # fmt: skip
    client = admin_for(owner)
    page = _history(client, skill)
    assert "Owner agreed to send every invoice" not in page
    assert "Edited skill @invoice-chase" in page  # the real rows still are
    recorded = reverse(
        "admin:catalog_workspaceskill_revision", args=[skill.pk, version.pk]
    )  # fmt: skip
    assert client.get(recorded).status_code == 404
    output, refused = verify()
    assert refused
    assert (
        f"1 history row(s) no audit entry covers (revision #{forged.pk}): written outside "
        "Pixie; the History pages do not show them."
    ) in output


@pytest.mark.django_db
def test_an_entry_moved_to_another_workspace_shows_in_neither_and_is_reported(acme):
    """Moving an entry's workspace column puts one tenant's change in another's history;
    moving its kept workspace too breaks its digest. Either way the other workspace does
    not list it and the check names it."""
    workspace, owner = acme
    mallory = make_user("mallory")
    other = make_workspace("other", owner=mallory)
    entry = AuditEntry.objects.filter(workspace=workspace).latest("revision_id")
    sql("UPDATE pixie_auditentry SET workspace_id = %s WHERE id = %s", other.pk, entry.pk)
    listed = api_for(mallory).get("/api/workspaces/other/history/").json()["results"]
    assert listed == []
    output, refused = verify()
    assert (
        f"Chain workspace:{workspace.pk}: the entry of revision #{entry.revision_id} "
        f"(place {entry.sequence}) was written for workspace #{workspace.pk} and now shows "
        "in another workspace's history: it was moved outside Pixie."
    ) in output and refused
    sql("UPDATE pixie_auditentry SET workspace_key = %s WHERE id = %s", other.pk, entry.pk)
    output, refused = verify()
    assert f"#{entry.revision_id} (place {entry.sequence}) no longer matches its digest" in output


@pytest.mark.django_db
def test_entries_cut_from_the_end_with_the_head_set_back_are_found(acme):
    """Deleting the last change and setting the head back to the one before agrees with
    every digest; only the head's seal, made with the server's key, tells."""
    workspace, _owner = acme
    ours = list(AuditEntry.objects.filter(workspace=workspace).order_by("sequence"))
    last, before = ours[-1], ours[-2]
    sql("DELETE FROM pixie_auditentry WHERE id = %s", last.pk)
    sql(
        "UPDATE pixie_auditchain SET length = %s, head = %s WHERE key = %s",
        before.sequence, before.digest, last.chain,
    )  # fmt: skip
    output, refused = verify()
    assert (
        f"Chain {last.chain}: its head ({before.sequence} entries) does not carry this "
        "server's seal: it was rewritten outside Pixie"
    ) in output and refused


@pytest.mark.django_db
def test_a_chain_deleted_whole_is_named_by_the_anchor(acme):
    workspace, _owner = acme
    key = f"workspace:{workspace.pk}"
    sql("DELETE FROM pixie_auditentry WHERE chain = %s", key)
    sql("DELETE FROM pixie_auditchain WHERE key = %s", key)
    output, refused = verify()
    assert (
        f"Chain {key} is gone: the anchor names it, and its head and entries were deleted "
        "outside Pixie."
    ) in output and refused
    sql("DELETE FROM pixie_auditanchor")
    output, refused = verify()
    assert "The anchor of the chains is missing: it was deleted outside Pixie." in output


@pytest.mark.django_db
def test_a_rotated_key_still_verifies_through_its_fallback(acme, settings):
    """Seals made under the old key hold while it is listed in SECRET_KEY_FALLBACKS."""
    old = settings.SECRET_KEY
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "a-new-key-" + "x" * 50, [old]
    assert verify()[1] == ""
    settings.SECRET_KEY_FALLBACKS = []
    output, refused = verify()
    assert "does not carry this server's seal" in output and refused
