from django.core.cache import cache
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Status,
)
from catalog.selectors import bundle_version_contents, latest_published
from catalog.services.findings import bundle_version_findings
from catalog.services.signing import signature_summary
from catalog.skill_files_display import file_rows, size_of, skill_md_bytes, totals_of
from catalog.validators import version_key


class PublisherSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="operator, workspace or third_party.")
    trusted = serializers.BooleanField(
        source="is_trusted",
        help_text="Operator-approved: the operator itself, or a publisher it marked trusted.",
    )
    label = serializers.CharField(help_text='The name as offered, e.g. "Pixie (operator)".')


REVIEW_FIELDS = ["catalog_review", "catalog_review_reason"]


FINDING_KINDS = [
    "hidden_text", "undeclared_host", "undeclared_credential", "guardrail", "context_budget"
]
FINDING_SEVERITIES = ["refuse", "warning", "info"]


class FindingSerializer(serializers.Serializer):
    """Something a person should weigh in a skill's text before approving (catalog.findings)."""

    kind = serializers.ChoiceField(choices=FINDING_KINDS)
    severity = serializers.ChoiceField(
        choices=FINDING_SEVERITIES,
        help_text="refuse: stops publishing unless an operator overrides with a reason.",
    )
    skill = serializers.CharField(help_text="The skill's slug.")
    file = serializers.CharField(help_text="SKILL.md, or a Markdown file beside it.")
    line = serializers.IntegerField()
    excerpt = serializers.CharField(help_text="The text around it, hidden characters shown.")
    message = serializers.CharField()


class SignatureSerializer(serializers.Serializer):
    """Who signed a version (catalog.services.signing.signature_summary). Every install,
    upgrade and roll-back checks the stored content against it before applying."""

    signed = serializers.BooleanField()
    signer = serializers.CharField(help_text="The publisher whose key signed the manifest.")
    signer_trusted = serializers.BooleanField(
        help_text="Whether the signer is operator-approved (a signature alone proves "
        "integrity, not trust)."
    )
    key_fingerprint = serializers.CharField()
    key_retired = serializers.BooleanField(help_text="The key has since been rotated out.")
    key_held_by_pixie = serializers.BooleanField(
        help_text="False when the publisher signs outside Pixie."
    )
    manifest_sha256 = serializers.CharField(help_text="The sha256 of the signed manifest.")


class VersionSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleVersion
        fields = ["version", "status", "published_at", "yank_reason", *REVIEW_FIELDS]
        extra_kwargs = {
            "catalog_review": {
                "help_text": "approved: in the catalog; pending or refused: seen only by "
                "the publishing workspace (and operators)."
            },
            "catalog_review_reason": {"help_text": "Why an operator refused it."},
        }


class BundleSerializer(serializers.ModelSerializer):
    publisher = PublisherSerializer()
    latest_version = serializers.SerializerMethodField()

    class Meta:
        model = Bundle
        fields = ["slug", "name", "description", "publisher", "latest_version"]

    def get_latest_version(self, bundle) -> str | None:
        latest = latest_published(bundle.visible_versions)
        return latest.version if latest else None


class BundleDetailSerializer(BundleSerializer):
    versions = serializers.SerializerMethodField()

    class Meta(BundleSerializer.Meta):
        fields = [*BundleSerializer.Meta.fields, "versions"]

    def get_versions(self, bundle) -> list[dict]:
        ordered = sorted(
            bundle.visible_versions, key=lambda v: version_key(v.version), reverse=True
        )
        return VersionSummarySerializer(ordered, many=True).data


class BundleSkillSerializer(serializers.ModelSerializer):
    slug = serializers.CharField(source="skill_version.package.slug")
    version = serializers.CharField(source="skill_version.version")
    name = serializers.CharField(source="skill_version.name")
    description = serializers.CharField(source="skill_version.description")
    body = serializers.CharField(source="skill_version.body")
    approvals = serializers.JSONField(source="skill_version.approvals")
    frontmatter = serializers.JSONField(source="skill_version.frontmatter")
    digest = serializers.CharField(source="skill_version.digest")
    size = serializers.SerializerMethodField()
    files = serializers.SerializerMethodField()

    class Meta:
        model = BundleSkill
        fields = [
            "position",
            "slug",
            "version",
            "name",
            "description",
            "body",
            "approvals",
            "frontmatter",
            "digest",
            "size",
            "files",
        ]

    def get_size(self, entry) -> dict:
        """Lines and estimated tokens of the body, against the format's guidance; bytes of
        SKILL.md and every file."""
        version = entry.skill_version
        files = version.files.all()
        return {
            **size_of(version.body),
            "bytes": skill_md_bytes(version) + sum(f.size for f in files),
        }

    def get_files(self, entry) -> list[dict]:
        """Supporting files (SKILL.md is served at files/SKILL.md and not listed)."""
        version = entry.skill_version
        bundle_version = entry.bundle_version
        return file_rows(
            version.files.all(),
            lambda path: reverse(
                "bundle-skill-file",
                kwargs={
                    "slug": bundle_version.bundle.slug,
                    "version": bundle_version.version,
                    "skill": version.package.slug,
                    "path": path,
                },
            ),
        )


class BundleHostSerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleHost
        fields = ["host", "port", "purpose"]


class BundleCredentialSerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleCredential
        fields = ["name", "host", "purpose"]


class ApprovalRuleSerializer(serializers.Serializer):
    skill = serializers.CharField()
    operation = serializers.CharField()
    rule = serializers.CharField()


class ProvenanceSerializer(serializers.Serializer):
    """The upstream commit a source made the version from (in its signed manifest)."""

    repository = serializers.CharField()
    ref = serializers.CharField()
    commit = serializers.CharField(help_text="The commit's full SHA.")
    committed_at = serializers.DateTimeField(allow_null=True)
    author = serializers.CharField(help_text="Upstream's words, bounded and made visible.")
    message = serializers.CharField(help_text="Upstream's words, bounded and made visible.")


class BundleVersionHeadSerializer(serializers.ModelSerializer):
    """A version's own fields and its bundle's, without its contents."""

    bundle = serializers.CharField(source="bundle.slug")
    name = serializers.CharField(source="bundle.name")
    publisher = PublisherSerializer(source="bundle.publisher")
    signature = serializers.SerializerMethodField()
    findings = serializers.SerializerMethodField()

    class Meta:
        model = BundleVersion
        fields = [
            "bundle",
            "name",
            "version",
            "status",
            "description",
            "notes",
            "publisher",
            "published_at",
            "yank_reason",
            *REVIEW_FIELDS,
            "catalog_review_flags",
            "signature",
            "findings",
            "findings_override_reason",
        ]

    @extend_schema_field(FindingSerializer(many=True))
    def get_findings(self, bundle_version) -> list[dict]:
        """What a person should weigh in the skills' text (scanned at publish)."""
        return bundle_version_findings(bundle_version)

    @extend_schema_field(SignatureSerializer)
    def get_signature(self, bundle_version) -> dict:
        return SignatureSerializer(signature_summary(bundle_version)).data


class BundleVersionSerializer(BundleVersionHeadSerializer):
    skills = BundleSkillSerializer(many=True)
    hosts = BundleHostSerializer(many=True)
    credentials = BundleCredentialSerializer(many=True)
    approval_rules = serializers.SerializerMethodField()
    totals = serializers.SerializerMethodField()
    download = serializers.SerializerMethodField()
    provenance = serializers.SerializerMethodField()

    class Meta(BundleVersionHeadSerializer.Meta):
        fields = [
            *BundleVersionHeadSerializer.Meta.fields,
            "skills",
            "hosts",
            "credentials",
            "approval_rules",
            "totals",
            "download",
            "provenance",
        ]

    @extend_schema_field(ProvenanceSerializer(allow_null=True))
    def get_provenance(self, bundle_version) -> dict | None:
        """Where the version came from upstream (a source's commit), or null."""
        provenance = bundle_version.provenance
        return ProvenanceSerializer(provenance).data if provenance else None

    @staticmethod
    def get_totals(bundle_version) -> dict:
        """Skills, files, bytes, lines and estimated tokens of the whole version."""
        return totals_of(entry.skill_version for entry in bundle_version.skills.all())

    @staticmethod
    def get_download(bundle_version) -> str:
        """The version as a .zip in the bundle folder format."""
        return reverse(
            "bundle-version-download",
            kwargs={"slug": bundle_version.bundle.slug, "version": bundle_version.version},
        )

    @staticmethod
    def get_approval_rules(bundle_version) -> list[dict]:
        rules = [
            {"skill": entry.skill_version.package.slug, **approval}
            for entry in bundle_version.skills.all()
            for approval in entry.skill_version.approvals
        ]
        return ApprovalRuleSerializer(rules, many=True).data


CONTENT_FIELDS = [
    "skills", "hosts", "credentials", "approval_rules", "totals", "download", "provenance"
]  # fmt: skip


def bundle_version_head(bundle_version: BundleVersion) -> dict:
    """What of a version's response may change after it is published (its status, yank
    reason, review, signer's state, findings) and its bundle's: no query beyond the row."""
    return BundleVersionHeadSerializer(bundle_version).data


def bundle_version_data(bundle_version: BundleVersion, own: dict | None = None) -> dict:
    """BundleVersionSerializer's data for a version read with contents=False.

    A published (or yanked) version's skills, hosts and credentials never change,
    so their serialized form is kept in the cache for good; the version's own row
    (status, yank reason) and its bundle's are read and serialized every time.
    A draft's contents may still change, so they are always read afresh.
    """
    own = bundle_version_head(bundle_version) if own is None else own
    if bundle_version.status == Status.DRAFT or bundle_version.published_at is None:
        return {**own, **_contents(bundle_version)}
    # published_at in the key: a pk alone could be reused by a restored or test database.
    published = bundle_version.published_at.timestamp()
    # "2": the contents with their provenance (a cache kept across a release holds none).
    key = f"catalog:bundle-version-contents:2:{bundle_version.pk}:{published}"
    return {**own, **cache.get_or_set(key, lambda: _contents(bundle_version), timeout=None)}


def _contents(bundle_version: BundleVersion) -> dict:
    data = BundleVersionSerializer(bundle_version_contents(bundle_version=bundle_version)).data
    return {field: data[field] for field in CONTENT_FIELDS}


# Comparisons (a workspace skill's revisions, a bundle's versions): documented shapes of
# what catalog.skill_history and catalog.bundle_history return.
CHANGES = ["added", "removed", "changed"]
SKILL_CHANGES = [*CHANGES, "unchanged"]


class FieldChangeSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="name, short_description, frontmatter or body")
    changed = serializers.BooleanField()
    before = serializers.CharField()
    after = serializers.CharField()
    diff = serializers.ListField(
        child=serializers.CharField(), help_text="A unified diff, one line an item"
    )


class FileChangeSerializer(serializers.Serializer):
    path = serializers.CharField()
    change = serializers.ChoiceField(choices=[*CHANGES, "moved"])
    from_path = serializers.CharField(
        allow_null=True, required=False, help_text="Where a moved file was (the same bytes)"
    )
    old = serializers.DictField(allow_null=True, help_text="path, sha256, size, executable")
    new = serializers.DictField(allow_null=True)
    mode = serializers.CharField(help_text="A change of the executable bit, in words")
    content = serializers.CharField(
        help_text="text, binary, too_long, same, removed, or not_shown (past the "
        "5,000 lines of file diff one plan or comparison shows)"
    )
    diff = serializers.ListField(child=serializers.CharField())


def field_change_data(change) -> dict:
    """A skill_history.FieldChange as FieldChangeSerializer documents it."""
    return {
        "field": change.field,
        "changed": change.changed,
        "before": change.before,
        "after": change.after,
        "diff": change.diff,
    }


class HostChangeSerializer(serializers.Serializer):
    host = serializers.CharField()
    port = serializers.IntegerField()
    change = serializers.ChoiceField(choices=CHANGES)
    before = serializers.CharField(allow_null=True, help_text="Its purpose before")
    after = serializers.CharField(allow_null=True, help_text="Its purpose after")


class CredentialChangeSerializer(serializers.Serializer):
    name = serializers.CharField()
    change = serializers.ChoiceField(choices=CHANGES)
    before = serializers.DictField(allow_null=True, help_text="host and purpose before")
    after = serializers.DictField(allow_null=True, help_text="host and purpose after")


class SkillChangeSerializer(serializers.Serializer):
    slug = serializers.CharField()
    change = serializers.ChoiceField(choices=SKILL_CHANGES)
    before = serializers.CharField(allow_null=True, help_text="Its skill version before")
    after = serializers.CharField(allow_null=True, help_text="Its skill version after")
    moved = serializers.BooleanField(help_text="Its place in the bundle's order changed")
    fields = FieldChangeSerializer(many=True, help_text="The fields that changed")
    files = FileChangeSerializer(many=True)


class BundleComparisonSerializer(serializers.Serializer):
    bundle = serializers.CharField()
    before = serializers.CharField()
    after = serializers.CharField()
    identical = serializers.BooleanField()
    skills = SkillChangeSerializer(many=True)
    hosts = HostChangeSerializer(many=True)
    credentials = CredentialChangeSerializer(many=True)
    notes = FieldChangeSerializer()
