"""Sharing between workspaces: identities and contacts, sealed messages, skill shares.

The public services (writes) and selectors (reads) for the admin, the API and the tasks.
"""

from .contacts import (
    contact_add_from_message,
    contact_add_local,
    contact_add_local_sender,
    contact_card_import,
    contact_get,
    directory_listing_set,
    local_contact_choices,
)
from .envelopes import EnvelopeTooLarge
from .guard import InboxBusy, InboxState, client_address, inbox_states
from .identities import contact_card_export, identity_ensure, inbox_url
from .inbox import OpenedMessage, Sender, message_get, message_open, messages_of, messages_open
from .receiving import AlreadyReceived, EnvelopeRefusedError, envelope_receive
from .sending import message_retry, message_send, text_send
from .shares import (
    FILES_STAY,
    ImportResult,
    Review,
    SharePreview,
    outcome_lines,
    share_body,
    share_import,
    share_preview,
    share_review,
    share_send,
)
from .triage import (
    BlockResult,
    may_block,
    messages_delete,
    messages_expire,
    messages_keep,
    pending_from,
    sender_block,
    sender_unblock,
)

__all__ = [
    "AlreadyReceived",
    "BlockResult",
    "InboxBusy",
    "InboxState",
    "EnvelopeRefusedError",
    "EnvelopeTooLarge",
    "FILES_STAY",
    "ImportResult",
    "OpenedMessage",
    "Review",
    "Sender",
    "SharePreview",
    "client_address",
    "contact_add_from_message",
    "contact_add_local",
    "contact_add_local_sender",
    "local_contact_choices",
    "contact_card_export",
    "contact_card_import",
    "contact_get",
    "directory_listing_set",
    "envelope_receive",
    "identity_ensure",
    "inbox_states",
    "inbox_url",
    "may_block",
    "message_get",
    "message_open",
    "message_retry",
    "message_send",
    "messages_delete",
    "messages_expire",
    "messages_keep",
    "messages_of",
    "messages_open",
    "outcome_lines",
    "pending_from",
    "sender_block",
    "sender_unblock",
    "share_body",
    "share_import",
    "share_preview",
    "share_review",
    "share_send",
    "text_send",
]
