"""A workspace's contacts: added from a card, or by slug for a workspace on this server."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q
from django.http import Http404

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.models import Membership, Workspace
from pixie.core.people.permissions import require_owner
from pixie.core.web.whole_numbers import whole_number
from pixie.sharing import crypto
from pixie.sharing.models import Contact, Identity, Message

from .cards import card_parse
from .destinations import DestinationRefused, destination_resolve, inbox_parse
from .identities import CARD_SENTINEL, card_fields, identity_ensure


def contact_card_import(*, workspace: Workspace, card: object, actor) -> Contact:
    """Add the workspace a contact card describes. The card is checked before anything,
    its inbox's host looked up too when its messages would go over the network."""
    require_owner(user=actor, workspace=workspace)
    fields = card_parse(card)
    if not Identity.objects.filter(box_public_key=fields["boxKey"]).exists():
        _destination_check(fields["inboxUrl"])
    return _contact_add(workspace=workspace, fields=fields, actor=actor)


def contact_add_from_message(*, opened, fingerprint: str, actor) -> Contact:
    """Add the unknown sender of an opened message, from the card its letter carries
    (signed with the key it names), once the owner has compared its keys' fingerprint
    with the one the sender reads on their own card: the posted fingerprint must be the
    one the message shows, so what is added is what the owner compared."""
    message = opened.message
    workspace = message.workspace
    require_owner(user=actor, workspace=workspace)
    if opened.outgoing or opened.problem or opened.sender_card is None:
        raise ValidationFailed("This message names no sender that can be added.")
    if opened.contact is not None:
        raise ValidationFailed(
            f"This message's sender is, or claims to be, {opened.contact.name}, already one "
            f"of {workspace.name}'s contacts; only an unknown sender is added from a message."
        )
    if " ".join(str(fingerprint).lower().split()) != opened.fingerprint:
        raise ValidationFailed(
            "The fingerprint you confirmed is not this message's: read it again on the "
            "review page and compare it with the sender's card."
        )
    return contact_card_import(
        workspace=workspace, card={CARD_SENTINEL: opened.sender_card}, actor=actor
    )


def contact_add_local_sender(*, opened, actor) -> Contact:
    """Add the sender of an opened message that a workspace of this server sent: the
    server holds that workspace's keys, so who it is needs no fingerprint compared."""
    message = opened.message
    workspace = message.workspace
    require_owner(user=actor, workspace=workspace)
    if opened.outgoing or opened.local is None:
        raise ValidationFailed(
            "This message's sender is not a workspace of this server: compare its "
            "fingerprint with their card to add them."
        )
    other = opened.local
    fields = card_fields(workspace=other, identity=identity_ensure(workspace=other))
    return _contact_add(workspace=workspace, fields=fields, actor=actor)


def local_contact_choices(*, workspace: Workspace, actor, limit: int) -> list[Workspace]:
    """The workspaces of this server the actor may add as contacts of ``workspace``: those
    listed in its directory and those the actor owns too, less itself and those it has as
    contacts already; by name, at most ``limit`` (one query)."""
    owned = Membership.objects.filter(user=actor, role=Membership.Role.OWNER)
    held = Contact.objects.filter(workspace=workspace).values("signing_public_key")
    return list(
        Workspace.objects.filter(
            Q(listed_in_directory=True) | Q(id__in=owned.values("workspace_id"))
        )
        .exclude(pk=workspace.pk)
        .exclude(sharing_identity__signing_public_key__in=held)
        .order_by("name", "slug")[:limit]
    )


NOT_LISTED = "No workspace {slug!r} is listed in this server's directory."


def contact_add_local(*, workspace: Workspace, other_slug: str, actor) -> Contact:
    """Add a workspace on this same server by its slug: one its owners listed in the
    server's directory, or one the actor owns too. Its messages are delivered in-process,
    so its inbox URL (this server's own) is not looked up. A slug that names no workspace
    and one not listed get the same answer, so a slug tells a stranger nothing."""
    require_owner(user=actor, workspace=workspace)
    if other_slug == workspace.slug:
        raise ValidationFailed(f"That is {workspace.name} itself; add another workspace.")
    owned = Membership.objects.filter(user=actor, role=Membership.Role.OWNER)
    other = (
        Workspace.objects.filter(slug=other_slug)
        .filter(Q(listed_in_directory=True) | Q(id__in=owned.values("workspace_id")))
        .first()
    )
    if other is None:
        raise ValidationFailed(NOT_LISTED.format(slug=other_slug))
    fields = card_fields(workspace=other, identity=identity_ensure(workspace=other))
    return _contact_add(workspace=workspace, fields=fields, actor=actor)


def directory_listing_set(*, workspace: Workspace, listed: bool, actor) -> Workspace:
    """List the workspace in this server's directory, or take it out (its owners only).
    Contacts already made stay: they hold its keys, not the listing."""
    require_owner(user=actor, workspace=workspace)
    if workspace.listed_in_directory == listed:
        return workspace
    done = "Listed" if listed else "Took"
    where = "in" if listed else "out of"
    with audited(actor=actor, comment=f"{done} {workspace.name} {where} this server's directory"):
        workspace.listed_in_directory = listed
        workspace.save(update_fields=["listed_in_directory"])
    return workspace


def _destination_check(url: str) -> None:
    # Delivery checks again before every attempt; this is so that an owner hears
    # now, not from a failed message, that this server will not connect there.
    try:
        inbox = inbox_parse(url, allow_http=settings.PIXIE_ALLOW_HTTP_INBOX)
        destination_resolve(inbox, allow_private=settings.PIXIE_DISPATCH_ALLOW_PRIVATE)
    except DestinationRefused as exc:
        raise ValidationFailed(f"contact card: {exc.message}", code=exc.code) from None
    except OSError:
        # Worded as for an internal address, so the answer does not tell an
        # internal name from one that does not exist.
        found = "does not resolve to a public address"
        if settings.PIXIE_DISPATCH_ALLOW_PRIVATE:
            found = "could not be found"
        raise ValidationFailed(
            f"contact card: inboxUrl's host {inbox.host} {found}", code=DestinationRefused.code
        ) from None


def _contact_add(*, workspace: Workspace, fields: dict[str, str], actor) -> Contact:
    own = identity_ensure(workspace=workspace)
    if fields["signingKey"] == own.signing_public_key or fields["boxKey"] == own.box_public_key:
        raise ValidationFailed(f"That card is {workspace.name}'s own; add another workspace.")
    existing = Contact.objects.filter(
        workspace=workspace, signing_public_key=fields["signingKey"]
    ).first()
    if existing is not None:
        raise ValidationFailed(
            f"{existing.name} is already in {workspace.name}'s contacts.", code=ErrorCode.DUPLICATE
        )
    with audited(actor=actor, comment=f"Added contact {fields['name']}"):
        contact = Contact.objects.create(
            workspace=workspace,
            name=fields["name"],
            remote_workspace=fields["workspace"],
            box_public_key=fields["boxKey"],
            signing_public_key=fields["signingKey"],
            inbox_url=fields["inboxUrl"],
            added_by=actor,
        )
        # What they sent before they were a contact now counts, and stays, as a contact's.
        # A derived flag, not anyone's edit: this revision's comment tells the story.
        Message.objects.filter(
            workspace=workspace,
            direction=Message.Direction.INCOMING,
            sender_tag=crypto.sender_tag(crypto.key_from_b64(fields["signingKey"])),
        ).update(from_contact=True)
    return contact


def contact_get(*, workspace: Workspace, contact_id) -> Contact:
    contact = None
    if (number := whole_number(contact_id)) is not None:
        contact = Contact.objects.filter(workspace=workspace, pk=number).first()
    if contact is None:
        raise Http404(f"{workspace.name} has no contact {contact_id}.")
    return contact
