"""A fetched message as the assistant sees it: state, processed, inbox, labels."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from ...config import Account
from ...domain import Address, Authentication
from ...gmail.imap import Fetched
from ...gmail.parse.authresults import authentication
from ...statefile import utc_stamp
from ...text import clean

# A due time this far ahead of "now" is the future; less is clock skew.
CLOCK_SLACK = timedelta(seconds=60)
INBOX = "\\Inbox"


MessageState = Literal["received", "sent", "draft", "scheduled"]


# What a shown message_id is (parse.envelope.gmail_id for a message whose header has none).
MESSAGE_ID_WORDS = (
    "Message-ID without angle brackets, or gmail-msgid-<Gmail's own id> for a message without one "
    "(every tool that takes a message id accepts both)"
)


class MessageSummary(BaseModel):
    account: str
    message_id: str | None = Field(description=f"{MESSAGE_ID_WORDS}; the stable reference")
    uid: int = Field(description="UID in All Mail, valid only for this answer")
    thread_id: str | None
    subject: str | None
    from_: Address | None = Field(alias="from")
    to: list[Address]
    cc: list[Address]
    received_at: str | None = Field(description="INTERNALDATE (delivery time), ISO-8601 UTC")
    date_header: str | None = Field(description="Date header, ISO-8601 UTC; differs on forwarded and scheduled mail")
    state: MessageState
    processed: bool
    seen: bool
    in_inbox: bool
    labels: list[str]
    flags: list[str]
    size_bytes: int | None
    authentication: Authentication | None = Field(
        default=None, description="SPF/DKIM/DMARC as Gmail recorded them (mx.google.com only)"
    )

    model_config = {"populate_by_name": True}


def _name_key(name: str) -> str:
    return name.lstrip("\\").casefold()


def carries(labels: Iterable[str] | None, name: str) -> bool:
    """Whether a label or flag list holds `name` (leading backslashes and case ignored)."""
    wanted = _name_key(name)
    return any(_name_key(label) == wanted for label in labels or ())


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return utc_stamp(moment)


def self_addresses(account: Account) -> set[str]:
    """The account address and every configured alias: mail from these is "from self"."""
    return {account.address.casefold(), *(alias.address.casefold() for alias in account.aliases)}


def message_state(item: Fetched, account: Account, now: datetime) -> MessageState:
    envelope = item.envelope
    sender = envelope.from_.address if envelope and envelope.from_ else None
    from_self = sender is not None and sender.casefold() in self_addresses(account)
    due = now + CLOCK_SLACK
    # Gmail stores a scheduled message with its due time as INTERNALDATE; only our own mail
    # can be scheduled, so a stranger's odd clock never hides a message from the pass.
    if from_self and item.internaldate is not None and item.internaldate > due:
        return "scheduled"
    is_draft = carries(item.labels, "\\Draft") or carries(item.flags, "\\Draft")
    is_sent = carries(item.labels, "\\Sent")
    if (is_draft or is_sent) and envelope and envelope.date and envelope.date > due:
        return "scheduled"
    if is_draft:
        return "draft"
    if is_sent:
        return "sent"
    return "received"


def is_processed(item: Fetched, account: Account) -> bool:
    return account.processed_label is not None and carries(item.labels, account.processed_label)


def summarize(item: Fetched, account: Account, now: datetime, *, with_auth: bool = False) -> MessageSummary:
    envelope = item.envelope
    sender = envelope.from_ if envelope else None
    auth = None
    if with_auth:
        auth = authentication(item.auth_header or b"", sender.address if sender else None)
    return MessageSummary(
        account=account.name,
        message_id=envelope.message_id if envelope else None,
        uid=item.uid,
        thread_id=None if item.thread_id is None else str(item.thread_id),
        subject=envelope.subject if envelope else None,
        from_=sender,
        to=list(envelope.to) if envelope else [],
        cc=list(envelope.cc) if envelope else [],
        received_at=iso(item.internaldate),
        date_header=iso(envelope.date) if envelope else None,
        state=message_state(item, account, now),
        processed=is_processed(item, account),
        seen=carries(item.flags, "\\Seen"),
        in_inbox=carries(item.labels, INBOX),
        labels=sorted((clean(lb) or "" for lb in item.labels or ()), key=str.casefold),
        flags=sorted(item.flags or ()),
        size_bytes=item.size,
        authentication=auth,
    )
