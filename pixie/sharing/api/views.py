"""The sharing API: contacts, messages, shares, review and import, and the public inbox.

Every workspace view resolves the workspace through workspace_for_member (404
for anyone not a member) and calls one service or selector; services check
the owner role for every change.
"""

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_rename
from pixie.core.errors import ErrorCode, PixieError
from pixie.core.people.permissions import require_owner
from pixie.core.web.api import InWorkspace, error_body, pixie_error_body
from pixie.sharing import services as svc
from pixie.sharing.api.serializers import (
    AddSenderSerializer,
    ContactAddSerializer,
    ContactSerializer,
    DirectoryListingSerializer,
    MessageSerializer,
    OutcomeSerializer,
    RenameResultSerializer,
    RenameSerializer,
    ReviewSerializer,
    ShareSendSerializer,
    TextSendSerializer,
)
from pixie.sharing.models import Contact


def _valid(serializer_class, data) -> dict:
    """The validated data; a bad body is refused in the API's one shape (pixie.core.web.api)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class SharingView(InWorkspace):
    """A workspace view of the sharing API."""


class ContactCard(SharingView, APIView):
    @extend_schema(
        summary="This workspace's contact card, to give to others", responses=OpenApiTypes.OBJECT
    )
    def get(self, request, workspace):
        return Response(svc.contact_card_export(workspace=self.workspace()))


class ContactList(SharingView, generics.ListAPIView):
    serializer_class = ContactSerializer
    pagination_class = None

    def get_queryset(self):
        return Contact.objects.filter(workspace=self.workspace())

    @extend_schema(
        summary="Add a contact from its card, or a workspace on this server",
        request=ContactAddSerializer,
        responses={201: ContactSerializer},
    )
    def post(self, request, workspace):
        data = _valid(ContactAddSerializer, request.data)
        if "card" in data:
            contact = svc.contact_card_import(
                workspace=self.workspace(), card=data["card"], actor=request.user
            )
        else:
            contact = svc.contact_add_local(
                workspace=self.workspace(), other_slug=data["workspace"], actor=request.user
            )
        return Response(ContactSerializer(contact).data, status=status.HTTP_201_CREATED)


class DirectoryListing(SharingView, APIView):
    """Whether the workspace is listed in this server's directory: its members read it,
    its owners change it (pixie.sharing.contacts.directory_listing_set)."""

    @extend_schema(responses=DirectoryListingSerializer)
    def get(self, request, workspace):
        return Response({"listed": self.workspace().listed_in_directory})

    @extend_schema(request=DirectoryListingSerializer, responses=DirectoryListingSerializer)
    def patch(self, request, workspace):
        ws = self.workspace()
        require_owner(user=request.user, workspace=ws, role=self.role)  # before the body
        data = _valid(DirectoryListingSerializer, request.data)
        ws = svc.directory_listing_set(workspace=ws, listed=data["listed"], actor=request.user)
        return Response({"listed": ws.listed_in_directory})


class MessageList(SharingView, generics.ListAPIView):
    """The inbox and the sent messages, newest first, each opened."""

    serializer_class = MessageSerializer

    def get_queryset(self):
        return svc.messages_of(self.workspace())

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        opened = svc.messages_open(messages=list(page))
        return self.get_paginated_response(MessageSerializer(opened, many=True).data)

    @extend_schema(
        summary="Send a plain message to a contact",
        request=TextSendSerializer,
        responses={201: MessageSerializer},
    )
    def post(self, request, workspace):
        data = _valid(TextSendSerializer, request.data)
        ws = self.workspace()
        contact = svc.contact_get(workspace=ws, contact_id=data["contact"])
        message = svc.text_send(
            workspace=ws, contact=contact, text=data["text"], actor=request.user
        )
        return _created(ws, message)


class InboxStatus(SharingView, APIView):
    @extend_schema(
        summary="What waits for review against the inbox's quotas, and what it refused",
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, workspace):
        state = svc.inbox_states(workspaces=[self.workspace()])[0]

        def usage(pending, quota):
            return {
                "messages": pending.messages,
                "bytes": pending.bytes,
                "max_messages": quota.messages,
                "max_bytes": quota.bytes,
            }

        return Response(
            {
                "pending": {
                    "contacts": usage(state.contacts, state.contact_quota),
                    "unknown_senders": usage(state.unknown, state.unknown_quota),
                },
                "refused_last_30_days": state.refused,
            }
        )


class ShareSend(SharingView, APIView):
    @extend_schema(
        summary="Share a skill (and the skills it mentions) with a contact",
        request=ShareSendSerializer,
        responses={201: MessageSerializer},
    )
    def post(self, request, workspace):
        data = _valid(ShareSendSerializer, request.data)
        ws = self.workspace()
        contact = svc.contact_get(workspace=ws, contact_id=data["contact"])
        skill = generics.get_object_or_404(
            WorkspaceSkill.objects.filter(workspace=ws), slug=data["skill"]
        )
        message = svc.share_send(workspace=ws, skill=skill, contact=contact, actor=request.user)
        return _created(ws, message)


def _created(workspace, message) -> Response:
    message = svc.message_get(workspace=workspace, message_id=message.pk)
    data = MessageSerializer(svc.message_open(message=message)).data
    return Response(data, status=status.HTTP_201_CREATED)


def _outcome(outcome: dict, *, repeated: bool = False) -> dict:
    return {**outcome, "lines": svc.outcome_lines(outcome), "repeated": repeated}


class ShareReview(SharingView, APIView):
    @extend_schema(
        summary="A received share, whole, with the mentions nothing here resolves",
        responses=ReviewSerializer,
    )
    def get(self, request, workspace, pk):
        ws = self.workspace()
        message = svc.message_get(workspace=ws, message_id=pk)
        review = svc.share_review(workspace=ws, message=message, role=self.role)
        share_import = review.opened.share_import
        data = {
            "message": review.opened,
            "items": [
                {
                    "id": item.id,
                    "name": item.name,
                    "short_description": item.short_description,
                    "detailed_body": item.detailed_body,
                }
                for item in review.share.items
            ],
            "unresolved_mentions": review.unresolved,
            "findings": review.findings,
            "can_import": review.can_import,
            "why_not": review.why_not or None,
            "outcome": _outcome(share_import.outcome) if share_import else None,
        }
        return Response(ReviewSerializer(data).data)


class ShareImport(SharingView, APIView):
    @extend_schema(
        summary="Import a received share; importing it again changes nothing",
        request=None,
        responses={201: OutcomeSerializer, 200: OutcomeSerializer},
    )
    def post(self, request, workspace, pk):
        ws = self.workspace()
        message = svc.message_get(workspace=ws, message_id=pk)
        result = svc.share_import(workspace=ws, message=message, actor=request.user)
        code = status.HTTP_200_OK if result.repeated else status.HTTP_201_CREATED
        return Response(_outcome(result.outcome, repeated=result.repeated), status=code)


class AddSender(SharingView, APIView):
    @extend_schema(
        summary="Add a message's unknown sender as a contact, from the card its letter "
        "carries, after comparing its fingerprint",
        request=AddSenderSerializer,
        responses={201: ContactSerializer},
    )
    def post(self, request, workspace, pk):
        ws = self.workspace()
        data = _valid(AddSenderSerializer, request.data)
        opened = svc.message_open(message=svc.message_get(workspace=ws, message_id=pk))
        contact = svc.contact_add_from_message(
            opened=opened, fingerprint=data["fingerprint"], actor=request.user
        )
        return Response(ContactSerializer(contact).data, status=status.HTTP_201_CREATED)


class SkillRename(SharingView, APIView):
    @extend_schema(
        summary="Rename a skill and rewrite every mention of it in the workspace",
        request=RenameSerializer,
        responses=RenameResultSerializer,
    )
    def post(self, request, workspace, skill):
        ws = self.workspace()
        found = generics.get_object_or_404(WorkspaceSkill.objects.filter(workspace=ws), slug=skill)
        require_owner(user=request.user, workspace=ws, role=self.role)
        data = _valid(RenameSerializer, request.data)
        rewritten = skill_rename(skill=found, new_slug=data["slug"], actor=request.user)
        return Response({"slug": found.slug, "rewritten": rewritten})


@csrf_exempt
def inbox(request):
    """Take a sealed envelope for a workspace here. Its size is checked before it is read.

    A plain Django view: no session, no CSRF token and no authentication; the
    envelope's seal and signature are its credentials. Past a rate limit or a
    quota it answers 429 with Retry-After; a blocked sender gets the same 202
    as anyone whose envelope was taken (pixie.sharing.guard).
    """
    if request.method != "POST":  # a person who opens it: the API's refusal, in words
        problem = (
            "The inbox takes sealed envelopes from other servers, by POST; it has nothing to read."
        )
        response = JsonResponse(
            error_body(code=ErrorCode.METHOD_NOT_ALLOWED, problems=[problem]), status=405
        )
        response["Allow"] = "POST"
        return response
    limit = settings.PIXIE_INBOX_MAX_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    address = svc.client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
    try:
        if declared > limit:
            raise svc.EnvelopeTooLarge(f"An envelope is at most {limit} bytes.")
        svc.envelope_receive(raw=request.read(limit + 1), address=address)
    except svc.InboxBusy as exc:
        response = JsonResponse(pixie_error_body(exc), status=exc.status)
        response["Retry-After"] = str(exc.retry_after)
        return response
    except PixieError as exc:
        return JsonResponse(pixie_error_body(exc), status=exc.status)
    return JsonResponse({"status": "accepted"}, status=status.HTTP_202_ACCEPTED)
