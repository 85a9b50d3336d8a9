"""The operator's catalog: publishers, tools, skill packages and bundles."""

import reversion
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from catalog.manifest import Provenance
from catalog.validators import (
    DESCRIPTION_MAX,
    NAME_MAX,
    NOTES_MAX,
    SKILL_DESCRIPTION_MAX,
    validate_credential_name,
    validate_host,
    validate_semver,
)
from pixie.core.errors import ImmutableError
from pixie.core.names import validate_name
from pixie.core.namespace.fields import SlugField

from .immutable import PublishedImmutable


@reversion.register()
class Publisher(models.Model):
    class Kind(models.TextChoices):
        OPERATOR = "operator", "Operator"
        WORKSPACE = "workspace", "Workspace"
        THIRD_PARTY = "third_party", "Third party"

    slug = SlugField(unique=True)
    name = models.CharField(max_length=NAME_MAX, validators=[validate_name])
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OPERATOR)
    workspace = models.ForeignKey(
        "pixie.Workspace",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        help_text="The workspace that publishes, for a workspace publisher.",
    )
    trusted = models.BooleanField(
        default=False,
        help_text="Marked by an operator: this publisher's versions join the catalog when "
        "published, without a review each. An operator publisher is trusted by definition.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def is_trusted(self) -> bool:
        return self.kind == self.Kind.OPERATOR or self.trusted

    @property
    def label(self) -> str:
        """The name people see wherever a bundle is offered, with the operator's mark."""
        if self.kind == self.Kind.OPERATOR:
            return f"{self.name} (operator)"
        if self.trusted:
            return f"{self.name} (✓ operator-approved {self.get_kind_display().lower()})"
        return f"{self.name} ({self.get_kind_display().lower()})"


class Tool(models.Model):
    """A built-in capability. Tools are code: the registry is seeded by a migration."""

    slug = SlugField(unique=True)
    name = models.CharField(max_length=NAME_MAX, validators=[validate_name])
    description = models.CharField(max_length=DESCRIPTION_MAX)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return f"@{self.slug}"


@reversion.register()
class SkillPackage(models.Model):
    """A publisher's skill. Slugs are unique per publisher: a bundle's mentions resolve
    among its own skills, so two publishers may each ship an @invoice-chase."""

    slug = SlugField(help_text="The skill's @-handle in the shared namespace.")
    publisher = models.ForeignKey(Publisher, on_delete=models.PROTECT, related_name="packages")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug", "publisher"]
        constraints = [
            models.UniqueConstraint(fields=["publisher", "slug"], name="package_slug_per_publisher")
        ]

    def __str__(self):
        return f"@{self.slug}"


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"
    YANKED = "yanked", "Yanked"


@reversion.register()
class SkillVersion(PublishedImmutable):
    """One immutable state of a catalog skill: its SKILL.md and its supporting files.

    ``digest`` is its identity (catalog.skill_content.skill_digest): a bundle
    version that repeats a skill with the same content reuses this row.
    """

    CONTENT_FIELDS = (
        "package_id",
        "version",
        "name",
        "description",
        "body",
        "approvals",
        "frontmatter",
        "digest",
        "skill_md",
    )

    package = models.ForeignKey(SkillPackage, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=64, validators=[validate_semver])
    name = models.CharField(max_length=NAME_MAX, validators=[validate_name])
    description = models.CharField(max_length=SKILL_DESCRIPTION_MAX)
    body = models.TextField()
    approvals = models.JSONField(
        default=list,
        blank=True,
        help_text='Operations needing a person\'s yes: [{"operation": ..., "rule": ...}].',
    )
    frontmatter = models.JSONField(
        default=dict,
        blank=True,
        help_text="The rest of the SKILL.md frontmatter, kept as is (license, compatibility, "
        "metadata, allowed-tools and any other key).",
    )
    digest = models.CharField(
        max_length=64, blank=True, db_index=True, help_text="sha256 of the skill's content."
    )
    skill_md = models.TextField(
        blank=True,
        help_text="SKILL.md exactly as loaded (empty when the version was made otherwise); "
        "a dump writes it back byte for byte.",
    )
    status = models.CharField(
        max_length=16,
        choices=[(Status.DRAFT, "Draft"), (Status.PUBLISHED, "Published")],
        default=Status.DRAFT,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["package__slug", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["package", "version"], name="one_skill_version_number")
        ]

    @classmethod
    def published_q(cls):
        return models.Q(status=Status.PUBLISHED)

    @property
    def is_published(self) -> bool:
        return self.status == Status.PUBLISHED

    def __str__(self):
        return f"@{self.package.slug} {self.version}"

    @property
    def label(self) -> str:
        """The package and version, as the API names a revision's upstream."""
        return f"{self.package.slug} {self.version}"


@reversion.register()
class Bundle(models.Model):
    slug = SlugField(unique=True)
    name = models.CharField(max_length=NAME_MAX, validators=[validate_name])
    description = models.CharField(max_length=DESCRIPTION_MAX, blank=True)
    publisher = models.ForeignKey(Publisher, on_delete=models.PROTECT, related_name="bundles")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # Lists page through bundles by name (the admin's changelist, the catalog API).
        indexes = [models.Index(fields=["name", "slug"], name="bundle_by_name")]

    def __str__(self):
        return self.name


class CatalogReview(models.TextChoices):
    """Whether a published version is in the catalog every workspace sees. It is not
    content: it may change while the version is published, the version never does."""

    PENDING = "pending", "Awaiting review"
    APPROVED = "approved", "Approved for the catalog"
    REFUSED = "refused", "Refused for the catalog"


@reversion.register(follow=["skills", "hosts", "credentials"])
class BundleVersion(PublishedImmutable):
    CONTENT_FIELDS = (
        "bundle_id",
        "version",
        "description",
        "notes",
        "manifest",
        "manifest_sha256",
        "signature",
        "signing_key_id",
        "source_repository",
        "source_ref",
        "source_commit",
        "source_committed_at",
        "source_author",
        "source_message",
    )

    bundle = models.ForeignKey(Bundle, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=64, validators=[validate_semver])
    description = models.CharField(max_length=DESCRIPTION_MAX, blank=True)
    notes = models.TextField(blank=True, max_length=NOTES_MAX)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    yanked_at = models.DateTimeField(null=True, blank=True)
    yanked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    yank_reason = models.CharField(max_length=DESCRIPTION_MAX, blank=True)
    catalog_review = models.CharField(
        max_length=16,
        choices=CatalogReview.choices,
        default=CatalogReview.PENDING,
        help_text="Other workspaces see a version only once it is approved for the catalog.",
    )
    catalog_review_flags = models.JSONField(
        default=list,
        blank=True,
        help_text="Why the version was held for a person's review (e.g. a name that "
        "imitates another publisher's), shown in the review queue.",
    )
    catalog_review_reason = models.CharField(
        max_length=DESCRIPTION_MAX,
        blank=True,
        help_text="Why an operator refused it; shown to the publishing workspace.",
    )
    catalog_reviewed_at = models.DateTimeField(null=True, blank=True)
    catalog_reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # What the publisher signed (catalog.manifest), set when the version is published, or
    # when it is loaded with a signature made elsewhere; part of the published content.
    manifest = models.TextField(blank=True, help_text="The signed manifest, canonical JSON.")
    manifest_sha256 = models.CharField(max_length=64, blank=True)
    signature = models.CharField(max_length=88, blank=True, help_text="Base64 Ed25519.")
    signing_key = models.ForeignKey(
        "PublisherKey", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # What a person should weigh in the skills' text (catalog.findings), scanned when the
    # version is published; not content: a later rule set may scan it again.
    # Provenance: the upstream commit a source made this version from (pixie.sources),
    # plain fields so that the version keeps them when its source is deleted; in the
    # signed manifest when set (catalog.manifest.Provenance). Author and message are
    # upstream's words, bounded and made visible (pixie.sources.upstream_text).
    source_repository = models.CharField(max_length=2000, blank=True, default="", db_default="")
    source_ref = models.CharField(max_length=255, blank=True, default="", db_default="")
    source_commit = models.CharField(max_length=64, blank=True, default="", db_default="")
    source_committed_at = models.DateTimeField(null=True, blank=True)
    source_author = models.CharField(max_length=300, blank=True, default="", db_default="")
    source_message = models.TextField(blank=True, default="", db_default="")
    findings = models.JSONField(null=True, blank=True, editable=False)
    findings_override_reason = models.CharField(
        max_length=DESCRIPTION_MAX,
        blank=True,
        help_text="Why an operator published it despite findings that refuse publishing.",
    )

    class Meta:
        ordering = ["bundle__name", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["bundle", "version"], name="one_bundle_version_number")
        ]
        indexes = [
            # The review queue: published versions awaiting review, oldest first.
            models.Index(fields=["catalog_review", "published_at"], name="bundle_version_review")
        ]

    @classmethod
    def published_q(cls):
        return ~models.Q(status=Status.DRAFT)

    @property
    def provenance(self):
        """The upstream commit this version was made from, or None."""
        return Provenance.of(self)

    @property
    def is_draft(self) -> bool:
        return self.status == Status.DRAFT

    @property
    def in_catalog(self) -> bool:
        """Every workspace sees it (catalog.selectors.IN_CATALOG, for one row)."""
        return not self.is_draft and self.catalog_review == CatalogReview.APPROVED

    def __str__(self):
        return f"{self.bundle.name} {self.version}"


class BundlePart(models.Model):
    """A row that belongs to a bundle version and freezes with it."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self._parent_frozen():

            raise ImmutableError(
                "This bundle version is published and cannot be changed; "
                "create a new version instead."
            )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self._parent_frozen():

            raise ImmutableError("This bundle version is published and cannot be changed.")
        return super().delete(*args, **kwargs)

    def _parent_frozen(self) -> bool:
        return (
            self.bundle_version_id is not None
            and BundleVersion._base_manager.filter(pk=self.bundle_version_id)
            .exclude(status=Status.DRAFT)
            .exists()
        )


@reversion.register()
class BundleSkill(BundlePart):
    bundle_version = models.ForeignKey(
        BundleVersion, on_delete=models.CASCADE, related_name="skills"
    )
    skill_version = models.ForeignKey(
        SkillVersion, on_delete=models.PROTECT, related_name="bundle_entries"
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["bundle_version", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["bundle_version", "skill_version"], name="skill_once_per_bundle_version"
            )
        ]

    def __str__(self):
        return f"{self.position}. {self.skill_version}"


@reversion.register()
class BundleHost(BundlePart):
    bundle_version = models.ForeignKey(
        BundleVersion, on_delete=models.CASCADE, related_name="hosts"
    )
    host = models.CharField(max_length=253, validators=[validate_host])
    port = models.PositiveIntegerField(
        default=443, validators=[MinValueValidator(1), MaxValueValidator(65535)]
    )
    purpose = models.CharField(max_length=DESCRIPTION_MAX)

    class Meta:
        ordering = ["bundle_version", "host", "port"]
        constraints = [
            models.UniqueConstraint(
                fields=["bundle_version", "host", "port"], name="host_once_per_bundle_version"
            )
        ]

    def __str__(self):
        return f"{self.host}:{self.port}"


@reversion.register()
class BundleCredential(BundlePart):
    """A credential a host needs, by name only: Pixie never holds the value."""

    bundle_version = models.ForeignKey(
        BundleVersion, on_delete=models.CASCADE, related_name="credentials"
    )
    name = models.CharField(max_length=128, validators=[validate_credential_name])
    host = models.CharField(
        max_length=253, validators=[validate_host], help_text="The host that needs it."
    )
    purpose = models.CharField(max_length=DESCRIPTION_MAX)

    class Meta:
        ordering = ["bundle_version", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["bundle_version", "name"], name="credential_once_per_bundle_version"
            )
        ]

    def __str__(self):
        return self.name
