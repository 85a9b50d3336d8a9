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
from catalog.bundle_pages import PAGE_DIGEST_WITH_TOKEN, BundlePages, page_validator
from catalog.services.bundle_load import bundle_spec_of, skill_spec_of
from pixie.core.db.row_digest import digests_read
from pixie.core.people.permissions import token_workspace_id
from pixie.core.web.pagination import MAX_OFFSET, CountInPagePagination
from pixie.core.web.schema import QueryParametersSchema
from pixie.core.web.whole_numbers import whole_number

from .conditional import (
    answered_by_etag,
    etag_of,
    not_modified,
    rendered_once,
    with_validators,
)
from .files import FILE_RESPONSES, file_response
from .serializers import (
    BundleComparisonSerializer,
    BundleDetailSerializer,
    BundleSerializer,
    BundleVersionSerializer,
    bundle_version_data,
    field_change_data,
)


class BundleList(generics.ListAPIView):
    """Bundles with at least one published version (drafts too, for staff). Its ETag is
    over the page it shows: If-None-Match with it answers 304."""

    serializer_class = BundleSerializer
    # The list is read on every catalog visit: its page and its count in one query.
    pagination_class = CountInPagePagination

    def get_queryset(self):
        # Read a page at a time by queries compiled once (selectors.bundle_list's rows).
        return BundlePages(user=self.request.user, limited_to=token_workspace_id(self.request))

    def read_with_token(self, request, model):
        """The digest of the page asked for, read with the request's token
        (pixie.core.people.tokens)."""
        bounds = self._page_bounds(request)
        if bounds is None or not digests_read():
            return None
        return PAGE_DIGEST_WITH_TOKEN[model], bounds

    def _page_bounds(self, request) -> dict | None:
        """The page asked for, if it is a page number in range; else the paginator decides."""
        number = request.query_params.get(self.paginator.page_query_param, "1")
        limit = self.paginator.get_page_size(request)
        # (A number of more digits than MAX_OFFSET has is past the end, and int() of a
        # very long one is refused: the paginator says so.)
        page = whole_number(number)
        if page is None or page < 1 or not limit:
            return None
        bottom = (page - 1) * limit
        return {"bottom": bottom, "limit": limit} if bottom + limit <= MAX_OFFSET else None

    def list(self, request, *args, **kwargs):
        pages = self.get_queryset()
        # The ETag is over what the page is made of: its address, which makes the links,
        # and the rows read (the count, every field of the bundles and publishers, the
        # visible versions' fields the response shows), or their digest. So a 304 is
        # answered before any instance is made or anything serialised; and where the
        # digest came with the token, before the page is read at all.
        digest = getattr(request.auth, "page_digest", None)
        if digest is not None and pages.read_by_token_rule():
            validator = page_validator(digest, request.auth.page_total)
            etag = etag_of(LIST_SHAPE, request.build_absolute_uri(), validator)
            if (answer := answered_by_etag(request, etag)) is not None:
                return answer
        page = self.paginate_queryset(pages)  # a BundlePage (bundle_pages)
        etag = etag_of(LIST_SHAPE, request.build_absolute_uri(), page.validator)
        if (answer := not_modified(request, etag)) is not None:
            return answer
        # The ETag stands for everything the page says: rendered once for it.
        return rendered_once(self, request, etag, lambda: self._page_data(page))

    def _page_data(self, page) -> dict:
        return self.get_paginated_response(self.get_serializer(page, many=True).data).data


# In every list page's ETag: raise the edition when a release shows the same rows differently.
LIST_SHAPE = {"fields": BundleSerializer.Meta.fields, "edition": 2}


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
RESPONSE_SHAPE = {"fields": BundleVersionSerializer.Meta.fields, "edition": 2}


@extend_schema(summary="A bundle version: skills in order with bodies, hosts, credential names")
class BundleVersionDetail(generics.RetrieveAPIView):
    serializer_class = BundleVersionSerializer

    def read_with_token(self, request, model):
        """The digest of the version asked for, read with the request's token
        (pixie.core.people.tokens)."""
        slug, version = self.kwargs["slug"], self.kwargs["version"]
        if "\x00" in slug + version or not digests_read():  # NUL: refused by the selector
            return None
        return selectors.VERSION_DIGEST_WITH_TOKEN[model], {"slug": slug, "version": version}

    def retrieve(self, request, *args, **kwargs):
        limited_to = token_workspace_id(request)
        digest = getattr(request.auth, "version_digest", None)  # a published version's only
        if digest is not None and selectors.read_by_token_rule(request.user, limited_to):
            etag = etag_of(RESPONSE_SHAPE, digest)
            if (answer := answered_by_etag(request, etag)) is not None:
                return answer
        head = selectors.bundle_version_head(
            user=request.user,
            limited_to=limited_to,
            slug=self.kwargs["slug"],
            version=self.kwargs["version"],
            digested=True,
        )
        if head.value("manifest_sha256"):
            # Published: the signed manifest's digest (in the version's row) stands for the
            # contents, which never change; what may (a yank, a review, the signer's
            # state) is in the rows read with it, so the ETag is over those rows' values
            # (or their digest) and a 304 is answered before any instance is made or
            # anything serialised; where the digest came with the token, before the
            # version is read at all.
            etag = etag_of(RESPONSE_SHAPE, head.validator)
            if (answer := not_modified(request, etag)) is not None:
                return answer
            return rendered_once(
                self, request, etag, lambda: bundle_version_data(head.bundle_version)
            )
        data = bundle_version_data(head.bundle_version)  # a draft: its contents may change
        etag = etag_of(data)
        return not_modified(request, etag) or with_validators(Response(data), etag)


@extend_schema(
    summary="One file of a skill in a bundle version (SKILL.md too), as stored",
    responses=FILE_RESPONSES,
)
class BundleSkillFile(APIView):
    def get(self, request, slug, version, skill, path):
        bundle_version = selectors.bundle_version_get(
            user=request.user,
            limited_to=token_workspace_id(request),
            slug=slug,
            version=version,
            contents=False,
        )
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
        bundle_version = selectors.bundle_version_get(
            user=request.user,
            limited_to=token_workspace_id(request),
            slug=slug,
            version=version,
            contents=False,
        )
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
