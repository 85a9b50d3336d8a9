"""The operator's admin for the catalog, and members' read-only view of workspace skills."""

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils.html import format_html

from catalog.admin.bundle_compare import BundleComparePages
from catalog.admin.bundle_upload import BundleUploadPages
from catalog.admin.keys import PublisherKeyPages
from catalog.admin.member_read import (
    MemberReadable,
    MemberReadableInline,
    bundles_with_visible_version,
    skill_versions_in_visible_bundle,
    versions_visible,
)
from catalog.admin.release import ReleaseActions
from catalog.admin.review import CatalogReviewPages, PublisherTrustPages
from catalog.admin.skill_history import SkillHistoryPages
from catalog.admin.skill_pages import SkillPages
from catalog.admin.version_list import status_pills
from catalog.admin.version_page import VersionPages
from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Publisher,
    PublisherKey,
    SkillPackage,
    SkillRevision,
    SkillVersion,
    Status,
    Tool,
    WorkspaceSkill,
)
from catalog.selectors import skill_versions_files
from catalog.services import skill_version_publish
from catalog.services.catalog_review import review_queue
from catalog.services.publishing import skill_package_check, skill_package_create
from catalog.services.signing import publisher_key_ensure, signature_summary, signature_words
from catalog.skill_files_display import skill_display
from pixie.core.audit.admin_history import ReadOnlyHistoryAdmin
from pixie.core.errors import PixieError
from pixie.core.people.permissions import is_operator
from pixie.core.web.admin_scoping import (
    MemberWorkspaceFilter,
    ReadOnlyInline,
    ServiceManagedAdmin,
    SharedChoicesInline,
    person,
)
from pixie.core.web.pages import report
from pixie.core.web.whole_numbers import whole_number

REVIEW_FIELDS = [
    "catalog_review",
    "catalog_review_flags",
    "catalog_review_reason",
    "catalog_reviewed_at",
    "reviewed",
]


def run_service(modeladmin, request, queryset, service, done: str, **kwargs):
    """Call a service per selected row; report each success and refusal as a message."""
    succeeded = 0
    for obj in queryset:
        try:
            service(obj, **kwargs)
            succeeded += 1
        except PixieError as exc:
            report(request, exc)
    if succeeded:
        modeladmin.message_user(request, f"{done}: {succeeded}.", messages.SUCCESS)


@admin.register(Publisher)
class PublisherAdmin(PublisherKeyPages, PublisherTrustPages, ReadOnlyHistoryAdmin):
    list_display = ["name", "slug", "kind", "trusted", "workspace"]
    list_filter = ["kind", "trusted"]
    search_fields = ["name", "slug"]
    list_select_related = ["workspace"]
    autocomplete_fields = ["workspace"]
    # Trust is given and withdrawn on its own (publisher_trust, recorded), not in the form.
    readonly_fields = ["trusted"]
    change_form_template = "admin/catalog/publisher/change_form.html"

    def get_urls(self):
        return self.key_urls() + self.trust_urls() + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra = {
            "can_trust": is_operator(request.user),
            "signing_keys": PublisherKey.objects.filter(publisher_id=object_id)
            if whole_number(object_id) is not None
            else [],
        }
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if not change:  # every publisher has a signing key from its creation
            publisher_key_ensure(publisher=obj)


@admin.register(Tool)
class ToolAdmin(admin.ModelAdmin):
    """Tools are code; the admin only shows the registry."""

    list_display = ["slug", "name", "description"]
    search_fields = ["slug", "name"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class SkillVersionInline(ReadOnlyInline):
    model = SkillVersion
    fields = ["version", "name", "status", "published_at"]
    readonly_fields = fields


class SkillPackageForm(forms.ModelForm):
    class Meta:
        model = SkillPackage
        fields = ["slug", "publisher"]

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None and cleaned.get("slug"):
            try:
                skill_package_check(slug=cleaned["slug"], publisher=cleaned.get("publisher"))
            except PixieError as exc:
                raise forms.ValidationError(exc.message) from None
        return cleaned


@admin.register(SkillPackage)
class SkillPackageAdmin(ReadOnlyHistoryAdmin):
    form = SkillPackageForm
    ordering = ["slug", "publisher"]  # Meta.ordering is dropped by the Count annotation
    list_display = ["__str__", "publisher", "version_count", "created_at"]
    list_filter = ["publisher"]
    search_fields = ["slug"]
    list_select_related = ["publisher"]
    autocomplete_fields = ["publisher"]
    inlines = [SkillVersionInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(version_count=Count("versions"))

    @admin.display(description="Versions", ordering="version_count")
    def version_count(self, obj):
        return obj.version_count

    def get_readonly_fields(self, request, obj=None):
        return ["slug"] if obj else []

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        created = skill_package_create(slug=obj.slug, publisher=obj.publisher, actor=request.user)
        obj.pk = created.pk


@admin.register(SkillVersion)
class SkillVersionAdmin(MemberReadable, ReadOnlyHistoryAdmin):
    list_display = ["package", "version", "name", "status", "published_at"]
    # Members read the skill versions inside a bundle version they may see.
    member_named = {"package": "package_name"}
    member_hidden_filters = ("package__publisher",)

    def member_rows(self, user):
        return skill_versions_in_visible_bundle(user)

    @admin.display(description="Package")
    def package_name(self, obj):
        return str(obj.package)

    list_filter = ["status", "package__publisher"]
    search_fields = ["package__slug", "name", "version"]
    list_select_related = ["package"]
    autocomplete_fields = ["package"]
    actions = ["publish"]
    fields = [
        "package",
        "version",
        "name",
        "description",
        "body",
        "approvals",
        "frontmatter",
        "status",
        "published_at",
    ]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.is_published:
            return self.fields
        return ["status", "published_at"]

    def has_change_permission(self, request, obj=None):
        # A published version is shown, not edited: no Save button to suggest otherwise.
        if obj is not None and obj.is_published:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.is_published:
            return False
        return super().has_delete_permission(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):

        version = self.get_object(request, object_id)
        extra = {}
        if version is not None:
            skill_versions_files([version])
            extra["skill_files"] = [skill_display(version)]
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})

    @admin.action(description="Publish selected skill versions", permissions=["change"])
    def publish(self, request, queryset):
        run_service(
            self,
            request,
            queryset.select_related("package"),
            lambda obj: skill_version_publish(skill_version=obj, actor=request.user),
            "Published",
        )


class BundleVersionInline(MemberReadableInline, ReadOnlyInline):
    model = BundleVersion
    fields = ["version", "status", "catalog_review", "published_at", "yank_reason"]
    readonly_fields = fields

    @staticmethod
    def member_rows(user):
        return versions_visible(user)


@admin.register(Bundle)
class BundleAdmin(MemberReadable, BundleComparePages, ReadOnlyHistoryAdmin):
    ordering = ["name"]  # Meta.ordering is dropped by the Count annotation
    list_display = ["name", "slug", "offered_by", "version_count", "created_at"]
    list_filter = ["publisher__kind", "publisher__trusted", "publisher"]
    search_fields = ["name", "slug"]
    list_select_related = ["publisher"]
    autocomplete_fields = ["publisher"]
    inlines = [BundleVersionInline]
    # Adds "Compare versions" (admin_bundle_compare).
    change_form_template = "admin/catalog/bundle/change_form.html"
    # Members read the bundles that have a version they may see, and only those versions.
    member_named = {"publisher": "publisher_name"}
    member_hidden_filters = ("publisher",)

    def member_rows(self, user):
        return bundles_with_visible_version(user)

    @admin.display(description="Publisher")
    def publisher_name(self, obj):
        return obj.publisher.label

    def get_urls(self):
        return self.compare_urls() + super().get_urls()

    def get_queryset(self, request):
        # A subquery, not Count() over a join: the page's 100 rows come straight off the
        # name index and each counts its own versions, instead of grouping every bundle.
        versions = (
            BundleVersion.objects.filter(bundle=OuterRef("pk"))
            .order_by()
            .values("bundle")
            .annotate(count=Count("pk"))
            .values("count")
        )
        return super().get_queryset(request).annotate(version_count=Coalesce(Subquery(versions), 0))

    @admin.display(description="Versions", ordering="version_count")
    def version_count(self, obj):
        return obj.version_count

    @admin.display(description="Publisher", ordering="publisher__name")
    def offered_by(self, obj):
        return obj.publisher.label


class FrozenWhenPublished:
    """Inline rows of a bundle version are editable only while it is a draft."""

    extra = 0

    def _frozen(self, obj):
        return obj is not None and obj.status != Status.DRAFT

    def has_add_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


class BundleSkillInline(MemberReadableInline, FrozenWhenPublished, SharedChoicesInline):
    model = BundleSkill
    fields = ["position", "skill_version"]
    ordering = ["position", "id"]
    shared_choices = {
        "skill_version": lambda: SkillVersion.objects.select_related("package").order_by(
            "package__slug", "-created_at"
        )
    }

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("skill_version__package")


class BundleHostInline(MemberReadableInline, FrozenWhenPublished, admin.TabularInline):
    model = BundleHost
    fields = ["host", "port", "purpose"]


class BundleCredentialInline(MemberReadableInline, FrozenWhenPublished, admin.TabularInline):
    model = BundleCredential
    fields = ["name", "host", "purpose"]


@admin.register(BundleVersion)
class BundleVersionAdmin(
    MemberReadable,
    VersionPages,
    ReleaseActions,
    CatalogReviewPages,
    BundleUploadPages,
    ReadOnlyHistoryAdmin,
):
    # Where a version stands as pills; a yanked version's reason goes under its row
    # (change_list_results.html), not in a column that grows every row beside it.
    list_display = ["bundle", "version", "offered_by", "stage", "skill_count", "published_at"]
    list_filter = ["status", "catalog_review", "bundle__publisher__kind", "bundle"]
    search_fields = ["bundle__name", "bundle__slug", "version"]
    list_select_related = ["bundle__publisher"]
    autocomplete_fields = ["bundle"]
    inlines = [BundleSkillInline, BundleHostInline, BundleCredentialInline]
    member_hidden_filters = ("bundle",)  # it would list every bundle's name

    def member_rows(self, user):
        return versions_visible(user)

    # reversion's list with "Upload a bundle" added.
    change_list_template = "admin/catalog/bundleversion/change_list.html"
    fields = [
        "bundle",
        "version",
        "description",
        "notes",
        "status",
        "published_at",
        "published",
        "yanked_at",
        "yanked",
        "yank_reason",
        *REVIEW_FIELDS,
        "signed",
    ]
    state_fields = [
        "status",
        "published_at",
        "published",
        "yanked_at",
        "yanked",
        "yank_reason",
        *REVIEW_FIELDS,
        "signed",
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related(
                "bundle__publisher",
                "published_by",
                "yanked_by",
                "catalog_reviewed_by",
                "signing_key",
            )
            .annotate(skill_count=Count("skills"))
            # The count groups rows, and Django leaves a grouped query unordered: the
            # model's order, stated, so the autocomplete's pages hold still too.
            .order_by(*BundleVersion._meta.ordering, "pk")
        )

    @admin.display(description="Signature")
    def signed(self, obj):
        return signature_words(signature_summary(obj)) if obj.pk else "—"

    # Who published, yanked and reviewed, by name: the user pages are superusers'.
    @admin.display(description="Published by")
    def published(self, obj):
        return person(obj.published_by)

    @admin.display(description="Yanked by")
    def yanked(self, obj):
        return person(obj.yanked_by)

    @admin.display(description="Catalog reviewed by")
    def reviewed(self, obj):
        return person(obj.catalog_reviewed_by)

    @admin.display(description="Skills", ordering="skill_count")
    def skill_count(self, obj):
        return f"{obj.skill_count:,}"

    @admin.display(description="Publisher", ordering="bundle__publisher__name")
    def offered_by(self, obj):
        return obj.bundle.publisher.label

    @admin.display(description="Status", ordering="status")
    def stage(self, obj):
        return status_pills(obj)

    def get_urls(self):
        return self.version_urls() + self.review_urls() + self.upload_urls() + super().get_urls()

    def changelist_view(self, request, extra_context=None):
        extra = {"awaiting_review": review_queue().count() if is_operator(request.user) else None}
        return super().changelist_view(request, {**extra, **(extra_context or {})})

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.status != Status.DRAFT:
            return self.fields
        return self.state_fields

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.status != Status.DRAFT:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.status != Status.DRAFT:
            return False
        return super().has_delete_permission(request, obj)


class SkillRevisionInline(ReadOnlyInline):
    model = SkillRevision
    # Who and where from as words: the catalog's and the users' pages are operators'.
    fields = ["revision", "origin", "name", "came_from", "made_by", "created_at", "comment"]
    readonly_fields = fields
    # A revision opens as its own page (its text, files and a comparison), not the
    # admin's change page of a row nobody edits.
    show_change_link = False

    def has_view_permission(self, request, obj=None):
        # Whoever may open the skill reads its revisions (the skill's admin scopes who
        # that is); members hold no model permission on revisions of their own.
        return self.admin_site.get_model_admin(WorkspaceSkill).has_view_permission(request, obj)

    @admin.display(description="From the catalog version")
    def came_from(self, revision):
        return revision.upstream.label if revision.upstream else "—"

    @admin.display(description="By")
    def made_by(self, revision):
        return revision.created_by.get_username() if revision.created_by else "a command or a task"

    @admin.display(description="Revision")
    def revision(self, revision):
        args = [revision.skill_id, revision.number]
        url = reverse("admin:catalog_workspaceskill_text", args=args)
        return format_html('<a href="{}">r{}</a>', url, revision.number)

    def get_queryset(self, request):
        # Each row's heading is str(revision), which names the skill.
        related = ("skill", "upstream__package", "created_by")
        return super().get_queryset(request).select_related(*related)


@admin.register(WorkspaceSkill)
class WorkspaceSkillAdmin(SkillPages, SkillHistoryPages, ServiceManagedAdmin):
    # Edits, renames, shares and promotion go through the skill's own pages and services.
    list_display = ["__str__", "workspace", "enabled", "advertised", "installation", "archived_at"]
    list_filter = ["enabled", "advertised", MemberWorkspaceFilter]
    search_fields = ["slug"]
    # An installation names its workspace (Installation.__str__): read with the row.
    list_select_related = [
        "workspace",
        "installation__bundle_version__bundle",
        "installation__workspace",
        "head",
    ]
    readonly_fields = ["head"]
    inlines = [SkillRevisionInline]
    change_form_template = "admin/catalog/workspaceskill/change_form.html"
    # Pages a layer above catalog adds to a skill ("Share with a contact", from
    # pixie.sharing.admin.skill): functions of this admin that return URL patterns.
    extra_pages = []

    def get_urls(self):
        own = self.history_urls() + self.skill_urls()
        for pages in self.extra_pages:
            own += pages(self)
        return own + super().get_urls()

    # What a layer above catalog adds to a skill's page (agents' turn statistics): functions
    # of the skill that return context for its template.
    page_context = []

    def change_view(self, request, object_id, form_url="", extra_context=None):
        skill = self.get_object(request, object_id)
        extra = {}
        for context_of in self.page_context if skill else ():
            extra.update(context_of(skill))
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})
