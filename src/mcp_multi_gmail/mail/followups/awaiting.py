"""mg_awaiting_replies: the waiting threads of one mailbox or all, longest waiting first, in pages.

Which threads wait, and at what cost, is `reminding.waiting`'s (docs/pripominky.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, Field

from ...config import Account
from ...gmail.imap import ALL_MAIL, ImapSession
from ...runtime import Runtime
from ..core import budget
from ..core.cursor import Key, decode, fingerprint, newest_first
from ..core.session import SearchFailure, each_mailbox
from ..reminding import AwaitingEntry, scan

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class AwaitingResult(BaseModel):
    threads: list[AwaitingEntry] = Field(description="Longest waiting first")
    total_threads: int
    next_page_token: str | None = budget.next_page_field("threads")
    searched: list[str]
    failures: list[SearchFailure]
    page_budget_exhausted: bool = budget.page_cut_field(budget.FEWER_THREADS)
    cut: list[budget.Cut] = budget.cut_field()


@dataclass
class Waiting:
    """One mailbox's waiting threads, longest waiting first, with their page keys."""

    threads: list[AwaitingEntry] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    total: int = 0
    more: bool = False


def _key(entry: AwaitingEntry) -> Key:
    # Pages run from the biggest key down; the longest waiting (oldest) thread must come first.
    sent = datetime.fromisoformat(entry.sent_at.replace("Z", "+00:00"))
    return Key(-int((sent - _EPOCH).total_seconds() * 1_000_000), int(entry.thread_id), entry.account)


def _page(entries: list[AwaitingEntry], after: Key | None, limit: int) -> Waiting:
    keyed = [(key, e) for key, e in ((_key(e), e) for e in entries) if after is None or key < after]
    keyed.sort(key=lambda pair: pair[0], reverse=True)
    return Waiting(
        threads=[e for _k, e in keyed[:limit]],
        keys=[k for k, _e in keyed[:limit]],
        total=len(entries),
        more=len(keyed) > limit,
    )


async def awaiting_replies(
    runtime: Runtime,
    account_name: str,
    older_than_days: float | None,
    within_days: int,
    max_results: int,
    page_token: str | None,
) -> AwaitingResult:
    stamp = fingerprint(
        "mg_awaiting_replies", account=account_name, older=older_than_days, within=within_days, max=max_results
    )
    after = decode(page_token, stamp)
    now = runtime.clock()
    within = timedelta(days=within_days)

    def one(session: ImapSession, account: Account) -> Waiting:
        older = (
            timedelta(days=older_than_days)
            if older_than_days is not None
            else timedelta(seconds=account.follow_up_after_s)
        )
        session.open(ALL_MAIL)
        key = (account.address.casefold(), account.reminder_label, older, within)
        view = session.view_stamp
        # A later page of the same list: while All Mail's view stamp (UIDNEXT, HIGHESTMODSEQ) stays,
        # nothing came in and nothing changed, so the list computed for the first page still holds.
        entries = runtime.follow_up_lists.get(key, view, now) if after is not None else None
        if entries is None:
            entries = scan(session, account, now, older, within)
            runtime.follow_up_lists.remember(key, view, now, entries)
        return _page(entries, after, max_results)

    answers = await each_mailbox(runtime, account_name, one)
    page = newest_first(answers.done, max_results)
    total = sum(w.total for w in answers.done)

    def result_for(count: int) -> AwaitingResult:
        return AwaitingResult(
            **page.fields("mg_awaiting_replies", stamp, count, total),
            searched=answers.searched,
            failures=answers.failures,
        )

    return budget.fit_page(result_for, len(page.keyed))
