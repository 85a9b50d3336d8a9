"""A bundle version's page: read like a pull request, with one decision at its foot.

Mixed into BundleVersionAdmin, it replaces the admin's change form: a version is read and
published, never edited field by field. Whoever may see the version reads the page (its
skills' changes against the version before, their text, the findings, the hosts and
credentials); the decision offered is the reader's to take:

- a draft: *Publish…* (the publish confirmation, release_one_view), its notes and skill
  order (a small form of their own, recorded), or *Discard* (with the draft skill
  versions only it holds; a draft a source made is made again only by a newer upstream
  change);
- a version awaiting catalog review, to an operator: approve or refuse, with a reason;
- a published version: *Yank…*.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.safestring import mark_safe

from catalog.bundle_picture import bundle_picture
from catalog.models.catalog import NOTES_MAX
from catalog.selectors import bundle_version_skills
from catalog.services.drafts import bundle_version_draft_discard, bundle_version_draft_edit
from catalog.services.signing import signature_summary, signature_words
from catalog.skill_files_display import skill_display, totals_of
from catalog.version_review import version_review
from pixie.core.errors import PixieError
from pixie.core.people.permissions import is_operator
from pixie.core.web.admin_scoping import person
from pixie.core.web.pages import AdminPages


class DraftWordsForm(forms.Form):
    notes = forms.CharField(
        label="Release notes",
        required=False,
        max_length=NOTES_MAX,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80}),
        help_text="What changed and why, as the owners who upgrade read it.",
    )


class VersionPages(AdminPages):
    def version_urls(self):
        version = "<int:bundle_version_id>"
        return [
            self.page_path(
                f"{version}/publish/", self.release_one_view, "catalog_bundleversion_publish"
            ),
            self.page_path(f"{version}/notes/", self.notes_view, "catalog_bundleversion_notes"),
            self.page_path(
                f"{version}/discard/",
                self.discard_view,
                "catalog_bundleversion_discard",
                post_only=True,
            ),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        version = self.get_object(request, object_id)
        if version is None or not self.has_view_permission(request, version):
            return self.object_not_found(request, object_id)
        review = version_review(version, request.user)
        may_release = "publish" in self.get_actions(request)
        context = {
            "original": version,
            "review": review,
            "stage": review.stage,
            "signature": signature_words(signature_summary(version)),
            "published_by": person(version.published_by),
            "yanked_by": person(version.yanked_by),
            "reviewed_by": person(version.catalog_reviewed_by),
            # bundle_picture escapes every piece of text it draws.
            "bundle_picture": mark_safe(bundle_picture(version)),  # noqa: S308
            "may_publish": may_release and review.stage == "draft",
            "may_edit_draft": review.stage == "draft"
            and self.has_change_permission(request, version),
            "may_delete": review.stage == "draft" and self.has_delete_permission(request, version),
            "may_yank": may_release and version.status == "published",
            "may_review": review.stage == "awaiting" and is_operator(request.user),
            "may_trust": review.stage == "awaiting"
            and is_operator(request.user)
            and not version.bundle.publisher.is_trusted,
            **(extra_context or {}),
        }
        context.update(self._files_context(version))
        return self.render_page(
            request, "admin/catalog/bundleversion/read.html", str(version), **context
        )

    def _files_context(self, version) -> dict:
        return bundle_files_context(version)

    def discard_view(self, request, bundle_version_id):
        version = get_object_or_404(self.get_queryset(request), pk=bundle_version_id)
        if not self.has_delete_permission(request, version):  # published: never deleted
            raise PermissionDenied
        try:
            dropped = bundle_version_draft_discard(bundle_version=version, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
            return HttpResponseRedirect(
                reverse("admin:catalog_bundleversion_change", args=[version.pk])
            )
        with_skills = f", with {dropped} draft skill version{'s' * (dropped != 1)} only it held"
        self.message_user(
            request,
            f"Discarded the draft {version}{with_skills if dropped else ''}. The history keeps "
            "it; nothing reached a workspace.",
        )
        return HttpResponseRedirect(
            reverse("admin:catalog_bundle_change", args=[version.bundle_id])
        )

    def notes_view(self, request, bundle_version_id):
        if not self.has_change_permission(request):
            raise PermissionDenied
        version = get_object_or_404(self.get_queryset(request), pk=bundle_version_id)
        if not self.has_change_permission(request, version):  # published: never changes
            raise PermissionDenied
        entries = list(
            version.skills.select_related("skill_version__package").order_by("position", "id")
        )
        slugs = [entry.skill_version.package.slug for entry in entries]
        form = DraftWordsForm(request.POST or None, initial={"notes": version.notes})
        order, positions = slugs, {slug: n for n, slug in enumerate(slugs, start=1)}
        if request.method == "POST":
            order, positions = posted_order(request.POST, form)
        if request.method == "POST" and form.is_valid():
            try:
                bundle_version_draft_edit(
                    bundle_version=version,
                    actor=request.user,
                    notes=form.cleaned_data["notes"],
                    order=order,
                )
            except PixieError as exc:
                self.report(request, exc, form)
            else:
                self.message_user(request, f"Saved the notes and the skill order of {version}.")
                return HttpResponseRedirect(
                    reverse("admin:catalog_bundleversion_change", args=[version.pk])
                )
        names = {e.skill_version.package.slug: e.skill_version for e in entries}
        return self.render_page(
            request,
            "admin/catalog/bundleversion/notes.html",
            f"Notes and skill order of {version}",
            original=version,
            form=form,
            rows=[
                {"slug": slug, "skill_version": names[slug], "position": positions.get(slug, "")}
                for slug in slugs
            ],
        )


def posted_order(data, form) -> tuple[list[str], dict]:
    """The skills in the order their posted positions give (ties keep the page's order);
    a position that is not a whole number is the form's error."""
    slugs, raw = data.getlist("skill"), data.getlist("position")
    positions: dict[str, object] = dict(zip(slugs, raw, strict=False))
    numbered = []
    for index, slug in enumerate(slugs):
        value = str(positions.get(slug, "")).strip()
        if not value.isdigit() or len(value) > 6:
            form.add_error(None, f"The position of @{slug[:80]} must be a whole number, like 1")
            continue
        positions[slug] = int(value)
        numbered.append((int(value), index, slug))
    return [slug for _, _, slug in sorted(numbered)], positions


def bundle_files_context(bundle_version) -> dict:
    """Each skill's files, lines and estimated tokens, and the version's totals (two
    queries), with links to the API's file and .zip downloads."""

    slug, version = bundle_version.bundle.slug, bundle_version.version
    entries = bundle_version_skills(bundle_version=bundle_version)

    def url_of(skill):
        kwargs = {"slug": slug, "version": version, "skill": skill}
        return lambda path: reverse("bundle-skill-file", kwargs={**kwargs, "path": path})

    return {
        "skill_files": [
            skill_display(e.skill_version, url_of(e.skill_version.package.slug)) for e in entries
        ],
        "skill_totals": totals_of(e.skill_version for e in entries),
        "bundle_zip_url": reverse(
            "bundle-version-download", kwargs={"slug": slug, "version": version}
        ),
    }
