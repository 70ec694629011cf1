"""The window scan shared by mg_next_pass, mg_label_message's `since` and the --wait watcher.

Two conditions only — not carrying the processed label, delivered since the boundary's day —
because Gmail checks search conditions per message: any extra condition can drop a thread whose
new message does not satisfy it, and the answer would look cleanly empty.

Gmail does not read SINCE's date in UTC (Google documents date-only search values as midnight
Pacific time, https://developers.google.com/workspace/gmail/api/guides/filtering, and it may be
the account's own zone). So the search asks for one day more than needed, which covers every
zone from UTC-12 to UTC+14, and the window is cut here from each message's INTERNALDATE.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from pydantic import BaseModel

from ...config import Account
from ...errors import MailError
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession
from ..core.summary import MessageState, carries, iso, message_state

MAX_WINDOW = 5000
# The SEARCH answer also holds the extra day before the window; up to this many more UIDs are read
# (INTERNALDATE only) to find out how many of them really lie inside it.
SEARCH_HEADROOM = 5000
# A message can be missing from SEARCH for a few seconds after it arrives. The window is by day, so
# the next pass finds it again, except across midnight UTC: keep at least this much before the boundary.
INDEX_LAG_MARGIN = timedelta(hours=1)
SCAN_ITEMS = ["X-GM-THRID", "INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "FLAGS"]
_EPOCH = datetime.min.replace(tzinfo=UTC)


class WindowState(BaseModel):
    since: str
    searched_at: str
    window_clear: bool
    oldest_unprocessed_at: str | None
    threads_with_work: int


@dataclass
class ThreadWork:
    """One thread's unprocessed matches, each in exactly one bucket."""

    thread_id: int
    work: list[Fetched] = field(default_factory=list)
    outside: list[Fetched] = field(default_factory=list)
    outgoing: list[Fetched] = field(default_factory=list)
    stale: int = 0

    @property
    def newest_work(self) -> datetime | None:
        return max((m.internaldate or _EPOCH for m in self.work), default=None)


@dataclass
class Window:
    account: Account
    since: datetime
    searched_at: datetime
    threads: dict[int, ThreadWork] = field(default_factory=dict)
    states: dict[int, MessageState] = field(default_factory=dict)
    drafts: int = 0
    scheduled: int = 0
    outside_scope: int = 0

    def work_threads(self) -> list[ThreadWork]:
        """Threads with at least one work message, newest work first."""
        busy = [t for t in self.threads.values() if t.work]
        return sorted(busy, key=lambda t: (t.newest_work or _EPOCH, t.thread_id), reverse=True)

    @property
    def stale_threads(self) -> int:
        return sum(1 for t in self.threads.values() if t.stale and not (t.work or t.outgoing or t.outside))

    @property
    def stale_hits(self) -> int:
        """Messages the search returned without the processed label that the FETCH shows with it."""
        return sum(t.stale for t in self.threads.values())

    @property
    def oldest_unprocessed(self) -> datetime | None:
        return min((m.internaldate or _EPOCH for t in self.threads.values() for m in t.work), default=None)

    @property
    def clear(self) -> bool:
        return not any(t.work for t in self.threads.values())

    def work_keys(self) -> set[str]:
        """Keys of work messages for the watcher; our own sent mail never wakes anybody."""
        keys: set[str] = set()
        for thread in self.threads.values():
            for item in thread.work:
                if self.states.get(item.uid) == "sent":
                    continue
                mid = item.envelope.message_id if item.envelope else None
                keys.add(mid or f"uid:{item.uid}")
        return keys

    def state(self) -> WindowState:
        return WindowState(
            since=iso(self.since) or "",
            searched_at=iso(self.searched_at) or "",
            window_clear=self.clear,
            oldest_unprocessed_at=iso(self.oldest_unprocessed),
            threads_with_work=len(self.work_threads()),
        )


def lower_edge(since: datetime) -> datetime:
    """The earliest INTERNALDATE inside the window: the start of the boundary's UTC day, or an hour
    before the boundary when that is earlier."""
    moment = since.astimezone(UTC)
    day_start = datetime.combine(moment.date(), time.min, UTC)
    return min(day_start, moment - INDEX_LAG_MARGIN)


def inside(item: Fetched, edge: datetime) -> bool:
    # A message without an INTERNALDATE (Gmail always sends one) stays in: never lose mail.
    return item.internaldate is None or item.internaldate >= edge


def window_criteria(account: Account, since: datetime) -> list[Any]:
    """UID SEARCH NOT X-GM-LABELS "<processed>" SINCE <day> (SINCE alone without a processed label).

    <day> is the day before the lower edge's UTC date: whatever zone Gmail reads it in (UTC-12 to
    UTC+14), its midnight lies before the edge, so nothing inside the window is left out."""
    day = lower_edge(since).date() - timedelta(days=1)
    if account.processed_label is None:
        return ["SINCE", day]
    return ["NOT", "X-GM-LABELS", account.processed_label, "SINCE", day]


def _too_broad(account: Account, since: datetime, count: int | None) -> MailError:
    day = since.astimezone(UTC).date().isoformat()
    label = f' (without the label "{account.processed_label}")' if account.processed_label else ""
    holds = f"{count} messages" if count is not None else f"well over {MAX_WINDOW} messages"
    return MailError(
        "query_too_broad",
        f'The window since {day} holds {holds}{label} in mailbox "{account.name}", more than '
        f"{MAX_WINDOW}. Work through it in chunks: use a later boundary, clear that window until "
        "window_clear is true, then come back with an earlier boundary. Leaving the boundary at the later "
        "date would lose everything before it. A mailbox older than this server has never-labelled old "
        "mail, so the honest first boundary is the day it was connected.",
    )


def _window_uids(session: ImapSession, account: Account, since: datetime, edge: datetime) -> list[int]:
    """The SEARCH answer; when it is big, cut to the window first, so the limit counts only messages
    inside the window and not the extra day the search has to ask for."""
    uids = session.search(window_criteria(account, since))
    if len(uids) <= MAX_WINDOW:
        return uids
    if len(uids) > MAX_WINDOW + SEARCH_HEADROOM:
        raise _too_broad(account, since, None)
    dates = session.fetch(uids, ["INTERNALDATE"])
    kept = [uid for uid in uids if uid in dates and inside(dates[uid], edge)]
    if len(kept) > MAX_WINDOW:
        raise _too_broad(account, since, len(kept))
    return kept


def scan_window(session: ImapSession, account: Account, since: datetime) -> Window:
    # searched_at is taken before the search, so mail arriving during the pass stays inside the window.
    window = Window(account=account, since=since, searched_at=datetime.now(UTC))
    edge = lower_edge(since)
    session.open(ALL_MAIL)
    uids = _window_uids(session, account, since, edge)
    fetched = session.fetch(uids, SCAN_ITEMS)
    for uid in uids:
        item = fetched.get(uid)
        if item is None:
            continue  # gone between SEARCH and FETCH
        if not inside(item, edge):
            continue  # the extra day the search asked for
        if item.thread_id is None:
            raise MailError(
                "provider_unsupported",
                f'Mailbox "{account.name}" does not support the Gmail X-GM-THRID extension. '
                "Threads cannot be built without it.",
            )
        thread = window.threads.setdefault(item.thread_id, ThreadWork(item.thread_id))
        state = message_state(item, account, window.searched_at)
        window.states[uid] = state
        _sort_into_bucket(window, thread, item, state)
    return window


def _sort_into_bucket(window: Window, thread: ThreadWork, item: Fetched, state: MessageState) -> None:
    account = window.account
    if account.processed_label is not None and carries(item.labels, account.processed_label):
        thread.stale += 1  # the search index has not caught up with a recent labelling
    elif state in ("draft", "scheduled"):
        thread.outgoing.append(item)
        if state == "draft":
            window.drafts += 1
        else:
            window.scheduled += 1
    elif (account.work_scope == "inbox" and not carries(item.labels, "\\Inbox")) or (
        account.unread_only and carries(item.flags, "\\Seen")
    ):
        thread.outside.append(item)
        window.outside_scope += 1
    else:
        thread.work.append(item)
