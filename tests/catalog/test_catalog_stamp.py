"""The catalog's stamp (catalog.models.stamp): database triggers change it with any write
to what the catalog API's answers are made of, by whatever path the write comes, in the
same transaction; so an ETag over it never hides a change, and a reader never sees a
new stamp before the rows it stands for."""

import threading

import pytest
from django.contrib.auth.models import Group
from django.core.cache import caches
from django.db import connection, connections, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from catalog.models import Bundle, CatalogStamp, Plan, Publisher
from catalog.models.stamp import SHARDS
from catalog.selectors import catalog_stamp
from catalog.stamp_triggers import (
    WATCHED_TABLES,
    stamp_triggered_tables,
    stamp_triggers_install,
)
from pixie.core.models import ApiToken, Membership
from pixie.core.people.permissions import AUDITORS_GROUP
from tests.clients import token_client
from tests.factories import make_user, make_workspace

# The catalog's tables no answer of the catalog API reads: a workspace's own state,
# content-addressed bytes (never changed once written) and the stamp itself.
NOT_WATCHED = {
    "catalog_installation",
    "catalog_plan",
    "catalog_generation",
    "catalog_workspaceskill",
    "catalog_skillrevision",
    "catalog_revisionfile",
    "catalog_fileblob",
    "catalog_catalogstamp",
}


@pytest.fixture
def reader(db):
    person = make_user("reader")
    make_workspace("readers", members=[person])
    return person


@pytest.mark.django_db
def test_every_table_an_answer_reads_has_its_trigger():
    catalog_tables = {t for t in connection.introspection.table_names() if t.startswith("catalog_")}
    assert catalog_tables - NOT_WATCHED <= set(WATCHED_TABLES), (
        "A new catalog table: watch it (catalog/stamp_triggers.py) or say here why not."
    )
    assert stamp_triggered_tables(connection) == set(WATCHED_TABLES)
    # Run again (after every migrate), nothing is doubled or lost; a trigger lost (SQLite
    # drops them when a migration remakes a table) is made again.
    assert stamp_triggers_install(connection) == []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("DROP TRIGGER catalog_stamp ON catalog_bundle")
        else:
            cursor.execute('DROP TRIGGER "catalog_stamp_catalog_bundle_update"')
    assert "catalog_bundle" not in stamp_triggered_tables(connection)
    assert stamp_triggers_install(connection) == ["catalog_bundle"]
    assert stamp_triggered_tables(connection) == set(WATCHED_TABLES)


@pytest.mark.django_db
def test_a_write_by_any_path_changes_the_stamp(demo_catalog, operator):
    before = catalog_stamp()
    assert before
    steps = {
        "a saved row": lambda: Bundle.objects.filter(slug="accounts-receivable").first().save(),
        "a bulk update (no signals)": lambda: Publisher.objects.update(name="Renamed"),
        "a membership": lambda: make_workspace("stamped", members=[make_user("stamped")]),
        "a deletion": lambda: Membership.objects.filter(workspace__slug="stamped").delete(),
        "a role": lambda: operator.groups.add(Group.objects.get_or_create(name=AUDITORS_GROUP)[0]),
        "plain SQL": lambda: connection.cursor().execute(
            "UPDATE catalog_bundle SET description = description"
        ),
    }
    for step, write in steps.items():
        write()
        after = catalog_stamp()
        assert after != before, step
        before = after


@pytest.mark.django_db
def test_what_no_answer_reads_leaves_the_stamp(demo_catalog, owner):
    before = catalog_stamp()
    Plan.objects.filter(pk=-1).update(error="")
    ApiToken.objects.filter(pk=-1).update(name="unused")
    # A login writes last_login: nothing an answer says, so every ETag holds.
    type(owner).objects.filter(pk=owner.pk).update(last_login=timezone.now())
    assert catalog_stamp() == before
    type(owner).objects.filter(pk=owner.pk).update(is_active=False)
    assert catalog_stamp() != before
    before = catalog_stamp()
    make_user("newcomer")  # a user made: their id's facts are new, whatever was kept
    assert catalog_stamp() != before


@pytest.mark.django_db
def test_a_write_rolled_back_leaves_the_stamp(demo_catalog):
    before = catalog_stamp()
    with pytest.raises(RuntimeError), transaction.atomic():
        Bundle.objects.update(description="Never kept.")
        assert catalog_stamp() != before  # the writer sees its own change
        raise RuntimeError
    assert catalog_stamp() == before


def client_of(reader, kind: str) -> APIClient:
    """A login's session, or an API token, whose own read carries the stamp."""
    if kind == "token":
        return token_client(reader)
    client = APIClient()
    client.force_authenticate(reader)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["login", "token"])
def test_an_emptied_stamp_comes_back_and_answers_nothing_from_memory(demo_catalog, reader, kind):
    """A database emptied (a test's flush) has no stamp: nothing is answered 304 or served
    as rendered until a write makes one again."""
    client = client_of(reader, kind)
    connection.cursor().execute("DELETE FROM catalog_catalogstamp")
    assert catalog_stamp() == ()
    url = "/api/bundles/accounts-receivable/versions/2.1.0/"
    first = client.get(url)
    assert first.status_code == 200
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200
    # Nothing kept under an ETag no request will name again.
    key = f"catalog:rendered:{first['ETag'].strip(chr(34))}:application/json"
    assert caches["rendered"].get(key) is None
    Bundle.objects.update(description="Back.")
    assert len(catalog_stamp()) == 1
    etag = client.get(url)["ETag"]
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgres_only")
@pytest.mark.parametrize("kind", ["login", "token"])
def test_a_reader_sees_a_change_exactly_when_it_commits(demo_catalog, reader, kind):
    """A writer holds a change in an open transaction while a reader asks, with real
    threads and transactions: the reader gets the old answer and its 304 until the
    commit, then the new answer, never the old one behind a 304."""
    client = client_of(reader, kind)
    url = "/api/bundles/"
    first = client.get(url)
    written, release = threading.Event(), threading.Event()

    def writer():
        try:
            with transaction.atomic():
                Bundle.objects.filter(slug="accounts-receivable").update(name="Receivables")
                written.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=writer)
    thread.start()
    assert written.wait(timeout=30)
    during = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert during.status_code == 304
    release.set()
    thread.join(timeout=30)
    after = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert after.status_code == 200
    names = {b["slug"]: b["name"] for b in after.json()["results"]}
    assert names["accounts-receivable"] == "Receivables"


@pytest.mark.django_db
@pytest.mark.usefixtures("postgres_only")
def test_a_transaction_changes_its_own_shard_only(demo_catalog):
    """Each transaction writes the shard its id picks, so two writers of the catalog
    wait for each other only when their ids meet modulo the shards."""
    shards = dict(CatalogStamp.objects.values_list("shard", "number"))
    Publisher.objects.update(name="Renamed")
    with connection.cursor() as cursor:
        cursor.execute("SELECT txid_current() %% %s", [SHARDS])
        mine = cursor.fetchone()[0]
    after = dict(CatalogStamp.objects.values_list("shard", "number"))
    assert {shard for shard in after if after[shard] != shards.get(shard)} == {mine}
