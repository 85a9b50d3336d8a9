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

from .conditional import conditional_get, etag_of, rendered_once, row_values
from .files import FILE_RESPONSES, file_response
from .serializers import (
    BundleComparisonSerializer,
    BundleDetailSerializer,
    BundleSerializer,
    BundleVersionSerializer,
    bundle_version_data,
    field_change_data,
)


def _list_etag(request, *args, **kwargs) -> str:
    """The list page's ETag, over what the page is made of: its address, which makes the
    links, and the rows read (the count, every field of the bundles and publishers, the
    visible versions' fields the response shows). The view keeps the page and the ETag."""
    view = request.parser_context["view"]
    view.page = view.paginate_queryset(view.get_queryset())
    rows = [
        [row_values(bundle), row_values(bundle.publisher)]
        + [[getattr(v, f) for f in selectors.BUNDLE_LIST_VERSION_FIELDS]
           for v in bundle.visible_versions]
        for bundle in view.page
    ]  # fmt: skip
    count = view.paginator.page.paginator.count
    view.etag = etag_of(LIST_SHAPE, request.build_absolute_uri(), count, rows)
    return view.etag


class BundleList(generics.ListAPIView):
    """Bundles with at least one published version (drafts too, for staff). Its ETag is
    over the page it shows: If-None-Match with it answers 304."""

    serializer_class = BundleSerializer
    # The list is read on every catalog visit: its page and its count in one query.
    pagination_class = CountInPagePagination

    def get_queryset(self):
        return selectors.bundle_list(
            user=self.request.user, limited_to=token_workspace_id(self.request)
        )

    @conditional_get(_list_etag)
    def get(self, request, *args, **kwargs):
        # The ETag stands for everything the page says: rendered once for it.
        return rendered_once(self, request, self.etag, self._page_data)

    def _page_data(self) -> dict:
        return self.get_paginated_response(self.get_serializer(self.page, many=True).data).data


# In every list page's ETag: raise the edition when a release shows the same rows differently.
LIST_SHAPE = {"fields": BundleSerializer.Meta.fields, "edition": 3}


class BundleDetail(generics.RetrieveAPIView):
    serializer_class = BundleDetailSerializer

    def get_object(self):
        return selectors.bundle_get(
            user=self.request.user,
            limited_to=token_workspace_id(self.request),
            slug=self.kwargs["slug"],
        )


# In every published version's ETag: the response's fields, and an edition to raise when a
# release shows the same rows differently, so no client keeps an answer of the old kind.
RESPONSE_SHAPE = {"fields": BundleVersionSerializer.Meta.fields, "edition": 3}


def _visible_version(request, slug: str, version: str):
    """The version this request's person (and token) may see, without its contents."""
    return selectors.bundle_version_get(
        user=request.user,
        limited_to=token_workspace_id(request),
        slug=slug,
        version=version,
        contents=False,
    )


def _version_etag(request, *args, slug, version, **kwargs) -> str:
    """A published version's ETag is over its row and its bundle's, publisher's and signing
    key's: the signed manifest's digest (in the version's row) stands for the contents,
    which never change, and what may (a yank, a review, the signer's state) is in those
    rows; so a 304 is answered before anything is serialised. A draft's contents may
    change: its ETag is over its whole answer. The view keeps what was read."""
    view = request.parser_context["view"]
    bundle_version = _visible_version(request, slug, version)
    view.bundle_version, view.data = bundle_version, None
    if bundle_version.manifest_sha256:
        rows = [bundle_version, bundle_version.bundle, bundle_version.bundle.publisher]
        key = bundle_version.signing_key
        view.etag = etag_of(RESPONSE_SHAPE, [row_values(row) for row in rows],
                            row_values(key) if key else None)  # fmt: skip
    else:
        view.data = bundle_version_data(bundle_version)
        view.etag = etag_of(view.data)
    return view.etag


@extend_schema(summary="A bundle version: skills in order with bodies, hosts, credential names")
class BundleVersionDetail(generics.RetrieveAPIView):
    serializer_class = BundleVersionSerializer

    @conditional_get(_version_etag)
    def get(self, request, *args, **kwargs):
        if self.data is not None:  # a draft: read whole for its ETag
            return Response(self.data)
        return rendered_once(
            self, request, self.etag, lambda: bundle_version_data(self.bundle_version)
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
