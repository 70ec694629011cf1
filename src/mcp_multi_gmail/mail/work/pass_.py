"""mg_next_pass: the threads with unprocessed work since a boundary (docs/en/configuration.md, "Pass modes").

One search, one FETCH for every match, then for the page's threads one OR-tree SEARCH and one
FETCH: the command count does not grow with the number of threads.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from ...config import Account
from ...domain import Address
from ...errors import MailError
from ...gmail.imap import Fetched, ImapSession
from ...runtime import Runtime
from ..core import budget, inputs
from ..core.cursor import Key, decode, fingerprint, key_of, newest_first
from ..core.invitations import InvitationBrief, Read, brief, read_invitations
from ..core.lookup import or_tree
from ..core.preview import previews
from ..core.session import SearchFailure, each_mailbox
from ..core.summary import iso
from ..reminding import DueReminder, FollowUps, follow_ups
from .window import ThreadWork, Window, scan_window

logger = logging.getLogger(__name__)
_LATEST = datetime.max.replace(tzinfo=UTC)
THREAD_FACT_ITEMS = ["X-GM-THRID", "INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "BODYSTRUCTURE"]


class PassMessage(BaseModel):
    account: str
    message_id: str | None
    from_: Address | None = Field(alias="from")
    to: list[Address]
    cc: list[Address]
    received_at: str | None
    state: Literal["received", "sent"]
    in_inbox: bool
    preview: str | None = Field(
        description="Written by the sender: the first 300 characters of the text, quotes and signature left "
        "out; null without a text part"
    )
    invitation: InvitationBrief | None = Field(
        default=None,
        description="The calendar event it carries, in brief (what, when, who, this mailbox's answer); "
        "mg_get_message has the whole of it",
    )

    model_config = {"populate_by_name": True}


class PendingOutgoing(BaseModel):
    message_id: str | None
    to: list[Address]
    subject: str | None
    state: Literal["draft", "scheduled"]
    goes_out_at: str | None = Field(description="Scheduled: the due time; draft: null")


class PassThread(BaseModel):
    account: str
    thread_id: str
    subject: str | None = Field(description="Subject of the thread's oldest message")
    message_count: int | None = Field(
        description="Messages in the whole thread; null = unknown, read the thread with mg_get_thread"
    )
    last_received_at: str | None = Field(description="Newest unprocessed (work) message")
    classification: list[str]
    user_labels: list[str]
    assigned: Literal["mine", "other", "none"] | None = Field(
        description="null when this mailbox has no assignment_labels"
    )
    unprocessed: list[PassMessage] = Field(description="Work plus out-of-scope messages, oldest first")
    pending_outgoing: list[PendingOutgoing]


class PassResult(BaseModel):
    searched_at: str = Field(description="Taken before the search: the next boundary when window_clear is true")
    since: str = Field(description="The boundary, ISO-8601 UTC")
    threads: list[PassThread]
    total_threads: int
    next_page_token: str | None
    stale_threads: int = Field(description="Threads whose matches already carry the processed label (index lag)")
    index_stale_hits: int = Field(
        description="Messages the search index returned as unprocessed that the live labels show processed, "
        "left out (every mailbox); read state and inbox are always taken from the live mailbox"
    )
    drafts_in_window: int
    scheduled_in_window: int
    outside_scope_in_window: int
    oldest_unprocessed_at: str | None
    window_clear: bool = Field(description="Move the boundary to searched_at only when this is true")
    reminders_due: list[DueReminder] = Field(
        default_factory=list,
        description="First page only: threads whose reminder day has come (they stay until mg_remind clears or "
        "moves them), and reply reminders whose answer came (reported once, then taken off)",
    )
    awaiting_overdue: int = Field(
        default=0,
        description="First page only: threads waiting for an answer longer than follow_up_after; "
        "mg_awaiting_replies lists them",
    )
    searched: list[str]
    failures: list[SearchFailure]
    page_budget_exhausted: bool = budget.page_cut_field(budget.FEWER_THREADS)
    cut: list[budget.Cut] = budget.cut_field()

    def describe_cut(self, path: budget.JsonPath, shown: int, total: int) -> budget.Cut | None:
        """A thread's unprocessed messages cut by the budget are all in mg_get_thread (budget.shrink)."""
        if len(path) == 3 and path[0] == "threads" and path[2] == "unprocessed" and isinstance(path[1], int):
            how = f"mg_get_thread with thread_id={self.threads[path[1]].thread_id} lists every message of the thread"
            return budget.Cut(field=budget.dotted(path), shown=shown, total=total, how_to_get_the_rest=how)
        return None


def _thread_members(session: ImapSession, threads: list[ThreadWork]) -> dict[int, list[Fetched]]:
    if not threads:
        return {}
    uids = session.search(or_tree([t.thread_id for t in threads]))
    members: dict[int, list[Fetched]] = {}
    for item in session.fetch(uids, THREAD_FACT_ITEMS).values():
        if item.thread_id is not None:
            members.setdefault(item.thread_id, []).append(item)
    return members


def _key(label: str) -> str:
    return label.casefold()


def _classification(account: Account, labels: set[str]) -> list[str]:
    present = {_key(lb) for lb in labels}
    return sorted(name for name in account.classification_labels if _key(name) in present)


def _user_labels(account: Account, labels: set[str]) -> list[str]:
    hidden = {_key(name) for name in account.classification_labels}
    if account.processed_label is not None:
        hidden.add(_key(account.processed_label))
    kept: dict[str, str] = {}
    for label in sorted(labels):
        if label.startswith("\\") or _key(label) in hidden:
            continue  # system labels, categories, our own labels
        kept.setdefault(_key(label), label)
    return sorted(kept.values(), key=str.casefold)


def _assigned(account: Account, labels: set[str]) -> str | None:
    if not account.assignment_labels:
        return None  # the question is not asked in this mailbox
    present = {_key(lb) for lb in labels}
    if account.my_label is not None and _key(account.my_label) in present:
        return "mine"  # the user's own label wins when a thread carries two people's
    if any(_key(name) in present for name in account.assignment_labels):
        return "other"
    return "none"  # labels outside the list never make a thread someone else's


def _pass_message(
    window: Window, item: Fetched, shown: dict[int, str | None], invited: dict[int, Read] | None = None
) -> PassMessage:
    envelope = item.envelope
    state = window.states.get(item.uid, "received")
    return PassMessage(
        preview=shown.get(item.uid),
        invitation=brief((invited or {}).get(item.uid, (None, None))[0]),
        account=window.account.name,
        message_id=envelope.message_id if envelope else None,
        from_=envelope.from_ if envelope else None,
        to=list(envelope.to) if envelope else [],
        cc=list(envelope.cc) if envelope else [],
        received_at=iso(item.internaldate),
        state="sent" if state == "sent" else "received",
        in_inbox=any(lb.lstrip("\\").casefold() == "inbox" for lb in item.labels or ()),
    )


def _pending(window: Window, item: Fetched) -> PendingOutgoing:
    envelope = item.envelope
    state = window.states.get(item.uid)
    due = (envelope.date if envelope and envelope.date else item.internaldate) if state == "scheduled" else None
    return PendingOutgoing(
        message_id=envelope.message_id if envelope else None,
        to=list(envelope.to) if envelope else [],
        subject=envelope.subject if envelope else None,
        state="scheduled" if state == "scheduled" else "draft",
        goes_out_at=iso(due),
    )


def _describe(
    window: Window,
    thread: ThreadWork,
    members: list[Fetched] | None,
    shown: dict[int, str | None],
    invited: dict[int, Read] | None = None,
) -> PassThread:
    account = window.account
    own = [*thread.work, *thread.outgoing]
    labels = {lb for m in members or () for lb in m.labels or ()}
    if not labels:
        labels = {lb for m in own for lb in m.labels or ()}
    oldest = min(members, key=lambda m: (m.internaldate or _LATEST, m.uid)) if members else None
    subject = oldest.envelope.subject if oldest and oldest.envelope else None
    if subject is None and thread.work and thread.work[0].envelope:
        subject = thread.work[0].envelope.subject
    unprocessed = sorted([*thread.work, *thread.outside], key=lambda m: (iso(m.internaldate) or "", m.uid))
    return PassThread(
        account=account.name,
        thread_id=str(thread.thread_id),
        subject=subject,
        # Never the number in hand: null says "read the thread", a number says "this is all of it".
        message_count=len(members) if members else None,
        last_received_at=iso(thread.newest_work),
        classification=_classification(account, labels),
        user_labels=_user_labels(account, labels),
        assigned=_assigned(account, labels),
        unprocessed=[_pass_message(window, m, shown, invited) for m in unprocessed],
        pending_outgoing=[_pending(window, m) for m in thread.outgoing],
    )


@dataclass
class MailboxPass:
    window: Window
    threads: list[PassThread]
    keys: list[Key]  # the sort key of each thread shown, for the next page's cursor
    total: int
    more: bool  # threads after the last one shown
    follow: FollowUps | None = None  # reminders and overdue replies, on the first page


def pass_mailbox(
    session: ImapSession,
    account: Account,
    since: datetime,
    after: Key | None,
    limit: int,
    runtime: Runtime | None = None,
) -> MailboxPass:
    """One mailbox's page; with `runtime` on the first page also its reminders and overdue replies."""
    window = scan_window(session, account, since)
    busy = window.work_threads()
    keyed = [(key_of(t.newest_work, t.thread_id, account.name), t) for t in busy]
    remaining = [(k, t) for k, t in keyed if after is None or k < after]
    page = [t for _k, t in remaining[:limit]]
    members = _thread_members(session, page)
    # Previews of the page's unprocessed messages: one FETCH, read from the members' structures.
    wanted = {m.uid for t in page for m in [*t.work, *t.outside]}
    shown = previews(session, [m for ms in members.values() for m in ms if m.uid in wanted])
    # Invitations among them, in brief: one more FETCH, only when a calendar part is there.
    invited = read_invitations(session, [m for ms in members.values() for m in ms if m.uid in wanted], account)
    follow = _follow_ups(runtime, session, account) if runtime is not None and after is None else None
    return MailboxPass(
        window,
        [_describe(window, t, members.get(t.thread_id), shown, invited) for t in page],
        [k for k, _t in remaining[:limit]],
        len(busy),
        len(remaining) > limit,
        follow,
    )


def _follow_ups(runtime: Runtime, session: ImapSession, account: Account) -> FollowUps | None:
    """Reminders and overdue replies; a refusal there never costs the pass its mail (logged, left out)."""
    try:
        return follow_ups(runtime, session, account, runtime.clock())
    except MailError as error:
        if session.dead:
            raise
        logger.warning("mailbox %s: reminders left out of the pass: %s", account.name, error.message)
        return None


async def next_pass(
    runtime: Runtime, account_name: str, since_text: str, max_threads: int, page_token: str | None
) -> PassResult:
    since = inputs.since(since_text)
    stamp = fingerprint("mg_next_pass", account=account_name, since=iso(since), max_threads=max_threads)
    after = decode(page_token, stamp)
    answers = await each_mailbox(
        runtime, account_name, lambda s, account: pass_mailbox(s, account, since, after, max_threads, runtime)
    )
    return _result(since, answers.done, answers.failures, max_threads, stamp, answers.searched)


def _result(
    since: datetime,
    done: list[MailboxPass],
    failures: list[SearchFailure],
    limit: int,
    stamp: str,
    searched: list[str],
) -> PassResult:
    page = newest_first(done, limit)
    total = sum(one.total for one in done)
    windows = [one.window for one in done]
    # The earliest moment: moving the boundary past a slower mailbox's search would skip its mail.
    searched_at = min((w.searched_at for w in windows), default=datetime.now(UTC))
    oldest = min((w.oldest_unprocessed for w in windows if w.oldest_unprocessed), default=None)

    def result_for(count: int) -> PassResult:
        return PassResult(
            searched_at=iso(searched_at) or "",
            since=iso(since) or "",
            **page.fields("mg_next_pass", stamp, count, total),
            stale_threads=sum(w.stale_threads for w in windows),
            index_stale_hits=sum(w.stale_hits for w in windows),
            drafts_in_window=sum(w.drafts for w in windows),
            scheduled_in_window=sum(w.scheduled for w in windows),
            outside_scope_in_window=sum(w.outside_scope for w in windows),
            oldest_unprocessed_at=iso(oldest),
            window_clear=not failures and total == 0,
            reminders_due=[r for one in done if one.follow for r in one.follow.due],
            awaiting_overdue=sum(one.follow.overdue for one in done if one.follow),
            searched=searched,
            failures=failures,
        )

    # The page ends where the result budget does; the token continues after its last thread.
    return budget.fit_page(result_for, len(page.keyed))
