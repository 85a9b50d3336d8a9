"""Read-only catalog endpoints: thin callers of the selectors."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response

from catalog import selectors
from pixie.pagination import CountInPagePagination

from .serializers import (
    BundleDetailSerializer,
    BundleSerializer,
    BundleVersionSerializer,
    bundle_version_data,
)


class BundleList(generics.ListAPIView):
    """Bundles with at least one published version (drafts too, for staff)."""

    serializer_class = BundleSerializer
    # The list is read on every catalog visit: its page and its count in one query.
    pagination_class = CountInPagePagination

    def get_queryset(self):
        return selectors.bundle_list(user=self.request.user)


class BundleDetail(generics.RetrieveAPIView):
    serializer_class = BundleDetailSerializer

    def get_object(self):
        return selectors.bundle_get(user=self.request.user, slug=self.kwargs["slug"])


@extend_schema(summary="A bundle version: skills in order with bodies, hosts, credential names")
class BundleVersionDetail(generics.RetrieveAPIView):
    serializer_class = BundleVersionSerializer

    def retrieve(self, request, *args, **kwargs):
        bundle_version = selectors.bundle_version_get(
            user=request.user,
            slug=self.kwargs["slug"],
            version=self.kwargs["version"],
            contents=False,
        )
        return Response(bundle_version_data(bundle_version))
