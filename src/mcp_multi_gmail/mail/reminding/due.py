"""What a pass brings back besides new mail: reminders that fell due, and how many replies are overdue.

Per mailbox, on a pass's first page (docs/pripominky.md, docs/en/follow-ups.md):
- the window of mg_awaiting_replies (one SEARCH, one FETCH) gives the count of threads waiting
  longer than follow_up_after, and whether a reply reminder's answer came;
- one LIST of the labels under the reminder parent; the window's FETCH gives the live labels of
  every thread active in the last 30 days, and when some reminders are due one SEARCH and one
  FETCH find them on older threads too. A reminder is found through any message of its thread
  that carries it, not only the newest one.
- a reply reminder whose answer came is reported once, then taken off the whole thread; a due
  reminder stays until the assistant clears or moves it with mg_remind;
- once a day, a date label of a past day that no message carries any more is deleted; nothing
  else under the parent is touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from ...config import Account, UserZone
from ...gmail.imap import ALL_MAIL, ImapSession
from ...policy import reminders as family
from ...runtime import Runtime
from ..core import writes
from ..core.summary import carries
from . import waiting as awaiting

WINDOW = timedelta(days=30)


class DueReminder(BaseModel):
    account: str
    thread_id: str
    subject: str | None
    kind: str = Field(description='"reply" or "revisit"')
    on: str = Field(description="YYYY-MM-DD or YYYY-MM-DDTHH:MM in the user's zone")
    answered: bool | None = Field(
        description="reply: an answer came (the reminder was then taken off; reported this once); revisit: null"
    )


@dataclass
class FollowUps:
    due: list[DueReminder] = field(default_factory=list)
    overdue: int = 0


def is_due(reminder: family.Reminder, zone: UserZone, now: datetime) -> bool:
    """Whether a reminder's day (or its time) has come in the user's zone."""
    if reminder.at is None:
        return reminder.day <= zone.today(now)
    return reminder.due_at(zone) <= now


def any_of(key: str, values: list[Any]) -> list[Any]:
    """KEY a OR KEY b ... in flat prefix form (RFC 3501 section 6.4.4; a UTF-8 label goes as a literal)."""
    criteria: list[Any] = []
    for index, value in enumerate(values):
        if index < len(values) - 1:
            criteria.append("OR")
        criteria += [key, value]
    return criteria


def follow_ups(runtime: Runtime, session: ImapSession, account: Account, now: datetime) -> FollowUps:
    zone = runtime.config.zone
    parent = account.reminder_label
    window = awaiting.read_window(session, account, now, WINDOW)
    overdue = awaiting.waiting_in(window, account, now, timedelta(seconds=account.follow_up_after_s), WINDOW)
    found = FollowUps(overdue=len(overdue))
    listed = session.labels_under(parent)
    if listed is None:
        return found  # Gmail refused the LIST: no reminders this pass, the count stands
    named = {name: r for name in listed if (r := family.parse_label(parent, name)) is not None}
    if not named:
        return found
    # The window's FETCH already read the live labels of every thread active in the last 30 days
    # (a reply can only have come to one of those); the search index, which lags behind a label
    # just set, is asked only for due reminders on older threads.
    threads: dict[int, set[str]] = {
        thread: {lb for lb in labels if family.is_family(parent, lb)}
        for thread, labels in window.labels.items()
        if any(family.parse_label(parent, lb) is not None for lb in labels)
    }
    subjects = {thread: window.subject(thread) for thread in threads}
    due_names = [name for name, r in named.items() if is_due(r, zone, now)]
    if due_names:
        session.open(ALL_MAIL)
        uids = session.search(any_of("X-GM-LABELS", due_names))
        for item in (session.fetch(uids, ["X-GM-THRID", "X-GM-LABELS", "ENVELOPE"]) if uids else {}).values():
            if item.thread_id is not None:
                threads.setdefault(item.thread_id, set()).update(item.labels or ())
                subjects.setdefault(item.thread_id, item.envelope.subject if item.envelope else None)
    answered: list[int] = []
    for thread, labels in sorted(threads.items()):
        dated = [r for lb in labels if (r := family.parse_label(parent, lb)) is not None]
        if not dated:
            continue
        first = min(dated, key=lambda r: r.sort_key)
        came = awaiting.answered(window, thread, now) if first.kind == "reply" else None
        if came:
            answered.append(thread)
        if came or is_due(first, zone, now):
            found.due.append(
                DueReminder(
                    account=account.name,
                    thread_id=str(thread),
                    subject=subjects.get(thread),
                    kind=first.kind,
                    on=first.shown,
                    answered=came,
                )
            )
    if answered:
        _clear_answered(session, parent, answered)
    _sweep_empty(runtime, session, account, named, threads, now)
    return found


def _clear_answered(session: ImapSession, parent: str, threads: list[int]) -> None:
    """Take the reply reminders off every message of these threads (an answer came), through the one
    label routine (core/writes), read back; no undo record: the rule did it, not a tool call."""
    session.open(ALL_MAIL, writable=True)
    members = session.fetch(session.search(any_of("X-GM-THRID", threads)), writes.READ_BACK)
    replies = {
        lb
        for item in members.values()
        for lb in item.labels or ()
        if (r := family.parse_label(parent, lb)) is not None and r.kind == "reply"
    }
    wants = [
        writes.Want("label", label, False, [uid for uid, item in members.items() if carries(item.labels, label)])
        for label in sorted(replies)
    ]
    writes.apply(session, members, wants)


def _sweep_empty(
    runtime: Runtime,
    session: ImapSession,
    account: Account,
    named: dict[str, family.Reminder],
    threads: dict[int, set[str]],
    now: datetime,
) -> None:
    """Once a day per mailbox: delete date labels of past days that no message carries."""
    today = runtime.config.zone.today(now)
    if runtime.reminder_sweeps.get(account.name) == today:
        return
    runtime.reminder_sweeps[account.name] = today
    carried = {lb.casefold() for labels in threads.values() for lb in labels}
    for name, reminder in named.items():
        if reminder.day < today and name.casefold() not in carried and session.examine(name) == 0:
            # EXAMINE read the label's own view: empty, so the search index was not merely behind.
            session.delete_label(name)


# A watcher's key of a due reminder (watch/check.py): apart from mail keys, and new when a reminder moves.
DUE_KEY_PREFIX = "připomínka:"


def due_keys(session: ImapSession, account: Account, zone: UserZone, now: datetime) -> set[str]:
    """Keys of the reminders due now, one per thread and label: one LIST, and when some are due one
    SEARCH and one FETCH. Nothing of a message's content is read."""
    parent = account.reminder_label
    named = {name: r for name in session.labels_under(parent) or () if (r := family.parse_label(parent, name))}
    wanted = [name for name, r in named.items() if is_due(r, zone, now)]
    if not wanted:
        return set()
    session.open(ALL_MAIL)
    uids = session.search(any_of("X-GM-LABELS", wanted))
    keys: set[str] = set()
    for item in (session.fetch(uids, ["X-GM-THRID", "X-GM-LABELS"]) if uids else {}).values():
        for label in item.labels or ():
            if label in wanted and item.thread_id is not None:
                keys.add(f"{DUE_KEY_PREFIX}{item.thread_id}/{label}")
    return keys
