"""What each row does on each server: the tool calls of one measured operation, and their checks.

An operation returns every reply it needed. It follows the server's own continuation until it
holds what the peer's one answer holds: `next_page_token` for the pages of a thread or a pass,
`body_offset` for a body cut short. An answer that does not hold it raises `CallFailed`, so the
cell shows ERROR instead of a time for something else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import fixtures as fx
from harness import CallFailed, Driver, Operation, Reply

MAX_PAGES = 20  # far more than any row needs: a token that never ends is a bug, not a long thread


def unexpected(reply: Reply, why: str = "unexpected result") -> CallFailed:
    return CallFailed(reply.tool, f"{why}: " + reply.text[:400])


def items(replies: list[Reply], key: str) -> list[dict[str, Any]]:
    """The `key` lists of every reply, one after the other."""
    return [item for reply in replies for item in (reply.data() or {}).get(key, [])]


async def all_pages(driver: Driver, tool: str, args: dict[str, Any]) -> list[Reply]:
    """`tool` called, then called again with each next_page_token (same arguments) to the last page."""
    replies = [await driver.call(tool, args)]
    while token := (replies[-1].data() or {}).get("next_page_token"):
        if len(replies) >= MAX_PAGES:
            raise unexpected(replies[-1], f"still a next_page_token after {MAX_PAGES} pages")
        replies.append(await driver.call(tool, {**args, "page_token": token}))
    return replies


async def read_on(driver: Driver, account: str, message: dict[str, Any]) -> list[Reply]:
    """The rest of a body cut short (body_truncated), with mg_get_message and body_offset."""
    replies: list[Reply] = []
    window = message
    while window.get("body_truncated"):
        offset = int(window.get("body_offset") or 0) + len(window.get("body") or "")
        args = {"account": account, "message_id": message["message_id"], "body_offset": offset}
        reply = await driver.call("mg_get_message", {**args, "max_body_length": 30_000})
        replies.append(reply)
        window = reply.data() or {}
        if not window.get("body"):
            raise unexpected(reply, "body_truncated, but no more body")
    return replies


# ------------------------------------------------------------------ ours


def ours_search(driver: Driver, account: str, query: str, *, expect: int | None = 20) -> Operation:
    """mg_search_threads for 20 results (the peer's page); `expect` None: any answer, errors too."""

    async def op() -> list[Reply]:
        args = {"account": account, "query": query, "max_results": 20}
        reply = await driver.call("mg_search_threads", args, allow_error=expect is None)
        if expect is not None and len((reply.data() or {}).get("threads", [])) != expect:
            raise unexpected(reply)
        return [reply]

    return op


def ours_search_all(driver: Driver, query: str, mailboxes: int) -> Operation:
    async def op() -> list[Reply]:
        reply = await driver.call("mg_search_threads", {"account": "all", "query": query, "max_results": 20})
        data = reply.data() or {}
        if len(data.get("searched", [])) != mailboxes or len(data.get("threads", [])) != 20:
            raise unexpected(reply)
        return [reply]

    return op


def ours_bodies(driver: Driver, box: fx.Mailbox, ids: list[str]) -> Operation:
    """One mg_get_message per Message-ID, one after the other."""

    async def op() -> list[Reply]:
        out = []
        for mid in ids:
            reply = await driver.call("mg_get_message", {"account": box.name, "message_id": mid})
            if not (reply.data() or {}).get("body"):
                raise unexpected(reply)
            out.append(reply)
        return out

    return op


def ours_parallel_bodies(driver: Driver, box: fx.Mailbox) -> Operation:
    """The thread's mg_get_message calls sent at once."""

    async def op() -> list[Reply]:
        calls = [driver.call("mg_get_message", {"account": box.name, "message_id": mid}) for mid in box.thread_ids]
        return list(await asyncio.gather(*calls))

    return op


def ours_thread(driver: Driver, box: fx.Mailbox) -> Operation:
    """mg_get_thread without bodies: one page (headers, labels, auth results)."""

    async def op() -> list[Reply]:
        reply = await driver.call("mg_get_thread", {"account": box.name, "thread_id": box.gm_thread_id})
        if len((reply.data() or {}).get("messages", [])) != len(box.thread_ids):
            raise unexpected(reply)
        return [reply]

    return op


def ours_thread_bodies(driver: Driver, box: fx.Mailbox) -> Operation:
    """mg_get_thread(bodies="all") page after page, and any body cut short read on: every body whole."""

    async def op() -> list[Reply]:
        args = {"account": box.name, "thread_id": box.gm_thread_id, "bodies": "all"}
        replies = await all_pages(driver, "mg_get_thread", args)
        messages = items(replies, "messages")
        if len(messages) != len(box.thread_ids) or not all(m.get("body") for m in messages):
            raise unexpected(replies[-1])
        for message in messages:
            replies += await read_on(driver, box.name, message)
        return replies

    return op


def ours_pass(driver: Driver, box: fx.Mailbox, since: str) -> Operation:
    """mg_next_pass page after page until every work thread has come."""

    async def op() -> list[Reply]:
        replies = await all_pages(driver, "mg_next_pass", {"account": box.name, "since": since, "max_threads": 50})
        threads = {t.get("thread_id") for t in items(replies, "threads")}
        if len(threads) != box.work_threads:
            raise unexpected(replies[-1], f"{len(threads)} of {box.work_threads} work threads")
        return replies

    return op


def ours_label(driver: Driver, box: fx.Mailbox, ids: list[str]) -> Operation:
    async def op() -> list[Reply]:
        args = {"account": box.name, "message_ids": ids, "label": fx.PROCESSED}
        reply = await driver.call("mg_label_message", args)
        outcomes = [o.get("outcome") for o in (reply.data() or {}).get("messages", [])]
        if len(outcomes) != len(ids) or any(o != "changed" for o in outcomes):
            raise unexpected(reply)
        return [reply]

    return op


# ------------------------------------------------------------------ sweeps (rows s1-s3)

SWEEP_QUERY = f"from:{fx.SWEEP_SENDER}"
SWEEP_CHANGE = {"add_label": fx.PROCESSED}
LABEL_BATCH = 500  # the most Message-IDs mg_label_message takes in one call


def _swept(reply: Reply, box: fx.Mailbox, key: str) -> dict[str, Any]:
    data = reply.data() or {}
    if data.get(key) != len(box.sweep_ids):
        raise unexpected(reply, f"{key} is not {len(box.sweep_ids)}")
    return data


def ours_sweep_preview(driver: Driver, box: fx.Mailbox) -> Operation:
    async def op() -> list[Reply]:
        args = {"account": box.name, "query": SWEEP_QUERY, "change": SWEEP_CHANGE}
        reply = await driver.call("mg_sweep", args)
        _swept(reply, box, "would_change")
        return [reply]

    return op


async def sweep(driver: Driver, box: fx.Mailbox) -> list[Reply]:
    """A preview and its apply: every message changed, and the undo token of the apply."""
    args = {"account": box.name, "query": SWEEP_QUERY, "change": SWEEP_CHANGE}
    preview = await driver.call("mg_sweep", args)
    token = _swept(preview, box, "would_change")["confirm_token"]
    applied = await driver.call("mg_sweep", {**args, "confirm_token": token})
    _swept(applied, box, "changed")
    return [preview, applied]


def ours_sweep(driver: Driver, box: fx.Mailbox) -> Operation:
    async def op() -> list[Reply]:
        return await sweep(driver, box)

    return op


def ours_paged_label(driver: Driver, box: fx.Mailbox) -> Operation:
    """The same change without a sweep: mg_search_threads page by page (100 threads, every page),
    then mg_label_message on the ids found, LABEL_BATCH a call."""

    async def op() -> list[Reply]:
        args = {"account": box.name, "query": SWEEP_QUERY, "max_results": 100}
        replies = [await driver.call("mg_search_threads", args)]
        while token := (replies[-1].data() or {}).get("next_page_token"):
            if len(replies) > 200:
                raise unexpected(replies[-1], "still a next_page_token after 200 pages")
            replies.append(await driver.call("mg_search_threads", {**args, "page_token": token}))
        ids = [t["newest_match"]["message_id"] for t in items(replies, "threads")]
        if len(ids) != len(box.sweep_ids):
            raise unexpected(replies[-1], f"{len(ids)} threads found, not {len(box.sweep_ids)}")
        for start in range(0, len(ids), LABEL_BATCH):
            label = {"account": box.name, "message_ids": ids[start : start + LABEL_BATCH], "label": fx.PROCESSED}
            reply = await driver.call("mg_label_message", label)
            if (reply.data() or {}).get("failed"):
                raise unexpected(reply, "some messages were not labelled")
            replies.append(reply)
        return replies

    return op


class UndoTurn:
    """Row s3: a sweep applied untimed before each run (`prepare`), its undo timed (`op`)."""

    def __init__(self, driver: Driver, box: fx.Mailbox, unlabel: Callable[[], None]) -> None:
        self.driver, self.box, self.unlabel = driver, box, unlabel
        self.token: str | None = None

    async def prepare(self) -> None:
        self.unlabel()
        applied = (await sweep(self.driver, self.box))[-1]
        self.token = (applied.data() or {}).get("undo_token")

    async def op(self) -> list[Reply]:
        reply = await self.driver.call("mg_undo", {"account": self.box.name, "undo_token": self.token})
        data = reply.data() or {}
        if data.get("restored") != len(self.box.sweep_ids) or data.get("skipped") or data.get("failed"):
            raise unexpected(reply, "not every message set back")
        return [reply]


# ------------------------------------------------------------------ the peer


def peer_list(driver: Driver, account: str, word: str) -> Operation:
    async def op() -> list[Reply]:
        args = {"account_name": account, "subject": word, "page_size": 20}
        return [await driver.call("list_emails_metadata", args)]

    return op


def peer_three(driver: Driver, boxes: list[fx.Mailbox]) -> Operation:
    """The same search on each mailbox, one call after the other (the peer has no "all")."""

    async def op() -> list[Reply]:
        replies = []
        for box in boxes:
            args = {"account_name": box.name, "subject": fx.INVOICE, "page_size": 20}
            replies.append(await driver.call("list_emails_metadata", args))
        return replies

    return op


def peer_bodies(driver: Driver, box: fx.Mailbox, ids: list[str]) -> Operation:
    uids = [str(box.uid_of[i]) for i in ids]

    async def op() -> list[Reply]:
        reply = await driver.call("get_emails_content", {"account_name": box.name, "email_ids": uids})
        if len((reply.data() or {}).get("emails", [])) != len(uids):
            raise unexpected(reply)
        return [reply]

    return op


def peer_parallel_bodies(driver: Driver, box: fx.Mailbox) -> Operation:
    uids = [str(box.uid_of[mid]) for mid in box.thread_ids]

    async def op() -> list[Reply]:
        calls = [driver.call("get_emails_content", {"account_name": box.name, "email_ids": [u]}) for u in uids]
        return list(await asyncio.gather(*calls))

    return op


# ------------------------------------------------------------------ checks (ours against the peer)


def _peer_ids(replies: list[Reply]) -> list[str]:
    return [str(e.get("message_id") or "").strip("<>") for e in items(replies[:1], "emails")]


def same_ids(ours: list[Reply], peer: list[Reply]) -> dict[str, Any]:
    got = [str((t.get("newest_match") or {}).get("message_id")) for t in items(ours[:1], "threads")]
    theirs = _peer_ids(peer) if peer else None
    return {"ours_results": len(got), "same_message_ids_as_peer": None if theirs is None else got == theirs}


def same_bodies(ours: list[Reply], peer: list[Reply]) -> dict[str, Any]:
    messages = items([r for r in ours if r.tool == "mg_get_thread"], "messages")
    theirs = _peer_ids(peer) if peer else None
    return {
        "ours_calls": len(ours),
        "ours_pages": sum(1 for r in ours if r.tool == "mg_get_thread"),
        "ours_bodies": sum(1 for m in messages if m.get("body")),
        "ours_body_chars": sum(len(m.get("body") or "") for m in messages),
        "peer_bodies": sum(1 for e in items(peer, "emails") if e.get("body")) if peer else None,
        "peer_body_chars": sum(len(e.get("body") or "") for e in items(peer, "emails")) if peer else None,
        "same_message_ids_as_peer": None
        if theirs is None
        else sorted(m["message_id"] for m in messages) == sorted(theirs),
    }


def pages_of(ours: list[Reply], _peer: list[Reply]) -> dict[str, Any]:
    return {"ours_calls": len(ours), "threads": len(items(ours, "threads"))}
