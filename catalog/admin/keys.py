"""A publisher's signing keys on its admin page: rotate one held by Pixie, or register
one the publisher holds outside Pixie. Operators only (the catalog is theirs)."""

from __future__ import annotations

from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST

from catalog.admin.review import operators_only
from catalog.services.signing import publisher_key_rotate
from pixie.core.errors import PixieError
from pixie.core.web.pages import AdminPages


class PublisherKeyPages(AdminPages):
    """Mixed into PublisherAdmin."""

    def key_urls(self):
        return [
            self.page_path(
                "<int:publisher_id>/keys/new/", self.key_new_view, "catalog_publisher_key_new"
            ),
        ]

    def key_new_view(self, request, publisher_id):
        operators_only(request)  # before the method: others learn nothing of the page
        return require_POST(self._key_new)(request, publisher_id)

    def _key_new(self, request, publisher_id):
        publisher = get_object_or_404(self.get_queryset(request), pk=publisher_id)
        public_key = request.POST.get("public_key", "").strip() or None
        try:
            key = publisher_key_rotate(
                publisher=publisher, actor=request.user, public_key=public_key
            )
        except PixieError as exc:
            self.report(request, exc)
        else:
            held = "held outside Pixie" if public_key else "made and held by Pixie"
            self.message_user(
                request,
                f"{publisher} signs with a new key, {key.fingerprint} ({held}). The earlier key "
                "is retired and kept: what it signed still verifies.",
            )
        return HttpResponseRedirect(
            reverse("admin:catalog_publisher_change", args=[publisher.pk]) + "#signing-keys"
        )
