"""What an apply leaves in history: every row it wrote, as a reader reads it back, in one
revision that its audit entry counts and chains (recorded through django-reversion's
public add_to_revision, pixie.core.audit.records.add_all_to_revision)."""

import json

import pytest
import reversion
from django.core import serializers
from reversion.models import Revision, Version

from agents.models import AgentSkill
from catalog.models import Generation, Installation, Plan, SkillRevision, WorkspaceSkill
from egress.models import CredentialRequirement, EgressRule
from pixie.core.audit.chain import chain_verify
from pixie.core.audit.records import add_all_to_revision, audited
from pixie.core.models import AuditEntry
from tests.installer.flow import install

pytestmark = pytest.mark.django_db


def test_an_applied_install_is_in_its_history_as_a_reader_reads_its_rows(
    acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks
):
    plan = install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    revision = Version.objects.get_for_object(plan).first().revision
    versions = list(revision.version_set.select_related("content_type"))
    kinds = {v.content_type.model_class() for v in versions}
    assert {WorkspaceSkill, SkillRevision, AgentSkill, EgressRule, CredentialRequirement,
            Installation, Generation, Plan} <= kinds  # fmt: skip
    for version in versions:
        row = version.content_type.model_class()._base_manager.get(pk=version.object_id)
        # The fields history recorded hold what the row holds now, as Django's
        # serialiser writes them (datetimes to the millisecond).
        recorded = json.loads(version.serialized_data)[0]
        (read_back,) = json.loads(serializers.serialize("json", [row], fields=recorded["fields"]))
        assert recorded == read_back, row
        assert version.object_repr == str(row)
    assert len(versions) == WorkspaceSkill.objects.count() * 2 + AgentSkill.objects.count() + 5
    entry = AuditEntry.objects.get(revision=revision)
    assert (entry.workspace_id, entry.plan_id, entry.object_count) == (
        acme.pk,
        plan.pk,
        len(versions),
    )
    assert chain_verify().problems == []


def test_a_row_deleted_before_its_revision_is_saved_is_not_recorded(acme, owner):
    """reversion's rule: history records only what is still there when the revision is
    saved, whoever added it."""
    gone = CredentialRequirement.objects.create(workspace=acme, name="GONE_TOKEN")
    kept = CredentialRequirement.objects.create(workspace=acme, name="KEPT_TOKEN")
    with audited(actor=owner, comment="added, then one deleted"):
        add_all_to_revision([gone, kept])
        reversion.add_to_revision(acme)
        CredentialRequirement.objects.filter(pk=gone.pk).delete()
    revision = Revision.objects.get(comment="added, then one deleted")
    recorded = {
        (v.content_type.model, v.object_id)
        for v in revision.version_set.select_related("content_type")
    }
    assert recorded == {("credentialrequirement", str(kept.pk)), ("workspace", str(acme.pk))}
    assert AuditEntry.objects.get(revision=revision).object_count == 2
