"""The operator's review queue: bundle versions awaiting approval for the catalog.

Pages of BundleVersionAdmin and PublisherAdmin (pixie.core.web.pages.AdminPages): the
object from get_object_or_404(self.get_queryset(request), ...), one role rule
(is_operator) deciding, and a refusal reported as the admin reports one (the
permission page for a user who is not an operator, a message for a service's no).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST

from catalog.services.catalog_review import (
    catalog_review_approve,
    catalog_review_refuse,
    publisher_trust,
    review_queue,
)
from pixie.core.errors import PixieError
from pixie.core.people.permissions import is_operator
from pixie.core.web.pages import AdminPages


def operators_only(request) -> None:
    if not is_operator(request.user):
        raise PermissionDenied


def queue_url():
    return reverse("admin:catalog_bundleversion_review")


class CatalogReviewPages(AdminPages):
    """Mixed into BundleVersionAdmin: the queue, approve, refuse."""

    def review_urls(self):
        # approve and refuse check the role before the method: a non-operator meets 403.
        page, version = self.page_path, "<int:bundle_version_id>"
        return [
            page("review/", self.review_view, "catalog_bundleversion_review"),
            page(f"{version}/approve/", self.approve_view, "catalog_bundleversion_approve"),
            page(f"{version}/refuse/", self.refuse_view, "catalog_bundleversion_refuse"),
        ]

    def review_view(self, request):
        operators_only(request)
        return self.render_page(
            request,
            "admin/catalog/bundleversion/review.html",
            "Bundle versions awaiting review for the catalog",
            queue=list(review_queue()),
        )

    def approve_view(self, request, bundle_version_id):
        operators_only(request)
        return require_POST(self._approve)(request, bundle_version_id)

    def _approve(self, request, bundle_version_id):
        bundle_version = get_object_or_404(self.get_queryset(request), pk=bundle_version_id)
        try:
            catalog_review_approve(bundle_version=bundle_version, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(
                request, f"{bundle_version} is in the catalog: every workspace sees it now."
            )
        return HttpResponseRedirect(queue_url())

    def refuse_view(self, request, bundle_version_id):
        operators_only(request)
        return require_POST(self._refuse)(request, bundle_version_id)

    def _refuse(self, request, bundle_version_id):
        bundle_version = get_object_or_404(self.get_queryset(request), pk=bundle_version_id)
        try:
            catalog_review_refuse(
                bundle_version=bundle_version,
                actor=request.user,
                reason=request.POST.get("reason", ""),
            )
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(
                request,
                f"{bundle_version} was refused for the catalog; "
                f"{bundle_version.bundle.publisher.name} reads your reason.",
            )
        return HttpResponseRedirect(queue_url())


class PublisherTrustPages(AdminPages):
    """Mixed into PublisherAdmin: mark a publisher trusted, or withdraw the trust."""

    def trust_urls(self):
        return [
            self.page_path("<int:publisher_id>/trust/", self.trust_view, "catalog_publisher_trust")
        ]

    def trust_view(self, request, publisher_id):
        operators_only(request)
        return require_POST(self._trust)(request, publisher_id)

    def _trust(self, request, publisher_id):
        publisher = get_object_or_404(self.get_queryset(request), pk=publisher_id)
        trusted = request.POST.get("trusted", "1") == "1"
        try:
            publisher_trust(publisher=publisher, trusted=trusted, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(
                request,
                f"{publisher} is trusted: its next versions join the catalog when published "
                "(unless held for imitating another publisher). Versions already waiting "
                "are approved one by one."
                if trusted
                else f"{publisher} is no longer trusted: each of its versions is reviewed.",
            )
        if request.POST.get("back") == "publisher":
            return HttpResponseRedirect(
                reverse("admin:catalog_publisher_change", args=[publisher.pk])
            )
        return HttpResponseRedirect(queue_url())
