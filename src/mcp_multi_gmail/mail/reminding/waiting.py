"""The threads where the user spoke last and still waits for an answer (mg_awaiting_replies, the pass).

Cost: one SEARCH SINCE of All Mail for the window and one FETCH of the found
messages' thread ids, labels, envelopes and a few header fields (cut into UIDS_PER_COMMAND
batches), whatever the number of sent threads. Every answer to a message of the window is itself
in the window, so nothing outside it is needed: the threads are put together from the one FETCH.

The rules (docs/pripominky.md, docs/en/follow-ups.md):
- a thread waits when its newest counting message is the user's (the address or an alias), at
  least `older_than` and at most `within` old;
- an answer is a later message in the thread from someone else, or one anywhere in the window
  whose In-Reply-To or References names the user's last message;
- automatic mail and delivery reports do not count; an out-of-office keeps the thread waiting and
  is said in the entry;
- never waiting: mail only to the user's own addresses or to no-reply addresses, list mail,
  calendar answers, threads the user marked as expecting nothing (a reminder label).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from ...config import Account
from ...domain import Address
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession, header_fields_item
from ...gmail.parse import automatic
from ...policy import reminders
from ..core.summary import carries, iso, self_addresses

DAY = timedelta(days=1)
ITEMS = ["X-GM-THRID", "X-GM-LABELS", "INTERNALDATE", "ENVELOPE", header_fields_item(automatic.FIELDS)]


class ReminderInfo(BaseModel):
    kind: str = Field(description='"reply" (ends when an answer comes) or "revisit"')
    on: str = Field(description="YYYY-MM-DD, or YYYY-MM-DDTHH:MM, in the user's zone")
    label: str = Field(description="The reminder's label in the mailbox")


class AwaitingEntry(BaseModel):
    account: str
    thread_id: str
    subject: str | None
    owed_by: list[Address] = Field(description="To (else Cc) of the user's last message, own addresses left out")
    sent_at: str = Field(description="When the user's last message went out (INTERNALDATE), ISO-8601 UTC")
    days_waiting: int
    auto_reply_came: bool = Field(description="An automatic answer (out-of-office) came; it does not end the wait")
    reminder: ReminderInfo | None


@dataclass
class _Message:
    item: Fetched
    when: datetime
    mine: bool
    facts: automatic.Facts


def _reminder(labels: set[str], account: Account) -> ReminderInfo | None:
    found = [r for label in labels if (r := reminders.parse_label(account.reminder_label, label)) is not None]
    if not found:
        return None
    first = min(found, key=lambda r: r.sort_key)
    return ReminderInfo(kind=first.kind, on=first.shown, label=reminders.label_name(account.reminder_label, first))


@dataclass
class WindowMail:
    """Every message of the window by thread, the answers by the ids they name, each thread's labels."""

    threads: dict[int, list[_Message]] = field(default_factory=dict)
    named: dict[str, list[_Message]] = field(default_factory=dict)
    labels: dict[int, set[str]] = field(default_factory=dict)

    def subject(self, thread: int) -> str | None:
        """The subject of the thread's oldest message in the window."""
        for message in self.threads.get(thread, []):
            if message.item.envelope is not None:
                return message.item.envelope.subject
        return None


def read_window(session: ImapSession, account: Account, now: datetime, within: timedelta) -> WindowMail:
    """The window's mail: one SEARCH and one FETCH (in UIDS_PER_COMMAND batches) after EXAMINE."""
    session.open(ALL_MAIL)
    # SINCE, not X-GM-RAW: it reads each message's date, where Gmail's search index lags behind new
    # mail (an answer that came a minute ago must count). A day earlier than needed covers whatever
    # zone Gmail reads the date in (as the pass's window does); the exact edge is each INTERNALDATE.
    uids = session.search(["SINCE", (now - within).date() - DAY])
    window = WindowMail()
    if not uids:
        return window
    own = self_addresses(account)
    for item in session.fetch(uids, ITEMS).values():
        if item.thread_id is None or item.internaldate is None or carries(item.labels, "\\Draft"):
            continue
        sender = item.envelope.from_.address if item.envelope and item.envelope.from_ else None
        mine = sender is not None and sender.casefold() in own
        message = _Message(item, item.internaldate, mine, automatic.facts(item.auth_header, sender))
        window.threads.setdefault(item.thread_id, []).append(message)
        window.labels.setdefault(item.thread_id, set()).update(item.labels or ())
        if not mine:
            for name in message.facts.names:
                window.named.setdefault(name, []).append(message)
    for messages in window.threads.values():
        messages.sort(key=lambda m: (m.when, m.item.uid))
    return window


def waiting_in(
    window: WindowMail, account: Account, now: datetime, older_than: timedelta, within: timedelta
) -> list[AwaitingEntry]:
    """The window's waiting threads, longest waiting first."""
    own = self_addresses(account)
    found = [
        entry
        for thread_id, messages in window.threads.items()
        if (entry := _waiting(thread_id, messages, window, account, own, now, older_than, within)) is not None
    ]
    found.sort(key=lambda e: (e.sent_at, int(e.thread_id)))
    return found


def scan(
    session: ImapSession, account: Account, now: datetime, older_than: timedelta, within: timedelta
) -> list[AwaitingEntry]:
    """Every waiting thread of the mailbox, longest waiting first (two commands after EXAMINE)."""
    return waiting_in(read_window(session, account, now, within), account, now, older_than, within)


def _counting(messages: list[_Message], now: datetime) -> list[_Message]:
    return [m for m in messages if not m.facts.automatic and m.when <= now + timedelta(minutes=1)]


def _answers_elsewhere(window: WindowMail, last: _Message) -> list[_Message]:
    envelope = last.item.envelope
    message_id = (envelope.message_id or "").casefold() if envelope else ""
    return [m for m in window.named.get(message_id, []) if m.when > last.when] if message_id else []


def answered(window: WindowMail, thread_id: int, now: datetime) -> bool:
    """Whether someone other than the user answered the thread's last word from the user (in the window)."""
    counting = _counting(window.threads.get(thread_id, []), now)
    if not counting:
        return False
    if not counting[-1].mine:
        return True
    return any(not m.facts.automatic for m in _answers_elsewhere(window, counting[-1]))


def _waiting(
    thread_id: int,
    messages: list[_Message],
    window: WindowMail,
    account: Account,
    own: set[str],
    now: datetime,
    older_than: timedelta,
    within: timedelta,
) -> AwaitingEntry | None:
    labels = window.labels.get(thread_id, set())
    if any(reminders.is_expect_nothing(account.reminder_label, label) for label in labels):
        return None
    if any(m.facts.mailing_list for m in messages):
        return None
    counting = _counting(messages, now)
    if not counting or not counting[-1].mine:
        return None
    last = counting[-1]
    envelope = last.item.envelope
    if envelope is None or last.facts.calendar_reply or reminders.is_calendar_answer(envelope.subject):
        return None
    if not older_than <= now - last.when <= within:
        return None
    later_elsewhere = _answers_elsewhere(window, last)
    if any(not m.facts.automatic for m in later_elsewhere):
        return None  # answered in a thread of its own (a changed subject)
    others = [a for a in [*envelope.to, *envelope.cc, *envelope.bcc] if (a.address or "").casefold() not in own]
    if not others or all(automatic.is_no_reply(a.address) for a in others):
        return None
    owed = [a for a in envelope.to if a in others and not automatic.is_no_reply(a.address)] or [
        a for a in others if not automatic.is_no_reply(a.address)
    ]
    later = [m for m in messages if m.when > last.when and not m.mine] + later_elsewhere
    return AwaitingEntry(
        account=account.name,
        thread_id=str(thread_id),
        subject=envelope.subject,
        owed_by=owed,
        sent_at=iso(last.when) or "",
        days_waiting=int((now - last.when) // DAY),
        auto_reply_came=any(m.facts.away for m in later),
        reminder=_reminder(labels, account),
    )
