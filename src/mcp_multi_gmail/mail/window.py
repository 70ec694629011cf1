"""The window scan shared by mg_next_pass, mg_label_message's `since` and the --wait watcher.

Two conditions only — not carrying the processed label, delivered since the boundary's day —
because Gmail checks search conditions per message: any extra condition can drop a thread whose
new message does not satisfy it, and the answer would look cleanly empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..config import Account
from ..errors import MailError
from ..gmail.imap import ALL_MAIL, Fetched, ImapSession
from .results import MessageState, WindowState
from .summary import carries, iso, message_state

MAX_WINDOW = 5000
SCAN_ITEMS = ["X-GM-THRID", "INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "FLAGS"]
_EPOCH = datetime.min.replace(tzinfo=UTC)


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


def window_criteria(account: Account, since: datetime) -> list[Any]:
    """UID SEARCH NOT X-GM-LABELS "<processed>" SINCE <day> (SINCE alone without a processed label)."""
    day = since.astimezone(UTC).date()
    if account.processed_label is None:
        return ["SINCE", day]
    return ["NOT", "X-GM-LABELS", account.processed_label, "SINCE", day]


def _too_broad(account: Account, since: datetime, count: int) -> MailError:
    day = since.astimezone(UTC).date().isoformat()
    label = f' (without the label "{account.processed_label}")' if account.processed_label else ""
    return MailError(
        "query_too_broad",
        f'The window since {day} holds {count} messages{label} in mailbox "{account.name}", more than '
        f"{MAX_WINDOW}. Work through it in chunks: use a later boundary, clear that window until "
        "window_clear is true, then come back with an earlier boundary. Leaving the boundary at the later "
        "date would lose everything before it. A mailbox older than this server has never-labelled old "
        "mail, so the honest first boundary is the day it was connected.",
    )


def scan_window(session: ImapSession, account: Account, since: datetime) -> Window:
    # searched_at is taken before the search, so mail arriving during the pass stays inside the window.
    window = Window(account=account, since=since, searched_at=datetime.now(UTC))
    session.open(ALL_MAIL)
    uids = session.search(window_criteria(account, since))
    if len(uids) > MAX_WINDOW:
        raise _too_broad(account, since, len(uids))
    fetched = session.fetch(uids, SCAN_ITEMS)
    for uid in uids:
        item = fetched.get(uid)
        if item is None:
            continue  # gone between SEARCH and FETCH
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
