"""History in the admin is read, never replayed.

django-reversion's VersionAdmin turns every History entry into a *Revert* form and
offers *Recover deleted* on change lists. Both write the recorded rows back with raw
saves, past the immutability that `save()` and the querysets enforce and past the
services that own every write: saved once, a yanked release became a draft with no
skills. Pixie keeps the History list; each entry opens a page that shows the object
as it was recorded, compared with the version recorded before it
(pixie.core.audit.recorded), and nothing there writes. Old text comes back as a new edit
through the service that owns it, never as a replayed row.
"""

import re

from django.contrib import messages
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from reversion.admin import VersionAdmin
from reversion.models import Version

from pixie.core.audit.recorded import recorded_version, version_before

# The admin's quoting of a primary key in its URLs (its admin_urlquote filter): each of
# these characters, which would confuse a URL, becomes "_" and its two hex digits.
ADMIN_QUOTED = '":/_#?;@&=+$,[]<>%\n\\'
QUOTE_MAP = {ord(char): f"_{ord(char):02X}" for char in ADMIN_QUOTED}
UNQUOTE_MAP = {quoted: chr(char) for char, quoted in QUOTE_MAP.items()}
QUOTED = re.compile("|".join(UNQUOTE_MAP))


def admin_quote(pk):
    """A primary key as the admin puts it in a URL (a key that is not text stays as it is)."""
    return pk.translate(QUOTE_MAP) if isinstance(pk, str) else pk


def admin_unquote(object_id: str) -> str:
    """An object id from an admin URL back to the primary key it quotes."""
    return QUOTED.sub(lambda match: UNQUOTE_MAP[match[0]], object_id)


READ_ONLY = (
    "History is read-only in Pixie: a recorded version is never saved back over the "
    "object. Changes go through the page or command that owns them, and are recorded there."
)


class ReadOnlyHistoryAdmin(VersionAdmin):
    """VersionAdmin with History kept and every path that replays it closed."""

    # Django's change list: reversion's adds the *Recover deleted* link.
    change_list_template = None
    object_history_template = "admin/history/object_history.html"

    def history_view(self, request, object_id, extra_context=None):
        # Only rows an audit entry covers: a revision written outside Pixie (straight into
        # the database) is left out here and counted by the chain check (pixie.core.audit.chain).
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        opts = self.model._meta
        versions = (
            Version.objects.get_for_object_reference(self.model, admin_unquote(object_id))
            .filter(revision__audit__isnull=False)
            .select_related("revision", "revision__user")
            .order_by(*(self.get_version_ordering(request) or ()))
        )
        action_list = [
            {
                "revision": version.revision,
                "url": reverse(
                    f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_revision",
                    args=(admin_quote(version.object_id), version.id),
                ),
            }
            for version in versions
        ]
        return super().history_view(
            request, object_id, {**(extra_context or {}), "action_list": action_list}
        )

    def revision_view(self, request, object_id, version_id, extra_context=None):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        obj = self.get_object(request, admin_unquote(object_id))
        if obj is None:
            return self.object_not_found(request, object_id)
        version = get_object_or_404(
            Version.objects.get_for_object(obj)
            .filter(revision__audit__isnull=False)
            .select_related("revision__user"),
            pk=version_id,
        )
        if request.method != "GET":
            messages.error(request, f"Nothing was reverted. {READ_ONLY}")
            return HttpResponseRedirect(self._history_url(obj))
        recorded = recorded_version(self.model, version, version_before(version))
        previous = recorded.previous
        previous_url = self._revision_url(obj, previous) if previous else None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": obj,
            "object_id": admin_quote(obj.pk),
            "title": f"{obj} as recorded",
            "version": version,
            "revision": version.revision,
            "recorded": recorded,
            "previous_url": previous_url,
            "together": recorded_together(version),
            "history_url": self._history_url(obj),
            "read_only": READ_ONLY,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/history/recorded_version.html", context)

    def object_not_found(self, request, object_id):
        """The answer to an address of an object that is not there (or not for this
        reader): the admin's own, a warning and the admin's index. An admin that hides
        objects from some readers answers 404 instead."""
        message = _("%(name)s with ID “%(key)s” doesn’t exist. Perhaps it was deleted?") % {
            "name": self.opts.verbose_name,
            "key": admin_unquote(object_id),
        }
        self.message_user(request, message, messages.WARNING)
        return HttpResponseRedirect(reverse("admin:index", current_app=self.admin_site.name))

    def recoverlist_view(self, request, extra_context=None):
        return self._no_recovery(request)

    def recover_view(self, request, version_id, extra_context=None):
        return self._no_recovery(request)

    def _no_recovery(self, request):
        # Who reversion would have let recover (add and change rights) is told why not.
        if not (self.has_change_permission(request) and self.has_add_permission(request)):
            raise PermissionDenied
        messages.error(
            request,
            "Deleted rows are not brought back from history: a row saved back would skip "
            f"the checks and records of the page that owns it. {READ_ONLY}",
        )
        info = self.opts.app_label, self.opts.model_name
        return HttpResponseRedirect(reverse(f"{self.admin_site.name}:%s_%s_changelist" % info))

    def _revision_url(self, obj, version) -> str:
        info = self.opts.app_label, self.opts.model_name
        return reverse(
            f"{self.admin_site.name}:%s_%s_revision" % info, args=(admin_quote(obj.pk), version.pk)
        )

    def _history_url(self, obj) -> str:
        info = self.opts.app_label, self.opts.model_name
        return reverse(f"{self.admin_site.name}:%s_%s_history" % info, args=[admin_quote(obj.pk)])


def recorded_together(version: Version) -> list[str]:
    """What else the same change recorded, by kind: "3 bundle skills"."""
    counts = (
        version.revision.version_set.exclude(pk=version.pk)
        .values("content_type")
        .annotate(count=Count("id"))
        .order_by("content_type")
    )
    together = []
    for row in counts:
        model = ContentType.objects.get_for_id(row["content_type"]).model_class()
        if model is None:  # a model removed since
            name = "rows"
        else:
            meta = model._meta
            name = meta.verbose_name if row["count"] == 1 else meta.verbose_name_plural
        together.append(f"{row['count']} {name}")
    return together
