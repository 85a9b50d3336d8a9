"""Read-only catalog endpoints: thin callers of the selectors."""

import tempfile

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog import selectors
from catalog.bundle_archive import write_bundle_zip
from catalog.bundle_files import SKILL_FILE, skill_md_text
from catalog.bundle_history import bundle_compare
from catalog.services.bundle_load import bundle_spec_of, skill_spec_of
from pixie.core.people.permissions import token_workspace_id
from pixie.core.web.pagination import CountInPagePagination
from pixie.core.web.schema import QueryParametersSchema

from .conditional import catalog_etag, conditional_get, rendered_once
from .files import FILE_RESPONSES, file_response
from .serializers import (
    BundleComparisonSerializer,
    BundleDetailSerializer,
    BundleSerializer,
    BundleVersionSerializer,
    bundle_version_data,
    field_change_data,
)


def _stamped_viewer(request):
    """The reader's facts and the catalog's stamp (read with the request's token), kept
    on the view."""
    view = request.parser_context["view"]
    view.viewer = selectors.catalog_viewer(
        request.user, limited_to=token_workspace_id(request), stamped=True, token=request.auth
    )
    return view


def _list_etag(request, *args, **kwargs) -> str:
    view = _stamped_viewer(request)
    view.etag = catalog_etag(request, LIST_SHAPE, view.viewer)
    return view.etag


class BundleList(generics.ListAPIView):
    """Bundles with at least one published version (drafts too, for staff). Its ETag is
    over the catalog's stamp and what the reader may see: If-None-Match with it answers
    304, and a fresh request for it is served as rendered."""

    serializer_class = BundleSerializer
    # The list is read on every catalog visit: its page and its count in one query.
    pagination_class = CountInPagePagination

    def get_queryset(self):
        return selectors.bundle_list(
            user=self.request.user,
            limited_to=token_workspace_id(self.request),
            viewer=getattr(self, "viewer", None),
        )

    @conditional_get(_list_etag)
    def get(self, request, *args, **kwargs):
        keep = bool(self.viewer.stamp)
        return rendered_once(self, request, self.etag, self._page_data, keep=keep)

    def _page_data(self) -> dict:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data).data


# In every list page's ETag: raise the edition when a release shows the same rows differently.
LIST_SHAPE = {"fields": BundleSerializer.Meta.fields, "edition": 4}


class BundleDetail(generics.RetrieveAPIView):
    serializer_class = BundleDetailSerializer

    def get_object(self):
        return selectors.bundle_get(
            user=self.request.user,
            limited_to=token_workspace_id(self.request),
            slug=self.kwargs["slug"],
        )


# In every version's ETag: the response's fields, and an edition to raise when a release
# shows the same rows differently, so no client keeps an answer of the old kind.
RESPONSE_SHAPE = {"fields": BundleVersionSerializer.Meta.fields, "edition": 4}


def _visible_version(request, slug: str, version: str):
    """The version this request's person (and token) may see, without its contents."""
    return selectors.bundle_version_get(
        user=request.user,
        limited_to=token_workspace_id(request),
        slug=slug,
        version=version,
        contents=False,
    )


def _version_etag(request, *args, **kwargs) -> str:
    view = _stamped_viewer(request)
    view.etag = catalog_etag(request, RESPONSE_SHAPE, view.viewer)
    return view.etag


@extend_schema(summary="A bundle version: skills in order with bodies, hosts, credential names")
class BundleVersionDetail(generics.RetrieveAPIView):
    """A version, drafts included (their contents are in the catalog's stamp too): 304 for
    its ETag, and served as rendered for it."""

    serializer_class = BundleVersionSerializer

    @conditional_get(_version_etag)
    def get(self, request, *args, slug, version, **kwargs):
        return rendered_once(
            self,
            request,
            self.etag,
            lambda: bundle_version_data(_visible_version(request, slug, version)),
            keep=bool(self.viewer.stamp),
        )


@extend_schema(
    summary="One file of a skill in a bundle version (SKILL.md too), as stored",
    responses=FILE_RESPONSES,
)
class BundleSkillFile(APIView):
    def get(self, request, slug, version, skill, path):
        bundle_version = _visible_version(request, slug, version)
        skill_version = selectors.bundle_skill_version(bundle_version=bundle_version, skill=skill)
        if path == SKILL_FILE:
            text = skill_md_text(skill_spec_of(skill_version)).encode("utf-8")
            return file_response(path, text, "text/markdown")
        found = selectors.skill_file_get(
            files=skill_version.files.all(), path=path, owner=f"@{skill} {skill_version.version}"
        )
        return file_response(path, bytes(found.blob.content), found.media_type, etag=found.blob_id)


@extend_schema(
    summary="A bundle version as a .zip in the bundle folder format",
    responses={(200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY)},
)
class BundleVersionDownload(APIView):
    def get(self, request, slug, version):
        bundle_version = _visible_version(request, slug, version)
        # Closed by FileResponse once sent; large versions spill to a temporary file.
        spooled = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115
        write_bundle_zip(bundle_spec_of(bundle_version), spooled)
        spooled.seek(0)
        response = FileResponse(
            spooled,
            as_attachment=True,
            filename=f"{slug}-{version}.zip",
            content_type="application/zip",
        )
        response["X-Content-Type-Options"] = "nosniff"
        return response


def bundle_comparison_data(comparison) -> dict:
    return {
        "bundle": comparison.bundle.slug,
        "before": comparison.before.version,
        "after": comparison.after.version,
        "identical": comparison.identical,
        "skills": [
            {
                "slug": skill.slug,
                "change": skill.change,
                "before": skill.before,
                "after": skill.after,
                "moved": skill.moved,
                "fields": [field_change_data(change) for change in skill.changed_fields],
                "files": skill.files,
            }
            for skill in comparison.skills
        ],
        "hosts": comparison.hosts,
        "credentials": comparison.credentials,
        "notes": field_change_data(comparison.notes),
    }


@extend_schema(
    summary="Two versions of a bundle compared: skills (each field and file), hosts, "
    "credential names, notes",
    parameters=[
        OpenApiParameter(
            "from",
            OpenApiTypes.STR,
            description="The earlier version (default: the one before `to`)",
        ),
        OpenApiParameter(
            "to",
            OpenApiTypes.STR,
            description="The later version (default: the newest you can see)",
        ),
    ],  # fmt: skip
    responses={200: BundleComparisonSerializer},
)
class BundleCompare(APIView):
    schema = QueryParametersSchema()

    def get(self, request, slug):
        comparison = bundle_compare(
            user=request.user,
            limited_to=token_workspace_id(request),
            slug=slug,
            before=request.query_params.get("from"),
            after=request.query_params.get("to"),
        )
        return Response(bundle_comparison_data(comparison))
