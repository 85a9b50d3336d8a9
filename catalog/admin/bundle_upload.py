"""Upload a bundle (.zip or .tar.gz) in the admin: checked and previewed, then loaded.

Step 1 (a POST with the archive) stores it under a random token kept in the session,
extracts and checks it, and shows what loading would create, or every problem (then
nothing is kept). Step 2 (confirm) loads it with bundle_load and publishes if asked.
"""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect

from catalog.services.bundle_upload import (
    STALE,
    archive_name_problem,
    upload_discard,
    upload_load,
    upload_path,
    upload_preview,
    upload_size_problem,
    upload_store,
    uploads_sweep,
)
from pixie.core.errors import PixieError
from pixie.core.web.pages import AdminPages

SESSION_KEY = "catalog_bundle_uploads"
# A multipart body carries the archive and a few fields: room for those around it.
ENVELOPE_BYTES = 64 * 1024


class BundleUploadForm(forms.Form):
    archive = forms.FileField(
        help_text="A bundle folder (bundle.toml and skills/) as .zip or .tar.gz, at the "
        "archive's top or inside one top-level folder."
    )
    publish = forms.BooleanField(
        required=False,
        label="Publish after loading",
        help_text="After loading, the publish confirmation opens; otherwise it stays a draft.",
    )

    def clean_archive(self):
        archive = self.cleaned_data["archive"]
        problem = archive_name_problem(archive.name) or upload_size_problem(archive.size)
        if problem:
            raise forms.ValidationError(problem)
        return archive


class BundleUploadPages(AdminPages):
    """Mixed into BundleVersionAdmin: the upload page (operators who may add versions)."""

    def upload_urls(self):
        return [self.page_path("upload/", self.upload_view, "catalog_bundleversion_upload")]

    def upload_view(self, request):
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            # Refused before the body is read: no byte of an oversized upload is stored.
            length = int(request.META.get("CONTENT_LENGTH") or 0)
            if length > settings.PIXIE_BUNDLE_MAX_BYTES + ENVELOPE_BYTES:
                return self._page(
                    request, form=BundleUploadForm(), problems=[upload_size_problem(length)]
                )
        return self._protected(request)

    # The CSRF check reads the body: it runs inside, after the size check above.
    upload_view.csrf_exempt = True

    @method_decorator(csrf_protect)
    def _protected(self, request):
        if request.method == "POST" and "token" in request.POST:
            return self._confirm(request)
        form = BundleUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            return self._preview(request, form)
        return self._page(request, form=form)

    def _preview(self, request, form):
        archive = form.cleaned_data["archive"]
        uploads_sweep()
        try:
            token = upload_store(archive.chunks())
            preview = upload_preview(token, label=archive.name)
        except PixieError as exc:
            return self._page(
                request, form=BundleUploadForm(), problems=getattr(exc, "problems", [exc.message])
            )
        pending = request.session.get(SESSION_KEY, {})
        pending[token] = {"name": archive.name}
        request.session[SESSION_KEY] = pending
        return self._page(
            request,
            preview=preview,
            token=token,
            archive_name=archive.name,
            publish=form.cleaned_data["publish"],
        )

    def _confirm(self, request):
        token = request.POST["token"]
        pending = request.session.get(SESSION_KEY, {})
        entry = pending.pop(token, None) if isinstance(token, str) else None
        request.session[SESSION_KEY] = pending
        here = reverse("admin:catalog_bundleversion_upload")
        if entry is None or upload_path(token) is None:
            self.message_user(request, STALE, messages.ERROR)
            return HttpResponseRedirect(here)
        if "cancel" in request.POST:
            upload_discard(token)
            self.message_user(request, f"{entry['name']}: not loaded.", messages.INFO)
            return HttpResponseRedirect(here)
        publish = request.POST.get("publish") == "on"
        try:
            # Loaded as a draft whatever is asked: publishing goes through its
            # confirmation (who it reaches, its findings), as from the version's page.
            result = upload_load(token, actor=request.user, publish=False, label=entry["name"])
        except PixieError as exc:
            self.report(request, exc)
            return HttpResponseRedirect(here)
        version = result.bundle_version
        state = version.get_status_display().lower()
        if result.created:
            self.message_user(
                request,
                f"Loaded {version.bundle.slug} {version.version} ({state}): "
                f"{result.skill_versions_created} new skill versions, "
                f"{result.skill_versions_reused} reused.",
                messages.SUCCESS,
            )
        else:  # nothing was stored: a notice, not a success
            self.message_user(
                request,
                f"Nothing was stored: {version.bundle.slug} {version.version} ({state}) is "
                "already in the catalog with the same content.",
                messages.WARNING,
            )
        for notice in result.notices:
            self.message_user(request, notice, messages.INFO)
        if publish and version.is_draft:
            self.message_user(
                request,
                f"{version} is not published yet: read who it reaches and confirm below.",
                messages.INFO,
            )
            return HttpResponseRedirect(
                reverse("admin:catalog_bundleversion_publish", args=[version.pk])
            )
        return HttpResponseRedirect(
            reverse("admin:catalog_bundleversion_change", args=[version.pk])
        )

    def _page(self, request, **context):
        return self.render_page(
            request,
            "admin/catalog/bundleversion/upload.html",
            "Upload a bundle",
            limit=settings.PIXIE_BUNDLE_MAX_BYTES,
            **context,
        )
