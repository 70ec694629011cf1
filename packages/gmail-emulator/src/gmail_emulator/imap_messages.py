"""IMAP handlers for message commands: FETCH, STORE, SEARCH, COPY, MOVE, APPEND, EXPUNGE, IDLE."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from . import gmail_ops
from .imap_codec import decode_mutf7, flags_wire, format_internaldate, labels_wire, literal, parse_internaldate
from .imap_parser import (
    Command,
    FetchItem,
    ParseError,
    Token,
    parse_fetch_items,
    parse_sequence_set,
)
from .imap_server import CommandFailed, Handler, ImapSession
from .imapsearch import SearchContext, SearchParseError, parse_search
from .mime import ParsedMessage
from .rawsearch import SearchView
from .store import FLAG_DELETED, FLAG_SEEN, STARRED, Account, Folder, Message

__all__ = [
    "UID_COMMANDS",
    "cmd_append",
    "cmd_expunge",
    "cmd_uid_expunge",
    "expunge_deleted",
    "idle",
    "render_fetch",
]

_FRONT = ("X-GM-THRID", "X-GM-MSGID", "X-GM-LABELS", "UID")
_STORE_ITEM = re.compile(r"^([+-]?)(FLAGS|X-GM-LABELS)(\.SILENT)?$", re.I)
_TRYCREATE = "NO [TRYCREATE] Folder doesn't exist. (Failure)"
# How Gmail ends a long session during IDLE (knob `idle_bye_after_s`).
SESSION_EXPIRED = "BYE Session expired, please login again."


def _selected(session: ImapSession) -> tuple[Account, Folder]:
    if session.account is None or session.folder is None:
        raise CommandFailed("BAD", "Command received in Invalid state.")
    return session.account, session.folder


def _text(token: Token) -> str:
    if isinstance(token, bytes):
        return token.decode("utf-8", errors="replace")
    if isinstance(token, str):
        return token
    raise ParseError()


def _number(token: Token) -> int:
    if not isinstance(token, str) or not (token.isascii() and token.isdigit()):
        raise ParseError()
    return int(token)


def _uid_set(uids: Iterable[int]) -> str:
    """A compact sequence set for ascending-or-not UIDs, keeping their order (COPYUID pairs)."""
    out: list[str] = []
    run: list[int] = []
    for uid in uids:
        if run and uid == run[-1] + 1:
            run.append(uid)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}:{run[-1]}")
        run = [uid]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}:{run[-1]}")
    return ",".join(out)


# --------------------------------------------------------------------------- FETCH


# FETCH items whose value depends on the message only (plus the session for label names).
_ITEM_VALUES: dict[str, Callable[[ImapSession, int, Message], bytes]] = {
    "UID": lambda _s, uid, _m: b"%d" % uid,
    "FLAGS": lambda _s, _u, msg: flags_wire(msg.flags),
    "INTERNALDATE": lambda _s, _u, msg: format_internaldate(msg.internaldate),
    "RFC822.SIZE": lambda _s, _u, msg: b"%d" % msg.size,
    "ENVELOPE": lambda _s, _u, msg: msg.parsed.envelope(),
    "BODYSTRUCTURE": lambda s, _u, msg: msg.parsed.bodystructure(True, s.store.knobs.param_8bit),
    "BODY": lambda s, _u, msg: msg.parsed.bodystructure(False, s.store.knobs.param_8bit),
    "RFC822": lambda _s, _u, msg: literal(msg.raw),
    "RFC822.HEADER": lambda _s, _u, msg: literal(msg.parsed.section("HEADER") or b""),
    "RFC822.TEXT": lambda _s, _u, msg: literal(msg.parsed.section("TEXT") or b""),
    "X-GM-THRID": lambda _s, _u, msg: b"%d" % msg.thrid,
    "X-GM-MSGID": lambda _s, _u, msg: b"%d" % msg.msgid,
    "X-GM-LABELS": lambda session, _u, msg: labels_wire(
        gmail_ops.visible_labels(msg.labels, session.folder), utf8=session.utf8
    ),
    "MODSEQ": lambda _s, _u, msg: b"(%d)" % msg.modseq,
}


def _item_value(session: ImapSession, uid: int, msg: Message, item: FetchItem) -> bytes:
    simple = _ITEM_VALUES.get(item.name)
    if simple is not None:
        return simple(session, uid, msg)
    data = msg.parsed.section(item.section or "")
    if data is None:
        return b"NIL"
    if item.partial is not None:
        origin, length = item.partial
        data = data[origin:] if length is None else data[origin : origin + length]
    return literal(data)


def _sets_seen(item: FetchItem) -> bool:
    return item.name in ("RFC822", "RFC822.TEXT") or (item.name == "BODY[]" and not item.peek)


def render_fetch(session: ImapSession, seq: int, uid: int, msg: Message, items: list[FetchItem]) -> bytes:
    """One FETCH response in Gmail's attribute order (X-GM-THRID X-GM-MSGID X-GM-LABELS UID ...)."""
    flags_changed = False
    if (
        session.account is not None
        and not session.readonly
        and FLAG_SEEN not in msg.flags
        and any(_sets_seen(it) for it in items)
    ):
        session.account.set_flags(msg, msg.flags | {FLAG_SEEN})
        flags_changed = True
    ordered: list[FetchItem] = [FetchItem(n) for n in _FRONT if any(it.name == n for it in items)]
    seen_keys = {it.response_key for it in ordered}
    for it in items:
        if it.response_key not in seen_keys:
            ordered.append(it)
            seen_keys.add(it.response_key)
    if flags_changed and b"FLAGS" not in seen_keys:
        ordered.append(FetchItem("FLAGS"))
    if session.condstore and b"MODSEQ" not in seen_keys:
        ordered.append(FetchItem("MODSEQ"))
    parts = [it.response_key + b" " + _item_value(session, uid, msg, it) for it in ordered]
    return b"%d FETCH (" % seq + b" ".join(parts) + b")"


async def _fetch(session: ImapSession, cmd: Command, uid: bool) -> str:
    _selected(session)
    args = cmd.args
    if len(args) not in (2, 3):
        raise ParseError()
    seqset = parse_sequence_set(args[0])
    items = parse_fetch_items(args[1])
    changed_since: int | None = None
    if len(args) == 3:
        modifiers = args[2]
        if not isinstance(modifiers, list) or len(modifiers) < 2:
            raise ParseError()
        if _text(modifiers[0]).upper() != "CHANGEDSINCE":
            raise ParseError()
        changed_since = _number(modifiers[1])
        session.condstore = True
    if uid and not any(it.name == "UID" for it in items):
        items = [*items, FetchItem("UID")]
    for seq, u, msg in session.resolve(seqset, uid=uid):
        if changed_since is not None and msg.modseq <= changed_since:
            continue
        session.untagged(render_fetch(session, seq, u, msg, items))
    return "OK Success"


# --------------------------------------------------------------------------- STORE


def _label_name(session: ImapSession, token: Token) -> str:
    name = _text(token)
    if session.utf8 or name.startswith("\\"):
        return name
    try:
        return decode_mutf7(name)
    except ValueError:
        return name


async def _store(session: ImapSession, cmd: Command, uid: bool) -> str:
    account, folder = _selected(session)
    args = cmd.args
    if len(args) < 3:
        raise ParseError()
    seqset = parse_sequence_set(args[0])
    pos = 1
    unchanged_since: int | None = None
    if isinstance(args[1], list):
        modifier = args[1]
        if len(modifier) != 2 or _text(modifier[0]).upper() != "UNCHANGEDSINCE":
            raise ParseError()
        unchanged_since = _number(modifier[1])
        pos = 2
    op, what, silent, values = _store_action(args[pos:])
    if session.readonly:
        return "NO STORE attempt on READ-ONLY folder (Failure)"

    targets = session.resolve(seqset, uid=uid)
    modified = [t for t in targets if unchanged_since is not None and t[2].modseq > unchanged_since]
    targets = [t for t in targets if t not in modified]
    msgs = [msg for _, _, msg in targets]
    before = {msg.msgid: msg.labels for msg in msgs}
    if what == "X-GM-LABELS":
        names = [_label_name(session, v) for v in values]
        result = gmail_ops.store_labels(account, folder, msgs, op, names)
    else:
        result = gmail_ops.store_flags(account, folder, msgs, op, [_text(v) for v in values])
    if not silent or unchanged_since is not None:
        for seq, u, msg in targets:
            _store_reply(session, seq, u if uid else None, msg, result[msg.msgid], what, before[msg.msgid])
    if modified:
        failed = _uid_set(sorted(u if uid else s for s, u, _ in modified))
        return f"OK [MODIFIED {failed}] Conditional Store Failed (Success)"
    return "OK Success"


def _store_action(args: list[Token]) -> tuple[gmail_ops.Op, str, bool, list[Token]]:
    """`[+-]FLAGS|X-GM-LABELS[.SILENT] value...`: the operation, the item, silence and the values."""
    if not args or not isinstance(args[0], str):
        raise ParseError()
    m = _STORE_ITEM.match(str(args[0]))
    if m is None:
        raise ParseError()
    op_text, what, silent = m.group(1), m.group(2).upper(), bool(m.group(3))
    op: gmail_ops.Op = "+" if op_text == "+" else "-" if op_text == "-" else ""
    values = args[1:]
    if len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    if any(isinstance(v, list) for v in values):
        raise ParseError()
    return op, what, silent, values


def _store_reply(
    session: ImapSession,
    seq: int,
    uid: int | None,
    msg: Message,
    state: gmail_ops.Reported,
    what: str,
    labels_before: frozenset[str],
) -> None:
    tail = b""
    if session.condstore:
        tail += b" MODSEQ (%d)" % msg.modseq
    if uid is not None:
        tail += b" UID %d" % uid
    if what == "X-GM-LABELS":
        shown = gmail_ops.visible_labels(state.labels, session.folder)
        session.untagged(b"%d FETCH (X-GM-LABELS %s%s)" % (seq, labels_wire(shown, utf8=session.utf8), tail))
        if (STARRED in state.labels) != (STARRED in labels_before):
            session.untagged(b"%d FETCH (FLAGS %s%s)" % (seq, flags_wire(state.flags), tail))
    else:
        session.untagged(b"%d FETCH (FLAGS %s%s)" % (seq, flags_wire(state.flags), tail))


# --------------------------------------------------------------------------- SEARCH


@dataclass
class _SearchItem:
    uid: int
    seq: int
    msgid: int
    thrid: int
    labels: frozenset[str]
    flags: frozenset[str]
    location: str
    internaldate: datetime
    size: int
    parsed: ParsedMessage
    indexed: SearchView | None


async def _search(session: ImapSession, cmd: Command, uid: bool) -> str:
    account, _folder = _selected(session)
    args = list(cmd.args)
    returns: list[str] | None = None
    if len(args) >= 2 and isinstance(args[0], str) and args[0].upper() == "RETURN":
        options = args[1]
        if not isinstance(options, list):
            raise ParseError()
        returns = [_text(o).upper() for o in options] or ["ALL"]
        args = args[2:]
    if len(args) >= 2 and isinstance(args[0], str) and args[0].upper() == "CHARSET":
        charset = _text(args[1]).upper()
        if charset not in ("UTF-8", "US-ASCII"):
            return "NO [BADCHARSET (UTF-8 US-ASCII)] Unsupported charset (Failure)"
        args = args[2:]
    if not args:
        raise ParseError()
    try:
        node = parse_search(args)
    except SearchParseError:
        raise ParseError() from None
    store = session.store
    clock, lag, stale = store.clock(), store.knobs.raw_search_lag_s, store.knobs.raw_search_stale_state
    live = session.live_items()
    ctx = SearchContext(
        account_address=account.address,
        now=store.now(),
        max_uid=max((u for _, u, _ in live), default=0),
        max_seq=len(session.uids),
        labels_from_index=store.knobs.label_search_lags,
        raw_finds_trash=store.knobs.raw_search_in_trash,
        date_zone=store.knobs.search_zone(),
    )
    hits: list[int] = []
    for seq, u, msg in live:
        item = _SearchItem(
            uid=u,
            seq=seq,
            msgid=msg.msgid,
            thrid=msg.thrid,
            labels=msg.labels,
            flags=msg.flags,
            location=msg.location,
            internaldate=msg.internaldate,
            size=msg.size,
            parsed=msg.parsed,
            # IndexState is a frozen dataclass with exactly SearchView's attributes.
            indexed=cast(SearchView | None, msg.indexed(clock, lag, stale_state=stale)),
        )
        if node.matches(item, ctx):
            hits.append(u if uid else seq)
    if returns is None:
        session.untagged(("SEARCH " + " ".join(map(str, hits))).rstrip())
    else:
        session.untagged(_esearch(cmd.tag, uid, sorted(hits), returns))
    return "OK SEARCH completed (Success)"


def _esearch(tag: str, uid: bool, hits: list[int], returns: list[str]) -> str:
    out = f'ESEARCH (TAG "{tag}")' + (" UID" if uid else "")
    if hits and "MIN" in returns:
        out += f" MIN {hits[0]}"
    if hits and "MAX" in returns:
        out += f" MAX {hits[-1]}"
    if "COUNT" in returns:
        out += f" COUNT {len(hits)}"
    if hits and "ALL" in returns:
        out += f" ALL {_uid_set(hits)}"
    return out


# --------------------------------------------------------------------------- COPY / MOVE


async def _copy(session: ImapSession, cmd: Command, uid: bool, move: bool) -> str:
    account, folder = _selected(session)
    if len(cmd.args) != 2:
        raise ParseError()
    seqset = parse_sequence_set(cmd.args[0])
    name = session.mailbox_name(cmd.args[1])
    if move and session.readonly:
        return "NO MOVE attempt on READ-ONLY folder (Failure)"
    dst = account.folder(name)
    if dst is None:
        return _TRYCREATE
    if dst.kind == "all" and folder.kind != "all" and account.store.knobs.all_mail_refuses_moves:
        return "NO [CANNOT] Messages cannot be moved or copied into All Mail (Failure)"
    targets = session.resolve(seqset, uid=uid)
    if not targets:
        return "OK No messages (Success)" if not move else "OK Success"
    msgs = [msg for _, _, msg in targets]
    if move:
        gmail_ops.move_to(account, msgs, folder, dst)
    else:
        gmail_ops.copy_to(account, msgs, dst)
    placed = {msg.msgid: u for u, msg in account.sync(dst)}
    pairs = [(u, placed[msg.msgid]) for _, u, msg in targets if msg.msgid in placed]
    code = ""
    if pairs:
        src_set = _uid_set(p[0] for p in pairs)
        dst_set = _uid_set(p[1] for p in pairs)
        code = f"[COPYUID {dst.uidvalidity} {src_set} {dst_set}] "
    if move:
        if code:
            session.untagged(f"OK {code}(Success)")
        return "OK Success"
    return f"OK {code}(Success)"


# --------------------------------------------------------------------------- APPEND


async def cmd_append(session: ImapSession, cmd: Command) -> str:
    if session.account is None:
        raise CommandFailed("BAD", "Command received in Invalid state.")
    account = session.account
    args = cmd.args
    if len(args) < 2 or len(args) > 4 or not isinstance(args[-1], bytes):
        raise ParseError()
    name = session.mailbox_name(args[0])
    flags: list[str] = []
    when: datetime | None = None
    for token in args[1:-1]:
        if isinstance(token, list):
            flags = [_text(t) for t in token]
        else:
            try:
                when = parse_internaldate(_text(token))
            except ValueError:
                raise ParseError() from None
    folder = account.folder(name)
    if folder is None:
        return _TRYCREATE
    msg = gmail_ops.append(account, folder, args[-1], flags, when)
    placed = {m.msgid: u for u, m in account.sync(folder)}
    if msg.msgid not in placed:
        return "OK (Success)"
    return f"OK [APPENDUID {folder.uidvalidity} {placed[msg.msgid]}] (Success)"


# --------------------------------------------------------------------------- EXPUNGE


def expunge_deleted(session: ImapSession, uids: set[int] | None) -> None:
    """Expunge the \\Deleted messages of the view (only `uids`, when given) the Gmail way."""
    account, folder = _selected(session)
    doomed = [msg for _, u, msg in session.live_items() if FLAG_DELETED in msg.flags and (uids is None or u in uids)]
    if doomed:
        gmail_ops.expunge(account, folder, doomed)


async def cmd_expunge(session: ImapSession, cmd: Command) -> str:
    if cmd.args:
        raise ParseError()
    if session.readonly:
        return "NO EXPUNGE attempt on READ-ONLY folder (Failure)"
    expunge_deleted(session, None)
    return "OK Success"


async def cmd_uid_expunge(session: ImapSession, cmd: Command) -> str:
    if len(cmd.args) != 1:
        raise ParseError()
    seqset = parse_sequence_set(cmd.args[0])
    if session.readonly:
        return "NO EXPUNGE attempt on READ-ONLY folder (Failure)"
    expunge_deleted(session, {u for _, u, _ in session.resolve(seqset, uid=True)})
    return "OK Success"


# --------------------------------------------------------------------------- IDLE


async def idle(session: ImapSession) -> str:
    """`+ idling`, push EXISTS/EXPUNGE as the view changes, finish on DONE.

    One IDLE that lasts too long ends as the knobs say: `idle_drop_after_s` closes the socket with
    no BYE, `idle_bye_after_s` sends `* BYE Session expired…` and closes, `idle_blackhole_after_s`
    goes silent (no updates, no answer to DONE) with the socket left open. The earliest one wins."""
    await session.continuation("idling")
    knobs = session.store.knobs
    began = time.monotonic()
    ends = [
        (after, kind)
        for after, kind in (
            (knobs.idle_drop_after_s, "drop"),
            (knobs.idle_bye_after_s, "bye"),
            (knobs.idle_blackhole_after_s, "blackhole"),
        )
        if after is not None
    ]
    end = min(ends) if ends else None
    read: asyncio.Future[bytes] = asyncio.ensure_future(session.readline())
    waiter: asyncio.Future[Any] | None = None
    try:
        while True:
            if session.folder is not None:
                session.report_updates(expunge_ok=True, idle=True)
                await session.flush(record=False)
            session.changed.clear()
            waiter = asyncio.ensure_future(session.changed.wait())
            pending: set[asyncio.Future[Any]] = {read, waiter}
            left = None if end is None else max(0.0, began + end[0] - time.monotonic())
            done, _ = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if read in done:
                break
            if not done and end is not None:
                read.cancel()  # the end below reads the socket itself
                await asyncio.wait({read})
                await _end_idle(session, end[1])
    finally:
        for fut in (read, waiter):
            if fut is not None and not fut.done():
                fut.cancel()
    line = read.result()
    if not line:
        raise ConnectionError("client went away during IDLE")
    session.observer.record_wire(session.id, "imap", "c", line)
    if line.strip().upper() != b"DONE":
        return "BAD Could not parse command"
    return "OK IDLE terminated (Success)"


async def _end_idle(session: ImapSession, kind: str) -> None:
    """End the connection the way the knob says; raises ConnectionError, which ends the session."""
    if kind == "bye":
        session.untagged(SESSION_EXPIRED)
        with contextlib.suppress(Exception):
            await session.flush(record=False)
        session.abort(graceful=True)
    elif kind == "blackhole":
        # Read (and log) whatever the client still sends, answer nothing, until it hangs up.
        session.closing = True
        with contextlib.suppress(Exception):
            while data := await session.reader.read(65536):
                session.observer.record_wire(session.id, "imap", "c", data)
    else:
        session.abort()
    raise ConnectionError(f"IDLE ended by the emulator ({kind})")


# --------------------------------------------------------------------------- the UID family


async def cmd_fetch(session: ImapSession, cmd: Command) -> str:
    return await _fetch(session, cmd, uid=False)


async def cmd_uid_fetch(session: ImapSession, cmd: Command) -> str:
    return await _fetch(session, cmd, uid=True)


async def cmd_store(session: ImapSession, cmd: Command) -> str:
    return await _store(session, cmd, uid=False)


async def cmd_uid_store(session: ImapSession, cmd: Command) -> str:
    return await _store(session, cmd, uid=True)


async def cmd_search(session: ImapSession, cmd: Command) -> str:
    return await _search(session, cmd, uid=False)


async def cmd_uid_search(session: ImapSession, cmd: Command) -> str:
    return await _search(session, cmd, uid=True)


async def cmd_copy(session: ImapSession, cmd: Command) -> str:
    return await _copy(session, cmd, uid=False, move=False)


async def cmd_uid_copy(session: ImapSession, cmd: Command) -> str:
    return await _copy(session, cmd, uid=True, move=False)


async def cmd_move(session: ImapSession, cmd: Command) -> str:
    return await _copy(session, cmd, uid=False, move=True)


async def cmd_uid_move(session: ImapSession, cmd: Command) -> str:
    return await _copy(session, cmd, uid=True, move=True)


UID_COMMANDS: dict[str, Handler] = {
    "FETCH": cmd_fetch,
    "UID FETCH": cmd_uid_fetch,
    "STORE": cmd_store,
    "UID STORE": cmd_uid_store,
    "SEARCH": cmd_search,
    "UID SEARCH": cmd_uid_search,
    "COPY": cmd_copy,
    "UID COPY": cmd_uid_copy,
    "MOVE": cmd_move,
    "UID MOVE": cmd_uid_move,
}
