"""History rows written from the values in memory (pixie.core.audit.records.add_all_to_revision) are
the very rows django-reversion writes through Django's serialiser."""

import json
from datetime import UTC, datetime

import pytest
import reversion
from django.core import serializers
from django.db import connection
from django.test.utils import CaptureQueriesContext
from reversion import revisions as reversion_revisions
from reversion.models import Version

from agents.models import AgentSkill
from catalog.models import (
    BundleVersion,
    Generation,
    Installation,
    Plan,
    SkillRevision,
    WorkspaceSkill,
)
from egress.models import CredentialRequirement, EgressRule
from pixie.core.audit.records import _history_fields, add_all_to_revision, audited, history_json
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


def django_json(obj) -> str:
    options = reversion_revisions._get_options(obj.__class__)
    return serializers.serialize("json", [obj], fields=options.fields)


def every_registered_row():
    for model in reversion.get_registered_models():
        yield from model._base_manager.order_by("pk")


def test_every_registered_row_serialises_as_django_s_serialiser_does(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    seen = set()
    for obj in every_registered_row():
        if _history_fields(obj.__class__) is None:
            continue  # recorded by reversion itself
        assert history_json(obj) == django_json(obj), obj
        seen.add(obj.__class__)
    written = {WorkspaceSkill, SkillRevision, Installation, Generation, Plan, AgentSkill,
               EgressRule, CredentialRequirement}  # fmt: skip
    assert written <= seen


def test_awkward_values_serialise_as_django_s_serialiser_does(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    revision = SkillRevision.objects.order_by("pk").first()
    # In memory, not saved: the values as an apply holds them before any read.
    revision.body = 'Quotes " and \\ backslashes,\n\ttabs, ünïcödé, emoji 🧾, \u2028 and \x00?'
    revision.name = "Ñame <script>&amp;</script>"
    revision.frontmatter = {"z": [1, 2.5, None, True], "a": {"nested": "é", "n": -0.0},
                            "big": 2**70, "nan": float("inf")}  # fmt: skip
    revision.approvals = ["take-payment", {"rule": "ok"}]
    revision.created_at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    revision.created_by = None
    assert history_json(revision) == django_json(revision)
    rule = EgressRule.objects.get()
    rule.plan = None
    rule.approved_at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert history_json(rule) == django_json(rule)
    skill = WorkspaceSkill.objects.order_by("pk").first()
    skill.archived_at, skill.installation = datetime(2026, 5, 6, tzinfo=UTC), None
    assert history_json(skill) == django_json(skill)


def recorded(comment: str) -> list[tuple]:
    (revision,) = reversion.models.Revision.objects.filter(comment=comment)
    return list(
        Version.objects.filter(revision=revision)
        .order_by("pk")
        .values_list(
            "content_type_id", "object_id", "db", "format", "serialized_data", "object_repr"
        )  # fmt: skip
    )


def test_the_versions_are_reversion_s_own_in_the_same_order(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    # A plan first, then the rows, one of them twice (recorded once, at its first place),
    # and a bundle version, whose registration follows its parts (reversion records it).
    objects = [
        Plan.objects.get(),
        *WorkspaceSkill.objects.order_by("-pk"),
        *SkillRevision.objects.select_related("skill").order_by("pk"),
        *AgentSkill.objects.select_related("agent", "skill").order_by("pk"),
        Installation.objects.get(),
        Plan.objects.get(),
        BundleVersion.objects.get(version="2.1.0"),
        Generation.objects.get(),
    ]
    with audited(actor=owner, comment="one at a time"):
        for obj in objects:
            reversion.add_to_revision(obj)
    with audited(actor=owner, comment="all at once"):
        add_all_to_revision(objects)
    assert recorded("all at once") == recorded("one at a time")


def test_an_applied_install_is_in_its_history_as_a_reader_reads_its_rows(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    plan = install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    revision = Version.objects.get_for_object(plan).first().revision
    versions = list(revision.version_set.all())
    kinds = {v._model for v in versions}
    assert {WorkspaceSkill, SkillRevision, AgentSkill, EgressRule, CredentialRequirement,
            Installation, Generation, Plan} <= kinds  # fmt: skip
    for version in versions:
        row = version._model._base_manager.get(pk=version.object_id)
        # The same fields and values as the row read back (JSON's key order aside).
        assert json.loads(version.serialized_data) == json.loads(django_json(row)), row
        assert version.object_repr == str(row)
    assert len(versions) == WorkspaceSkill.objects.count() * 2 + AgentSkill.objects.count() + 5


def test_a_row_deleted_before_its_revision_is_saved_is_not_recorded(acme, owner):
    """reversion's rule, which Pixie's save_revision keeps: history records only what is
    still there when the revision is saved, whoever added it."""
    gone = CredentialRequirement.objects.create(workspace=acme, name="GONE_TOKEN")
    kept = CredentialRequirement.objects.create(workspace=acme, name="KEPT_TOKEN")
    with audited(actor=owner, comment="added, then one deleted"):
        add_all_to_revision([gone, kept])
        reversion.add_to_revision(acme)
        CredentialRequirement.objects.filter(pk=gone.pk).delete()
    objects = {(ct, object_id) for ct, object_id, *_ in recorded("added, then one deleted")}
    kinds = {Version(content_type_id=ct).content_type.model for ct, _ in objects}
    assert {object_id for _ct, object_id in objects} == {str(kept.pk), str(acme.pk)}
    assert kinds == {"credentialrequirement", "workspace"}


def test_rows_their_writer_vouches_for_are_saved_without_being_read_back(acme, owner):
    """add_all_to_revision(written_here=True): an apply wrote the rows a moment ago in its
    own transaction, so saving their history reads none of them back (one query fewer
    than the same rows added plainly)."""
    rows = [CredentialRequirement.objects.create(workspace=acme, name=f"TOKEN_{n}")
            for n in range(3)]  # fmt: skip

    def save(comment, **vouched):
        # The revision is saved as the audited block ends, inside the capture.
        with CaptureQueriesContext(connection) as queries, audited(actor=owner, comment=comment):
            add_all_to_revision(rows, **vouched)
        return [q["sql"] for q in queries.captured_queries]

    save("first")  # a workspace's first change also names its chain in the anchor
    plain = save("plainly")
    vouched = save("vouched for", written_here=True)
    assert len(vouched) == len(plain) - 1
    table = CredentialRequirement._meta.db_table
    assert any(f'FROM "{table}"' in sql for sql in plain)
    assert not any(f'FROM "{table}"' in sql for sql in vouched)
    assert [row[1:] for row in recorded("vouched for")] == [row[1:] for row in recorded("plainly")]
