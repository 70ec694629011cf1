"""What happens to a message smtp.gmail.com accepted: the outbox record, Message-ID and Date
completed, filing into the sender's Sent Mail and delivery to every recipient that is an emulator
account.

The front (`smtp.SmtpFront`) records the entry and schedules these steps on the emulator's loop
after the knobs' delays; here they are plain functions of the store they act on.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from email.utils import format_datetime

from .mime import ParsedMessage
from .smtp_faults import PortKind
from .store import FLAG_SEEN, INBOX, SENT, Message, Store, bare_id
from .trace import gmail_trace

__all__ = ["Job", "OutboxEntry", "deliver", "file_sent", "prepare"]


@dataclass(frozen=True)
class OutboxEntry:
    """One message accepted after DATA, exactly as the client sent it."""

    account: str  # the authenticated account
    envelope_from: str
    recipients: list[str]
    data: bytes  # exact bytes received (dot-unstuffed), before any header was added
    port_kind: PortKind
    at: float  # emulator clock at acceptance


# --------------------------------------------------------------------------- a send in flight


@dataclass
class Job:
    """One accepted message on its way into the sender's Sent Mail and the recipients' INBOXes."""

    account: str
    raw: bytes  # with Message-ID / Date completed
    header_id: str | None
    date: str | None
    recipients: list[str]
    # The sender's own copy once it exists (sent to oneself: one message, \\Sent and \\Inbox).
    own_copy: Message | None = None


def norm_date(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    return re.sub(r"\s+", " ", text).strip() or None


def prepare(entry: OutboxEntry, store: Store, rng: random.Random) -> Job:
    """The message as Gmail files it: a Message-ID and a Date added when the client sent none."""
    parsed = ParsedMessage(entry.data)
    extra: list[bytes] = []
    header_id = parsed.message_id
    if not header_id:
        token = "".join(rng.choice("0123456789abcdef") for _ in range(24))
        header_id = f"<{token[:8]}.{token[8:12]}0a20.{token[12:16]}.{token[16:]}@mx.google.com>"
        extra.append(b"Message-ID: " + header_id.encode("ascii"))
    dates = parsed.raw_header("date")
    date = norm_date(dates[0]) if dates else None
    if date is None:
        date = format_datetime(store.now())
        extra.append(b"Date: " + date.encode("ascii"))
    raw = b"".join(line + b"\r\n" for line in extra) + parsed.raw
    return Job(
        account=entry.account,
        raw=raw,
        header_id=bare_id(header_id),
        date=date,
        recipients=list(entry.recipients),
    )


def _own_copy(job: Job, account_messages: dict[int, Message]) -> Message | None:
    own = job.own_copy
    if own is not None and account_messages.get(own.msgid) is own:
        return own
    return None


def file_sent(store: Store, job: Job) -> None:
    account = store.account(job.account)
    if account is None:
        return
    own = _own_copy(job, account.messages)
    if own is not None:
        if SENT not in own.labels:
            account.set_labels(own, own.labels | {SENT})
        if FLAG_SEEN not in own.flags:
            account.set_flags(own, own.flags | {FLAG_SEEN})
        return
    for msg in account.messages.values() if store.knobs.merge_similar_sent else ():
        if SENT not in msg.labels or msg.header_id != job.header_id:
            continue
        dates = msg.parsed.raw_header("date")
        if (norm_date(dates[0]) if dates else None) == job.date:
            return  # Gmail skips filing a "similar" message already in Sent
    job.own_copy = account.add_message(job.raw, labels=[SENT], flags=[FLAG_SEEN])


def deliver(store: Store, job: Job, rcpt: str) -> None:
    account = store.account(rcpt)
    if account is None:
        return
    if account.address.lower() == job.account.lower():
        own = _own_copy(job, account.messages)
        if own is not None:
            if INBOX not in own.labels:
                account.set_labels(own, own.labels | {INBOX})
            return
        job.own_copy = account.add_message(job.raw, labels=[INBOX])
        return
    # Gmail accepting mail for another mailbox writes its trace and verdict on top.
    trace = gmail_trace(job.raw, recipient=account.address, when=store.now(), mail_from=job.account)
    account.add_message(trace + job.raw, labels=[INBOX])
