"""mg_save_draft and mg_list_drafts: drafts go to the \\Drafts folder, nothing goes out."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ... import policy
from ...config import Account
from ...domain import Address
from ...errors import MailError
from ...gmail.imap import ALL_MAIL, DRAFTS, ImapSession
from ...request import Prepared, Request
from ...runtime import Runtime
from ..core import budget
from ..core.cursor import Key, decode, encode, fingerprint, key_of
from ..core.session import in_session
from ..core.summary import MessageSummary, carries, summarize
from ..reminding import ReplyReminder, check_reply_by, remind_message
from ..sending.prepare import (
    Original,
    detached_warning,
    no_quote_warning,
    prepare,
    read_original,
    subject_of,
)

if TYPE_CHECKING:  # compose loads at the first draft, not at start-up
    from ...gmail.compose import Composed


class DraftResult(BaseModel):
    account: str
    folder: str
    message_id: str
    uid: int | None
    from_: Address = Field(alias="from")
    to: list[str]
    thread_id: str | None
    joined_thread: bool | None = Field(description="Reply drafts: whether Gmail put it into the answered thread")
    attachments: list[str] = Field(description="File names actually attached")
    signature: str | None
    quoted: bool
    warning: str | None
    reply_reminder: ReplyReminder | None = Field(default=None, description="With expect_reply_by")
    cut: list[budget.Cut] = budget.cut_field()

    model_config = {"populate_by_name": True}


class DraftSummary(MessageSummary):
    in_reply_to: str | None
    joined_thread: bool | None
    warning: str | None


class DraftsResult(BaseModel):
    account: str
    folder: str
    total_drafts: int
    drafts: list[DraftSummary]
    next_page_token: str | None = budget.next_page_field("drafts")
    page_budget_exhausted: bool = budget.page_cut_field(budget.fewer_than_there_are("drafts"))
    cut: list[budget.Cut] = budget.cut_field()


def new_message_id(address: str) -> str:
    domain = address.rpartition("@")[2] or "localhost"
    return f"{uuid.uuid4().hex}.mg@{domain}"


@dataclass
class _Progress:
    """How far a draft save got: after a broken connection it tells whether the draft was handed over."""

    original: Original = field(default_factory=lambda: Original(None, None))
    composed: Composed | None = None
    handed_over: bool = False  # the APPEND was sent
    stored: bool = False  # Gmail answered the APPEND with OK
    uid: int | None = None
    stored_thread: int | None = None


def _save(session: ImapSession, runtime: Runtime, account: Account, prepared: Prepared, progress: _Progress) -> None:
    from ...gmail.compose import Draft, compose

    request = prepared.request
    if prepared.in_reply_to:
        progress.original = read_original(session, account, prepared.in_reply_to, with_quote=request.quote_original)
    composed = compose(
        Draft(
            prepared,
            subject_of(prepared, progress.original),
            progress.original.quote if request.quote_original else None,
        ),
        message_id=new_message_id(prepared.sender[0]),
        date=datetime.now(UTC),
        quote_locale=runtime.config.quote_locale,
    )
    policy.check_message_size(len(composed.data), len(prepared.files))
    progress.composed = composed
    progress.handed_over = True
    # \Seen only: Gmail's own drafts carry no \Draft flag, and a flagged one looks foreign in the web UI.
    progress.uid = session.append(DRAFTS, composed.data, ["\\Seen"], None)
    progress.stored = True
    if progress.uid is not None:
        session.open(DRAFTS)
        stored = session.fetch([progress.uid], ["X-GM-THRID"]).get(progress.uid)
        progress.stored_thread = stored.thread_id if stored else None


def _find_stored(session: ImapSession, message_id: str) -> tuple[int, int | None] | None:
    """(uid, thread id) of the draft with this Message-ID in Drafts, or None. A header search, not
    X-GM-RAW: Gmail's search index lags behind a message stored a moment ago. (The id is our own
    hex@domain, so it needs no literal.)"""
    session.open(DRAFTS)
    uids = session.search(["HEADER", "Message-ID", message_id])
    if not uids:
        return None
    uid = max(uids)
    stored = session.fetch([uid], ["X-GM-THRID"]).get(uid)
    return uid, stored.thread_id if stored else None


def _result(account: Account, prepared: Prepared, progress: _Progress, folder: str) -> DraftResult:
    request = prepared.request
    composed = progress.composed
    assert composed is not None
    original, uid, stored_thread = progress.original, progress.uid, progress.stored_thread
    joined = None if original.thread_id is None or stored_thread is None else stored_thread == original.thread_id
    warning = None
    if joined is False and prepared.in_reply_to:
        warning = detached_warning(
            "The draft was saved but", subject_of(prepared, original), original.subject, prepared.in_reply_to
        )
    if warning is None:
        warning = no_quote_warning(prepared, request.quote_original, composed.quoted)
    if warning is None and (uid is None or stored_thread is None):
        warning = "The draft was stored but could not be read back to check it."
    return DraftResult(
        account=account.name,
        folder=folder,
        message_id=composed.message_id,
        uid=uid,
        from_=Address(name=prepared.sender[1], address=prepared.sender[0]),
        to=request.to,
        thread_id=None if stored_thread is None else str(stored_thread),
        joined_thread=joined,
        attachments=[name for name, _data, _mime in prepared.files],
        signature=prepared.signature.name if prepared.signature else None,
        quoted=composed.quoted,
        warning=warning,
    )


async def save_draft(
    runtime: Runtime, account_name: str, request: Request, expect_reply_by: str | None = None
) -> DraftResult:
    account = runtime.account(account_name)
    prepared = prepare(runtime.config, account, request, sending=False)
    wanted = check_reply_by(runtime, account, expect_reply_by) if expect_reply_by is not None else None
    result = await _save_draft(runtime, account, prepared)
    if wanted is not None:
        result.reply_reminder = await remind_message(runtime, account, result.message_id, wanted, "mg_save_draft")
    return result


async def _save_draft(runtime: Runtime, account: Account, prepared: Prepared) -> DraftResult:
    progress = _Progress()
    folders: list[str] = []

    def work(session: ImapSession) -> None:
        folders.append(session.folder(DRAFTS))
        _save(session, runtime, account, prepared, progress)

    try:
        await in_session(runtime, account, work)
    except MailError as error:
        if not progress.handed_over or progress.composed is None:
            raise  # nothing reached Drafts
        if not progress.stored:
            if not error.retryable:
                raise  # Gmail answered the APPEND with a refusal: nothing was stored
            # The line broke with the APPEND in flight: only Drafts itself can tell whether it arrived.
            message_id = progress.composed.message_id
            try:
                found = await in_session(runtime, account, lambda s: _find_stored(s, message_id))
            except MailError:
                raise MailError(
                    "upstream_error",
                    f'Mailbox "{account.name}": the connection to Gmail broke while the draft <{message_id}> was '
                    "being stored, so it may or may not have been saved. Check the drafts with mg_list_drafts "
                    "before saving it again.",
                    retryable=True,
                ) from None
            if found is None:
                raise MailError(
                    "upstream_error",
                    f'Mailbox "{account.name}": the connection to Gmail broke while the draft was being stored, '
                    "and it is not in Drafts: it was not saved. Saving it again is safe.",
                    retryable=True,
                ) from None
            progress.uid, progress.stored_thread = found
        # Stored: the draft exists, whatever broke afterwards; reporting an error would invite a duplicate.
    return _result(account, prepared, progress, folders[0])


def _list(
    session: ImapSession, account: Account, limit: int, after: Key | None = None, stamp: str = ""
) -> DraftsResult:
    now = datetime.now(UTC)
    folder = session.open(DRAFTS)
    fetched = session.fetch_all(["X-GM-THRID", "INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "FLAGS", "RFC822.SIZE"])
    for item in fetched.values():
        # Gmail leaves a folder's own label out of X-GM-LABELS inside that folder: put \Draft back.
        if not carries(item.labels, "\\Draft"):
            item.labels = (*(item.labels or ()), "\\Draft")
    ordered = sorted(fetched.values(), key=lambda m: (m.internaldate or now, m.uid), reverse=True)
    # Newest first; the cursor is the (time, UID) of the last draft shown, as search pages have it.
    keys = {m.uid: key_of(m.internaldate or now, m.uid, account.name) for m in ordered}
    rest = [m for m in ordered if after is None or keys[m.uid] < after]
    page = rest[:limit]
    parents = sorted({m.envelope.in_reply_to for m in page if m.envelope and m.envelope.in_reply_to})
    parent_threads: dict[str, int | None] = {}
    parent_subjects: dict[str, str | None] = {}
    if parents:
        session.open(ALL_MAIL)
        found = session.find_message_ids(parents)
        for parent in parents:
            copies = found.get(parent.casefold())
            newest = max(copies, key=lambda c: c.uid) if copies else None
            parent_threads[parent] = newest.thread_id if newest else None
            parent_subjects[parent] = newest.envelope.subject if newest and newest.envelope else None
    drafts: list[DraftSummary] = []
    for draft in page:
        answered = draft.envelope.in_reply_to if draft.envelope else None
        parent_thread = parent_threads.get(answered) if answered else None
        joined = None if parent_thread is None or draft.thread_id is None else draft.thread_id == parent_thread
        warning = None
        if joined is False and answered:
            subject = draft.envelope.subject if draft.envelope else None
            warning = detached_warning("This draft", subject, parent_subjects.get(answered), answered)
        elif answered and parent_thread is None:
            warning = (
                f"The message this draft answers, {answered}, is no longer in this mailbox, so whether the "
                "draft is still in its thread could not be checked."
            )
        summary = summarize(draft, account, now)
        drafts.append(
            DraftSummary(
                **summary.model_dump(by_alias=False), in_reply_to=answered, joined_thread=joined, warning=warning
            )
        )
    more = len(rest) > len(page)

    def result_for(count: int) -> DraftsResult:
        cut = count < len(drafts)
        last = keys[page[count - 1].uid] if count else None
        return DraftsResult(
            account=account.name,
            folder=folder,
            total_drafts=len(ordered),
            drafts=drafts[:count],
            next_page_token=encode(stamp, last) if (cut or more) and last else None,
            page_budget_exhausted=cut,
            cut=budget.page_cut("mg_list_drafts", "drafts", count, len(ordered)) if cut else [],
        )

    return budget.fit_page(result_for, len(drafts))


async def list_drafts(
    runtime: Runtime, account_name: str, max_results: int, page_token: str | None = None
) -> DraftsResult:
    stamp = fingerprint("mg_list_drafts", account=account_name, max_results=max_results)
    after = decode(page_token, stamp)  # a foreign token is refused before any connection
    account = runtime.account(account_name)
    return await in_session(runtime, account, lambda s: _list(s, account, max_results, after, stamp))
