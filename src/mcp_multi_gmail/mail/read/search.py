"""mg_search_threads: Gmail's own search, grouped into threads, newest first.

All Mail (found by its \\All flag) is opened with EXAMINE and read with BODY.PEEK, so a search
never marks anything as seen. One FETCH covers every match (two for a big result: the threads
first, then the page's envelopes), never one command per message or thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from ...config import Account
from ...domain import Address
from ...errors import MailError
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession
from ...gmail.parse.statequery import StateCondition, contradicted, state_conditions
from ...runtime import Runtime
from ..core import budget, inputs
from ..core.cursor import Key, decode, fingerprint, key_of, newest_first
from ..core.session import SearchFailure, each_mailbox
from ..core.summary import INBOX, MESSAGE_ID_WORDS, MessageState, carries, is_processed, iso, message_state

MAX_MATCHES = 5000
HIT_ITEMS = ["INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "FLAGS"]
STATE_ITEMS = ["X-GM-LABELS", "FLAGS"]
# Up to this many matches the envelopes of all of them cost less than a second round trip.
ONE_FETCH_LIMIT = 200


class NewestMatch(BaseModel):
    message_id: str | None = Field(description=MESSAGE_ID_WORDS)
    from_: Address | None = Field(alias="from")
    received_at: str | None = Field(description="INTERNALDATE, ISO-8601 UTC")
    state: MessageState
    in_inbox: bool

    model_config = {"populate_by_name": True}


class ThreadHit(BaseModel):
    account: str
    thread_id: str = Field(description="Gmail's X-GM-THRID as a string (64-bit)")
    subject: str | None = Field(description="Subject of the newest matching message")
    matched_messages: int = Field(description="Matching messages in this thread, not the thread's size")
    unprocessed_matches: int = Field(description="Matching messages without the processed label (read by FETCH)")
    newest_match: NewestMatch


class SearchResult(BaseModel):
    threads: list[ThreadHit]
    total_threads: int
    next_page_token: str | None
    unavailable_threads: list[str] = Field(description="Threads whose newest match vanished while being read")
    index_stale_hits: int = Field(
        description="Matches Gmail's search index returned that the live read, star, inbox or label state "
        "contradicts, left out (the whole result, every mailbox); checked only for a query of terms joined by "
        "spaces or AND, never with OR, braces or parentheses"
    )
    searched: list[str] = Field(description="Mailboxes that answered")
    failures: list[SearchFailure] = Field(description='With account "all": mailboxes that did not answer')
    page_budget_exhausted: bool = budget.page_cut_field(budget.FEWER_THREADS)
    cut: list[budget.Cut] = budget.cut_field()


def newest_match(item: Fetched, account: Account, now: datetime) -> NewestMatch:
    envelope = item.envelope
    return NewestMatch(
        message_id=envelope.message_id if envelope else None,
        from_=envelope.from_ if envelope else None,
        received_at=iso(item.internaldate),
        state=message_state(item, account, now),
        in_inbox=carries(item.labels, INBOX),
    )


@dataclass
class _MailboxHits:
    threads: list[ThreadHit] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)  # sort key of each listed thread
    total: int = 0
    unavailable: list[str] = field(default_factory=list)
    more: bool = False  # threads after the page
    stale: int = 0  # matches the live state contradicts, left out


def _too_broad(account: Account, count: int) -> MailError:
    return MailError(
        "query_too_broad",
        f'The query matches {count} messages in mailbox "{account.name}", more than the {MAX_MATCHES} this '
        "server will group into threads at once. Narrow it, for example with a shorter after: window.",
    )


def _search_mailbox(
    session: ImapSession,
    account: Account,
    query: str,
    conditions: tuple[StateCondition, ...],
    after: Key | None,
    limit: int,
) -> _MailboxHits:
    now = datetime.now(UTC)
    session.open(ALL_MAIL)
    uids = session.search_raw(query)
    if not uids:
        return _MailboxHits()
    if len(uids) > MAX_MATCHES:
        raise _too_broad(account, len(uids))
    # A small result is read whole in one FETCH; a big one first by thread only (with the live state
    # when the query asks for one), then the page.
    small = len(uids) <= ONE_FETCH_LIMIT
    first = HIT_ITEMS if small else ["INTERNALDATE", *(STATE_ITEMS if conditions else [])]
    meta = session.fetch(uids, ["X-GM-THRID", *first])
    threads: dict[int, list[Fetched]] = {}
    stale = 0
    for uid in uids:
        item = meta.get(uid)
        if item is None:
            continue  # vanished between SEARCH and FETCH
        if contradicted(conditions, item.flags, item.labels):
            stale += 1  # the index answered from a stale copy of the message's state
            continue
        if item.thread_id is None:
            raise MailError(
                "provider_unsupported",
                f'Mailbox "{account.name}" does not support the Gmail X-GM-THRID extension. '
                "Threads cannot be built without it.",
            )
        threads.setdefault(item.thread_id, []).append(item)

    def newest(items: list[Fetched]) -> Fetched:
        return max(items, key=lambda m: (m.internaldate or datetime.min.replace(tzinfo=UTC), m.uid))

    keyed = sorted(
        (
            (key_of(newest(items).internaldate, thread, account.name), thread, items)
            for thread, items in threads.items()
        ),
        key=lambda entry: entry[0],
        reverse=True,
    )
    remaining = [entry for entry in keyed if after is None or entry[0] < after]
    page = remaining[:limit]
    page_uids = [m.uid for _key, _thread, items in page for m in items]
    details = meta if small else session.fetch(page_uids, HIT_ITEMS)
    hits = _MailboxHits(total=len(keyed), more=len(remaining) > limit, stale=stale)
    for key, thread, items in page:
        top = details.get(newest(items).uid)
        if top is None:
            hits.unavailable.append(str(thread))
            continue
        # Labels come from FETCH, never from the search index, which lags behind a labelling.
        unprocessed = sum(
            1
            for m in items
            if (got := details.get(m.uid)) is None or got.labels is None or not is_processed(got, account)
        )
        hits.keys.append(key)
        hits.threads.append(
            ThreadHit(
                account=account.name,
                thread_id=str(thread),
                subject=top.envelope.subject if top.envelope else None,
                matched_messages=len(items),
                unprocessed_matches=unprocessed,
                newest_match=newest_match(top, account, now),
            )
        )
    return hits


async def search_threads(
    runtime: Runtime, account_name: str, query: str, max_results: int, page_token: str | None
) -> SearchResult:
    query = inputs.search_query(query)
    stamp = fingerprint("mg_search_threads", account=account_name, query=query, max_results=max_results)
    after = decode(page_token, stamp)
    conditions = state_conditions(query)
    answers = await each_mailbox(
        runtime, account_name, lambda s, account: _search_mailbox(s, account, query, conditions, after, max_results)
    )
    return _page_result(answers.done, max_results, stamp, answers.searched, answers.failures)


def _page_result(
    done: list[_MailboxHits], limit: int, stamp: str, searched: list[str], failures: list[SearchFailure]
) -> SearchResult:
    page = newest_first(done, limit)

    total = sum(hits.total for hits in done)

    def result_for(count: int) -> SearchResult:
        return SearchResult(
            **page.fields("mg_search_threads", stamp, count, total),
            unavailable_threads=[u for hits in done for u in hits.unavailable],
            index_stale_hits=sum(hits.stale for hits in done),
            searched=searched,
            failures=failures,
        )

    # The page ends where the result budget does; the token then continues after its last thread.
    return budget.fit_page(result_for, len(page.keyed))
