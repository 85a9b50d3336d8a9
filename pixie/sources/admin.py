"""Sources in the admin: operators add, change, pause, resume and delete them, ask for a
check, and accept a rewritten history; auditors read them. Every change goes through
pixie.sources.editing (the API's door too), so both refuse the same input the same way."""

from __future__ import annotations

import tomllib

import tomli_w
from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.html import format_html

from pixie.core.errors import PixieError
from pixie.core.web.pages import AdminPages

from .editing import (
    source_check_request,
    source_create,
    source_delete,
    source_fields_check,
    source_pause,
    source_rewrite_accept,
    source_update,
)
from .models import Source

METADATA_MAX = 20_000  # characters of the metadata's TOML

FAILING = {Source.Result.FAILED, Source.Result.REWRITTEN, Source.Result.BACKWARDS,
           Source.Result.VANISHED, Source.Result.FOLDER_GONE}  # fmt: skip


class SourceForm(forms.ModelForm):
    skills = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 40}),
        label="Skill folders",
        help_text="One skill folder's name a line, in the bundle's order; empty: every folder "
        "holding a SKILL.md under the folder above.",
    )
    metadata = forms.CharField(
        required=False,
        max_length=METADATA_MAX,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 60, "spellcheck": "false"}),
        label="Bundle metadata (TOML)",
        help_text="For a repository with no bundle.toml: the bundle's slug, name, description, "
        'notes, publisher, hosts, credentials and approvals, as bundle.toml writes them (slug = '
        '"ledger-tools"). Empty when the repository has its own bundle.toml.',
    )

    class Meta:
        model = Source
        fields = ["kind", "url", "ref", "folder", "skills", "metadata", "credential_variable",
                  "interval", "bundle", "paused"]  # fmt: skip
        labels = {"url": "URL", "credential_variable": "Token's environment variable"}
        help_texts = {
            "url": "A git repository's https:// URL (https://github.com/owner/skills.git), or a "
            "site's discovery index (https://example.com/.well-known/agent-skills/index.json).",
            "interval": "Between two checks, as hh:mm:ss or 'days hh:mm:ss'; from 1 minute to "
            "30 days.",
            "bundle": "The bundle it feeds; empty: the first check makes it from the metadata or "
            "the repository's bundle.toml.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["skills"] = "\n".join(self.instance.skills or [])
            metadata = self.instance.metadata or {}
            self.initial["metadata"] = tomli_w.dumps(metadata) if metadata else ""
        self.checked = None

    def clean_skills(self):
        text = self.cleaned_data.get("skills") or ""
        return [line.strip() for line in text.splitlines() if line.strip()]

    def clean_metadata(self):
        text = (self.cleaned_data.get("metadata") or "").strip()
        if not text:
            return {}
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise forms.ValidationError(f"The metadata is not valid TOML: {exc}") from None

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        current = self.instance if self.instance.pk else None
        checked = source_fields_check(dict(cleaned), current=current)
        for field, problems in checked.problems.items():
            for problem in problems:
                self.add_error(field if field in self.fields else None, problem)
        self.checked = checked
        return cleaned


@admin.register(Source)
class SourceAdmin(AdminPages, admin.ModelAdmin):
    form = SourceForm
    list_display = ["source", "bundle", "last_check", "last_checked_at", "next_check_at",
                    "waiting", "paused"]  # fmt: skip
    list_filter = ["paused", "last_result", "kind"]
    search_fields = ["url", "ref", "folder", "bundle__slug"]
    list_select_related = ["bundle", "waiting_draft__bundle"]
    fieldsets = [
        (None, {"fields": ["kind", "url", "ref", "folder", "skills"]}),
        ("The bundle", {"fields": ["bundle", "metadata"]}),
        ("Checking", {"fields": ["credential_variable", "interval", "paused"]}),
    ]

    @admin.display(description="Source", ordering="url")
    def source(self, source):
        return str(source)

    @admin.display(description="Last check", ordering="last_result")
    def last_check(self, source):
        if not source.last_result:
            return "Not checked yet"
        return format_html(
            '<span class="source-result {}">{}</span>',
            "failing" if source.last_result in FAILING else "fine",
            source.get_last_result_display(),
        )

    @admin.display(description="Waiting draft")
    def waiting(self, source):
        draft = source.waiting_draft
        if draft is None:
            return "-"
        url = reverse("admin:catalog_bundleversion_change", args=[draft.pk])
        return format_html('<a href="{}">Review {} {}</a>', url, draft.bundle.slug, draft.version)

    # Writes: through the services.

    # A refusal at saving (a check holding the source, a race with another operator) is
    # the page's error message, in place of the admin's "changed successfully".
    refused_key = "_pixie_source_refused"

    def _refused(self, request, exc: PixieError) -> None:
        self.report(request, exc)
        setattr(request, self.refused_key, True)
        # The admin's own log line of the change is in its view's transaction: undone too.
        transaction.set_rollback(True)

    def save_model(self, request, obj, form, change):
        fields = form.checked.fields
        try:
            if change:
                source_update(obj, actor=request.user, **fields)
            else:
                obj.pk = source_create(actor=request.user, **fields).pk
        except PixieError as exc:
            self._refused(request, exc)

    def save_related(self, request, form, formsets, change):
        pass  # a source has no related rows of its own

    def log_change(self, request, obj, message):
        if not getattr(request, self.refused_key, False):  # else: no query may run now
            return super().log_change(request, obj, message)

    def response_change(self, request, obj):
        if getattr(request, self.refused_key, False):
            return self._back(obj.pk)
        return super().response_change(request, obj)

    def delete_model(self, request, obj):
        try:
            source_delete(obj, actor=request.user)
        except PixieError as exc:
            self._refused(request, exc)

    def response_delete(self, request, obj_display, obj_id):
        if getattr(request, self.refused_key, False):
            return self._back(obj_id)
        return super().response_delete(request, obj_display, obj_id)

    def delete_queryset(self, request, queryset):
        for source in queryset:
            try:
                source_delete(source, actor=request.user)
            except PixieError as exc:
                self.report(request, exc)

    def response_add(self, request, obj, post_url_continue=None):
        if getattr(request, self.refused_key, False):
            return HttpResponseRedirect(reverse("admin:sources_source_add"))
        source = Source.objects.get(pk=obj.pk)
        if source.paused:
            self.message_user(request, f"Source #{obj.pk} added, paused: resume it to check it.")
        else:
            self.message_user(
                request,
                f"Source #{obj.pk} added and its first check asked for: what it finds shows "
                "below; a draft it makes waits for your review.",
            )
            source_check_request(source)
        return HttpResponseRedirect(reverse("admin:sources_source_change", args=[obj.pk]))

    # The source's own page: its last check and what may be done about it.

    def get_urls(self):
        pages = {"check": self.check_view, "pause": self.pause_view, "accept": self.accept_view}
        return [
            *(
                self.page_path(f"<int:source_id>/{name}/", view, f"sources_source_{name}",
                               post_only=True)  # fmt: skip
                for name, view in pages.items()
            ),
            *super().get_urls(),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context["may_act"] = obj is not None and self.has_change_permission(request, obj)
        context["failing"] = obj is not None and obj.last_result in FAILING
        context["rewritten"] = obj is not None and obj.last_result in {
            Source.Result.REWRITTEN,
            Source.Result.BACKWARDS,
        }
        return super().render_change_form(request, context, add, change, form_url, obj)

    def _acted_on(self, request, source_id) -> Source:
        source = get_object_or_404(self.get_queryset(request), pk=source_id)
        if not self.has_change_permission(request, source):
            raise PermissionDenied
        return source

    def _back(self, source_id):
        return HttpResponseRedirect(reverse("admin:sources_source_change", args=[source_id]))

    def check_view(self, request, source_id):
        source = self._acted_on(request, source_id)
        try:
            source_check_request(source)
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(request, f"A check of source #{source.pk} was asked for.")
        return self._back(source_id)

    def pause_view(self, request, source_id):
        source = self._acted_on(request, source_id)
        paused = request.POST.get("paused") == "1"
        try:
            source_pause(source, actor=request.user, paused=paused)
        except PixieError as exc:
            self.report(request, exc)
            return self._back(source_id)
        self.message_user(
            request,
            f"Source #{source.pk} is paused: it is not checked until resumed."
            if paused
            else f"Source #{source.pk} is resumed: it is checked when due.",
        )
        return self._back(source_id)

    def accept_view(self, request, source_id):
        source = self._acted_on(request, source_id)
        try:
            source_rewrite_accept(source, actor=request.user)
            source_check_request(Source.objects.get(pk=source.pk))
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(
                request,
                f"Source #{source.pk} follows the rewritten history: its content is compared "
                "with the bundle's newest version, and a draft is made if it differs.",
            )
        return self._back(source_id)
