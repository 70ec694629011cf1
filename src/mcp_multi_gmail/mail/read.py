"""The read side: search threads, read a thread, a message, an attachment, the label list.

Every read opens All Mail (found by its \\All flag) with EXAMINE and fetches with BODY.PEEK, so
reading never marks anything as seen. The number of IMAP commands per call is fixed: one FETCH
covers a whole set of messages, never one command per message or thread.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from ..config import Account
from ..errors import MailError, not_found
from ..gmail.bodystream import SLICE_BYTES, read_window
from ..gmail.imap import ALL_MAIL, AUTH_HEADER, Fetched, ImapSession
from ..gmail.parse.bodystructure import Part, attachment_parts, body_part
from ..gmail.parse.filenames import generated_name, safe_filename
from ..gmail.parse.richtext import is_rich, rich_to_text
from ..gmail.parse.transfer import decode_bytes, decode_part
from ..htmltext import html_to_text
from ..runtime import Runtime
from ..text import clean
from . import bodies as bodies_
from . import budget, inputs
from .cursor import Key, decode, encode, fingerprint, key_of
from .preview import previews
from .results import (
    AttachmentResult,
    LabelInfo,
    LabelsResult,
    MessageResult,
    SearchFailure,
    SearchResult,
    ThreadHit,
    ThreadMessage,
    ThreadResult,
)
from .session import each_mailbox, in_session
from .summary import INBOX, carries, is_processed, iso, newest_match, summarize

# Characters of a long HTML body converted to text: the conversion needs the markup from its start,
# so a window beyond this point of a huge HTML body is not offered (body_truncated stays true).
HTML_READ_LIMIT = 2_000_000
MAX_MATCHES = 5000
HIT_ITEMS = ["INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "FLAGS"]
# Up to this many matches the envelopes of all of them cost less than a second round trip.
ONE_FETCH_LIMIT = 200
SUMMARY_ITEMS = ["X-GM-THRID", "INTERNALDATE", "ENVELOPE", "X-GM-LABELS", "FLAGS", "RFC822.SIZE"]


def _now() -> datetime:
    return datetime.now(UTC)


# ------------------------------------------------------------------ search


@dataclass
class _MailboxHits:
    threads: list[ThreadHit] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)  # sort key of each listed thread
    total: int = 0
    unavailable: list[str] = field(default_factory=list)
    more: bool = False  # threads after the page


def _too_broad(account: Account, count: int) -> MailError:
    return MailError(
        "query_too_broad",
        f'The query matches {count} messages in mailbox "{account.name}", more than the {MAX_MATCHES} this '
        "server will group into threads at once. Narrow it, for example with a shorter after: window.",
    )


def _search_mailbox(session: ImapSession, account: Account, query: str, after: Key | None, limit: int) -> _MailboxHits:
    now = _now()
    session.open(ALL_MAIL)
    uids = session.search_raw(query)
    if not uids:
        return _MailboxHits()
    if len(uids) > MAX_MATCHES:
        raise _too_broad(account, len(uids))
    # A small result is read whole in one FETCH; a big one first by thread only, then the page.
    small = len(uids) <= ONE_FETCH_LIMIT
    meta = session.fetch(uids, ["X-GM-THRID", *(HIT_ITEMS if small else ["INTERNALDATE"])])
    threads: dict[int, list[Fetched]] = {}
    for uid in uids:
        item = meta.get(uid)
        if item is None:
            continue  # vanished between SEARCH and FETCH
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
    hits = _MailboxHits(total=len(keyed), more=len(remaining) > limit)
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
    answers = await each_mailbox(
        runtime, account_name, lambda s, account: _search_mailbox(s, account, query, after, max_results)
    )
    return _page_result(answers.done, max_results, stamp, answers.searched, answers.failures)


def _page_result(
    done: list[_MailboxHits], limit: int, stamp: str, searched: list[str], failures: list[SearchFailure]
) -> SearchResult:
    merged = sorted(
        ((k, t) for hits in done for k, t in zip(hits.keys, hits.threads, strict=True)),
        key=lambda pair: pair[0],
        reverse=True,
    )
    page = merged[:limit]
    more = len(merged) > limit or any(hits.more for hits in done)

    def result_for(count: int) -> SearchResult:
        cut = count < len(page)
        return SearchResult(
            threads=[t for _k, t in page[:count]],
            total_threads=sum(hits.total for hits in done),
            next_page_token=encode(stamp, page[count - 1][0]) if (more or cut) and count else None,
            unavailable_threads=[u for hits in done for u in hits.unavailable],
            searched=searched,
            failures=failures,
            page_budget_exhausted=cut,
        )

    # The page ends where the result budget does; the token then continues after its last thread.
    return budget.fit_page(result_for, len(page))


# ------------------------------------------------------------------ thread


def _read_thread(
    session: ImapSession,
    account: Account,
    thread: int,
    bodies: str = "none",
    max_body_length: int = 0,
    after: Key | None = None,
    stamp: str = "",
) -> ThreadResult:
    now = _now()
    session.open(ALL_MAIL)
    uids = session.search(["X-GM-THRID", thread])
    if not uids:
        raise not_found(
            f'No thread {thread} in mailbox "{account.name}". Thread ids come from mg_search_threads or '
            "mg_next_pass and belong to the mailbox they were found in."
        )
    fetched = session.fetch(uids, [*SUMMARY_ITEMS, AUTH_HEADER, "BODYSTRUCTURE"])
    # (delivery time, UID): the thread's order and the cursor of the next page.
    keys = {uid: key_of(item.internaldate, uid, account.name) for uid, item in fetched.items()}
    # Only the messages after the cursor are shown: only theirs are read.
    later = {uid for uid, key in keys.items() if after is None or key > after}
    wanted = [u for u in uids if u in later and _wants_body(fetched[u], account, bodies)]
    read = bodies_.read_texts(session, fetched, wanted) if wanted else None
    # A message whose body was read gets its preview from it; only the others need the beginnings.
    shown = previews(session, [item for uid, item in fetched.items() if uid in later and uid not in wanted])
    if read is not None:
        shown.update(read.previews())
    messages = [
        ThreadMessage(
            **summarize(item, account, now, with_auth=True).model_dump(by_alias=False), preview=shown.get(item.uid)
        )
        for item in fetched.values()
    ]
    keyed = sorted(((keys[m.uid], m) for m in messages), key=lambda p: p[0])  # oldest first
    messages = [m for _k, m in keyed]
    result = ThreadResult(
        account=account.name,
        thread_id=str(thread),
        thread_source="native",
        subject=messages[0].subject if messages else None,
        message_count=len(messages),
        unprocessed_messages=sum(1 for m in messages if not m.processed),
        last_received_at=messages[-1].received_at if messages else None,
        messages=[],
    )
    if bodies != "none":
        result.body_budget_exhausted = False
    remaining = [(k, m) for k, m in keyed if m.uid in later]
    windows = read.windows([m.uid for _k, m in remaining if m.uid in read.wanted], max_body_length) if read else {}
    full = [
        ThreadMessage(**m.model_dump(by_alias=False), **windows[m.uid].fields()) if m.uid in windows else m
        for _k, m in remaining
    ]

    def result_for(count: int) -> ThreadResult:
        cut = count < len(full)
        token = encode(stamp, remaining[count - 1][0]) if cut and count else None
        return result.model_copy(
            update={"messages": full[:count], "next_page_token": token, "page_budget_exhausted": cut}
        )

    # Whole messages while they fit the result budget; the next page starts after the last one.
    page = budget.fit_page(result_for, len(full))
    if len(page.messages) == 1 and budget.size(page) > budget.RESULT_BUDGET:
        page = _cut_last_body(page)
    return page


def _cut_last_body(page: ThreadResult) -> ThreadResult:
    """A page of one message that is too large alone: its body window ends where the budget does."""
    [last] = page.messages
    if not last.body:
        return page  # nothing to cut here; the tools' last resort shortens the rest
    # Measured with `false` in the flag (the longer word); it turns true only where the body was cut.
    others = budget.size(page.model_copy(update={"messages": [], "body_budget_exhausted": False}))
    fitted, cut = _body_within(last, others)
    return page.model_copy(update={"messages": [fitted], "body_budget_exhausted": cut})


Windowed = TypeVar("Windowed", ThreadMessage, MessageResult)


def _body_within(message: Windowed, others: int = 0) -> tuple[Windowed, bool]:
    """`message` with its body window ending where the result budget does (`others` characters of
    the result lie outside it), and whether the window was cut. Measured with `false` in
    body_truncated (the longer word); it turns true only where the body was cut."""
    body = message.body or ""
    fitted = budget.with_text(message.model_copy(update={"body_truncated": False}), "body", body, others=others)
    cut = len(fitted.body or "") < len(body)
    return fitted.model_copy(update={"body_truncated": bool(message.body_truncated) or cut}), cut


def _wants_body(item: Fetched, account: Account, bodies: str) -> bool:
    return bodies == "all" or (bodies == "unprocessed" and not is_processed(item, account))


async def get_thread(
    runtime: Runtime,
    account_name: str,
    thread_id: str,
    bodies: str = "none",
    max_body_length: int = 4000,
    page_token: str | None = None,
) -> ThreadResult:
    thread = inputs.thread_id(thread_id)
    mode = inputs.bodies(bodies)
    stamp = fingerprint(
        "mg_get_thread", account=account_name, thread=thread, bodies=mode, max_body_length=max_body_length
    )
    after = decode(page_token, stamp)
    account = runtime.account(account_name)
    return await in_session(
        runtime, account, lambda s: _read_thread(s, account, thread, mode, max_body_length, after, stamp)
    )


# ------------------------------------------------------------------ message


def find_message(session: ImapSession, account: Account, bare: str) -> tuple[int, int]:
    """(newest UID, number of copies) of a Message-ID in the open folder.

    X-GM-RAW first (one command when it knows the message); Gmail's search index lags behind new
    mail, so a miss is asked once more by the header itself before the answer is "not found".
    """
    uids = session.search_raw(f'rfc822msgid:"{bare}"') or session.search_header_ids([bare])
    if not uids:
        raise not_found(
            f'No message with Message-ID <{bare}> in mailbox "{account.name}". Message-IDs belong to the '
            "mailbox they were found in; check the mailbox name."
        )
    return max(uids), len(uids)


def _disappeared(bare: str, account: Account) -> MailError:
    return not_found(f'The message <{bare}> disappeared from mailbox "{account.name}" while being read.')


def html_part(structure: list[Part]) -> Part | None:
    """The first HTML body part (for `raw_html`), whether or not there is a plain one beside it."""
    return next((p for p in structure if p.mime_type == "text/html" and p.disposition != "attachment"), None)


def _read_message(
    session: ImapSession, account: Account, bare: str, offset: int, limit: int, raw_html: bool
) -> MessageResult:
    now = _now()
    session.open(ALL_MAIL)
    uid, copies = find_message(session, account, bare)
    item = session.fetch([uid], [*SUMMARY_ITEMS, "BODYSTRUCTURE", AUTH_HEADER]).get(uid)
    if item is None:
        raise _disappeared(bare, account)
    summary = summarize(item, account, now, with_auth=True)
    structure = item.parts or []
    chosen = html_part(structure) if raw_html else None
    chosen = chosen or body_part(structure)
    body_format: str | None = None
    window: str | None = None
    charset_used: str | None = None
    start = total = hidden = 0
    more = False
    if chosen is not None:
        html = chosen.mime_type == "text/html"
        text: str | None = None
        whole = True  # False: only the beginning of a long part was read
        if chosen.size is not None and chosen.size <= SLICE_BYTES:
            # Only the chosen text part travels, never the whole message with its attachments.
            raw = session.fetch_part(uid, chosen.part_id)
            if raw is not None:
                text, charset_used = decode_part(raw, chosen.encoding, chosen.charset, chosen.mime_type)
        elif (html and not raw_html) or is_rich(chosen.mime_type):
            # Turning HTML (or enriched text) into text needs the markup from its start: a bounded
            # beginning, in slices.
            beginning = read_window(session, uid, chosen, 0, HTML_READ_LIMIT)
            if beginning is not None:
                text, whole, charset_used = beginning.text, not beginning.more, beginning.charset_used
                if is_rich(chosen.mime_type):
                    text = rich_to_text(text, chosen.mime_type)
        else:
            # A long part is read in slices up to the window's end, never held whole in memory.
            sliced = read_window(session, uid, chosen, offset, limit)
            if sliced is not None:
                window, start, total, more = sliced.text, sliced.start, sliced.total, sliced.more
                body_format = "html" if html else "text"
                charset_used = sliced.charset_used
        if text is not None:
            body_format = "text"
            if html and raw_html:
                body_format = "html"
            elif html:
                converted = html_to_text(text)
                text, hidden, body_format = converted.text, converted.hidden_chars, "html_as_text"
            total = len(text)
            start = min(offset, total)
            window = text[start : start + limit]
            more = start + len(window) < total or not whole
    return _fit_body(
        MessageResult(
            **summary.model_dump(by_alias=False),
            body_format=body_format,
            body=window,
            body_offset=start,
            body_total_length=total,
            body_truncated=window is not None and more,
            hidden_text_chars=hidden,
            attachments=bodies_.attachment_list(structure),
            copies=copies,
            charset_used=charset_used,
        )
    )


def _fit_body(result: MessageResult) -> MessageResult:
    """The body window ends where the result budget does (the window's start stays)."""
    if not result.body or budget.size(result) <= budget.RESULT_BUDGET:
        return result
    # Measured with `false` in the flag (the longer word); it turns true only where the body was cut.
    fitted, cut = _body_within(result.model_copy(update={"body_budget_exhausted": False}))
    return fitted.model_copy(update={"body_budget_exhausted": cut})


async def get_message(
    runtime: Runtime,
    account_name: str,
    message_id: str,
    body_offset: int,
    max_body_length: int,
    raw_html: bool = False,
) -> MessageResult:
    bare = inputs.message_id(message_id)
    account = runtime.account(account_name)
    return await in_session(
        runtime, account, lambda s: _read_message(s, account, bare, body_offset, max_body_length, raw_html)
    )


# ------------------------------------------------------------------ attachment


@dataclass
class _Download:
    data: bytes
    filename: str
    mime_type: str


def _download(session: ImapSession, account: Account, bare: str, part_id: str) -> _Download:
    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    item = session.fetch([uid], ["BODYSTRUCTURE"]).get(uid)
    if item is None or item.parts is None:
        raise not_found(f"The structure of message <{bare}> could not be read.")
    listed = {part.part_id: part for part in attachment_parts(item.parts)}
    part = listed.get(part_id)
    if part is None:
        raise not_found(
            f'That message has no attachment "{part_id}". Attachment ids come from mg_get_message and belong '
            "to the message they were listed for."
        )
    raw = session.fetch_part(uid, part_id)
    if raw is None:
        raise _disappeared(bare, account)
    name = part.filename or generated_name(part.part_id, part.mime_type)
    return _Download(decode_bytes(raw, part.encoding), safe_filename(name, part_id), part.mime_type)


def _write_inside(directory: Path, filename: str, data: bytes) -> Path:
    """Write into download_dir only: the final path is checked, and a planted symlink is not followed."""
    directory.mkdir(parents=True, exist_ok=True)
    root = directory.resolve()
    target = root / filename
    if target.parent != root:
        raise MailError("upstream_error", f"Refusing to write {filename!r} outside the download folder {root}.")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(target, flags, 0o644)
    except OSError as error:
        raise MailError("upstream_error", f"Could not write {target}: {error.strerror}.") from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    return target


async def get_attachment(runtime: Runtime, account_name: str, message_id: str, attachment_id: str) -> AttachmentResult:
    bare = inputs.message_id(message_id)
    part_id = inputs.attachment_id(attachment_id)
    account = runtime.account(account_name)
    download = await in_session(runtime, account, lambda s: _download(s, account, bare, part_id))
    target = _write_inside(runtime.config.download_dir, download.filename, download.data)
    return AttachmentResult(
        account=account.name,
        message_id=bare,
        attachment_id=part_id,
        filename=download.filename,
        mime_type=download.mime_type,
        size_bytes=len(download.data),
        path=str(target),
    )


# ------------------------------------------------------------------ labels


def _label_order(label: str) -> tuple[str, str]:
    return label.casefold(), label


def _label_mark(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:16]


def _after_label(labels: list[LabelInfo], after: Key | None) -> int:
    """Where the next page starts: after the label the token names (its position and a hash of
    its name, so any label name fits a token); a label created in between never shifts the rest."""
    if after is None:
        return 0
    marks = [_label_mark(lb.label) for lb in labels]
    if after.thread_id < len(marks) and marks[after.thread_id] == after.account:
        return after.thread_id + 1
    if after.account in marks:
        return marks.index(after.account) + 1
    return min(after.thread_id, len(labels))  # that label is gone: go on from where it stood


async def list_labels(runtime: Runtime, account_name: str, page_token: str | None = None) -> LabelsResult:
    stamp = fingerprint("mg_list_labels", account=account_name)
    after = decode(page_token, stamp)
    account = runtime.account(account_name)
    folders = await in_session(runtime, account, lambda s: s.all_folders())
    labels = [
        LabelInfo(label=clean(name) or name, system=name.upper() == "INBOX" or special is not None)
        for name, special, selectable in folders
        if selectable
    ]
    labels.sort(key=lambda lb: _label_order(lb.label))
    start = _after_label(labels, after)
    rest = labels[start:]

    def result_for(count: int) -> LabelsResult:
        cut = count < len(rest)
        return LabelsResult(
            account=account.name,
            labels=rest[:count],
            total_labels=len(labels),
            next_page_token=encode(stamp, Key(0, start + count - 1, _label_mark(rest[count - 1].label)))
            if cut and count
            else None,
            page_budget_exhausted=cut,
        )

    return budget.fit_page(result_for, len(rest))


__all__ = [
    "INBOX",
    "carries",
    "find_message",
    "get_attachment",
    "get_message",
    "get_thread",
    "iso",
    "list_labels",
    "search_threads",
]
