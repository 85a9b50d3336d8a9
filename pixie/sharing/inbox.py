"""Reading a workspace's messages: open each letter, tell who really sent it, spot shares.

Opening is done in memory for a whole page at once, with one query each for
the identity and the contacts, so a page costs the same whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.http import Http404

from pixie.core.models import Workspace
from pixie.core.skillshare import SENTINEL, Share, decode
from pixie.core.web.whole_numbers import whole_number
from pixie.sharing import crypto
from pixie.sharing.models import Contact, Identity, Message, ShareImport

from .dispatch import dispatch_problem
from .identities import private_keys


class Sender:
    SELF = "self"  # a message this workspace sent
    KNOWN = "known"  # signed by a contact's key, with the card we hold
    MISMATCHED = "mismatched"  # a contact's key with other keys, or a contact's name
    UNKNOWN = "unknown"


@dataclass
class OpenedMessage:
    message: Message
    sender: str
    contact: Contact | None  # the recipient, the known sender, or the one it claims to be
    claimed_name: str = ""
    fingerprint: str = ""  # of the keys that signed it and that it gives to reply to
    sender_card: dict | None = None  # the card the letter carries, as it was signed
    sent_at: datetime | None = None
    text: str = ""
    share: Share | None = None
    problem: str = ""
    signed_by: str = ""  # the key that signed it (base64), checked when it was opened
    # A workspace of this server whose keys signed it and that it names to reply to: this
    # server holds its private keys, so it knows who sent it (set for an unknown sender).
    local: Workspace | None = None

    @property
    def outgoing(self) -> bool:
        return self.message.direction == Message.Direction.OUTGOING

    @property
    def share_import(self) -> ShareImport | None:
        return getattr(self.message, "share_import", None)

    @property
    def import_refusal(self) -> str:
        """Why this message cannot be imported by anyone, or "" when it can."""
        if self.share is None:
            return "it carries no skill share"
        if self.outgoing:
            return "you shared it; there is nothing to import from yourself"
        if self.sender == Sender.MISMATCHED:
            return (
                f"it claims to be from {self.contact.name} but does not match the contact "
                "card you hold"
            )
        if self.sender != Sender.KNOWN:
            return "its sender is not one of your contacts"
        return ""

    @property
    def dispatch_problem(self) -> str:
        """Why the last delivery attempt failed, as a kind of failure ("" if it did not)."""
        return dispatch_problem(self.message.last_error)

    @property
    def can_import(self) -> bool:
        return not self.import_refusal

    @property
    def linked_count(self) -> int:
        return len(self.share.closure) if self.share else 0

    @property
    def correspondent(self) -> str:
        """Who it is from, or to, as the pages say it."""
        if self.outgoing:
            return f"To {self.contact.name}" if self.contact else "To a removed contact"
        if self.problem:
            return "Could not be opened"
        if self.sender == Sender.KNOWN:
            return f"From {self.contact.name}"
        if self.sender == Sender.MISMATCHED:
            return f"Claims to be {self.contact.name} (does not match your contact card)"
        if self.local is not None:
            return (
                f"From {self.local.name} ({self.local.slug}), a workspace on this server, "
                "not one of your contacts yet"
            )
        return f"From an unknown sender calling itself “{self.claimed_name}”"


def messages_of(workspace: Workspace) -> QuerySet[Message]:
    return Message.objects.filter(workspace=workspace).select_related("contact", "share_import")


def message_get(*, workspace: Workspace, message_id) -> Message:
    message = None
    if (number := whole_number(message_id)) is not None:
        message = messages_of(workspace).filter(pk=number).first()
    if message is None:
        raise Http404(f"{workspace.name} has no message {message_id}.")
    return message


def messages_open(*, messages: list[Message]) -> list[OpenedMessage]:
    """Open a page of messages, of one workspace or several, in two queries."""
    workspace_ids = {message.workspace_id for message in messages}
    if not workspace_ids:
        return []
    identities = {
        i.workspace_id: i for i in Identity.objects.filter(workspace_id__in=workspace_ids)
    }
    contacts: dict[int, list[Contact]] = {}
    for contact in Contact.objects.filter(workspace_id__in=workspace_ids):
        contacts.setdefault(contact.workspace_id, []).append(contact)
    openers = {
        workspace_id: _Opener(identity, contacts.get(workspace_id, []))
        for workspace_id, identity in identities.items()
    }
    opened = [
        openers[message.workspace_id].open(message)
        if message.workspace_id in openers
        else OpenedMessage(message, Sender.UNKNOWN, None, problem="this workspace has no keys")
        for message in messages
    ]
    _find_local_senders(opened)
    return opened


def _find_local_senders(opened: list[OpenedMessage]) -> None:
    """Mark each message from an unknown sender whose keys are a workspace of this server
    (one query for the page, none when every sender is known)."""
    unknown = [o for o in opened if o.sender == Sender.UNKNOWN and o.signed_by and not o.problem]
    if not unknown:
        return
    identities = {
        identity.signing_public_key: identity
        for identity in Identity.objects.filter(
            signing_public_key__in={o.signed_by for o in unknown}
        ).select_related("workspace")
    }
    for one in unknown:
        identity = identities.get(one.signed_by)
        if (
            identity is not None
            and identity.box_public_key == (one.sender_card or {}).get("boxKey")
            and identity.workspace_id != one.message.workspace_id
        ):
            one.local = identity.workspace


def message_open(*, message: Message) -> OpenedMessage:
    return messages_open(messages=[message])[0]


class _Opener:
    def __init__(self, identity: Identity, contacts: list[Contact]):
        self.keys = private_keys(identity)
        self.by_signing_key = {contact.signing_public_key: contact for contact in contacts}
        self.by_name = {contact.name.casefold(): contact for contact in contacts}

    def open(self, message: Message) -> OpenedMessage:
        outgoing = message.direction == Message.Direction.OUTGOING
        try:
            letter = crypto.open_sealed(
                sealed=message.own_copy if outgoing else message.envelope,
                box_private=self.keys.box_private,
                message_id=str(message.message_id),
                addressed_to=None if outgoing else self.keys.box_public,
            )
            if outgoing and letter.signing_key != self.keys.signing_public:
                raise crypto.EnvelopeRefused("it was not signed by this workspace")
        except crypto.EnvelopeRefused as exc:
            # Stored envelopes were checked on arrival; this means the keys changed.
            return OpenedMessage(message, Sender.UNKNOWN, None, problem=str(exc))
        if outgoing:
            sender, contact = Sender.SELF, message.contact
        else:
            sender, contact = self._who(letter)
        body = letter.body
        return OpenedMessage(
            message=message,
            sender=sender,
            contact=contact,
            claimed_name=letter.sender["name"],
            sender_card=letter.sender,
            fingerprint=crypto.fingerprint(
                letter.signing_key, crypto.key_from_b64(letter.sender["boxKey"]) or b""
            ),
            sent_at=_timestamp(letter.sent_at),
            signed_by=crypto.b64(letter.signing_key),
            text=body,
            # The cheap test first: most messages are not shares.
            share=decode(body) if SENTINEL in body else None,
        )

    def _who(self, letter: crypto.Letter) -> tuple[str, Contact | None]:
        contact = self.by_signing_key.get(crypto.b64(letter.signing_key))
        if contact is not None:
            if contact.box_public_key == letter.sender["boxKey"]:
                return Sender.KNOWN, contact
            return Sender.MISMATCHED, contact
        namesake = self.by_name.get(letter.sender["name"].strip().casefold())
        if namesake is not None:
            return Sender.MISMATCHED, namesake
        return Sender.UNKNOWN, None


def _timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None
