"""IMAP handlers for session, authentication and mailbox commands, and the command table.

Each handler receives the session and the parsed command, writes untagged responses through
`session.untagged()` and returns the tagged reply text ("OK Success", "NO [...] ...").
"""

from __future__ import annotations

import base64
import binascii
import re

from . import imap_messages as messages
from .imap_codec import imap_quoted
from .imap_parser import Command, ParseError, Token
from .imap_replies import CAPS_AFTER_AUTH, CAPS_BEFORE_AUTH, REFUSALS
from .imap_server import CommandFailed, Handler, ImapSession, Spec
from .oauth import XOAUTH2_CHALLENGE, parse_xoauth2
from .store import FLAG_SEEN, Account, Folder

__all__ = ["COMMANDS", "astring_text", "mailbox_arg"]

_ANY = frozenset({"nonauth", "auth", "selected"})
_NONAUTH = frozenset({"nonauth"})
_AUTH = frozenset({"auth", "selected"})
_SELECTED = frozenset({"selected"})

SYSTEM_FLAGS = b"\\Answered \\Flagged \\Draft \\Deleted \\Seen $NotPhishing $Phishing"
_INVALID = REFUSALS["invalid"]
_TOO_MANY = REFUSALS["too_many"]
_SPECIAL_USE = frozenset({"\\All", "\\Drafts", "\\Important", "\\Sent", "\\Junk", "\\Flagged", "\\Trash"})
_XLIST_NAMES = {"\\All": "\\AllMail", "\\Junk": "\\Spam", "\\Flagged": "\\Starred"}


# --------------------------------------------------------------------------- argument helpers


def astring_text(token: Token) -> str:
    if isinstance(token, bytes):
        return token.decode("utf-8", errors="replace")
    if isinstance(token, str):
        return token
    raise ParseError()


def mailbox_arg(session: ImapSession, token: Token) -> str:
    return session.mailbox_name(token)


def _args(cmd: Command, low: int, high: int | None = None) -> list[Token]:
    if len(cmd.args) < low or (high is not None and len(cmd.args) > high):
        raise ParseError()
    return cmd.args


def _account(session: ImapSession) -> Account:
    if session.account is None:
        raise CommandFailed("BAD", "Command received in Invalid state.")
    return session.account


# --------------------------------------------------------------------------- any state


async def cmd_capability(session: ImapSession, cmd: Command) -> str:
    _args(cmd, 0, 0)
    session.untagged("CAPABILITY " + (CAPS_BEFORE_AUTH if session.state == "nonauth" else CAPS_AFTER_AUTH))
    return "OK Thats all she wrote! (Success)"


async def cmd_noop(session: ImapSession, cmd: Command) -> str:
    return "OK Success"


async def cmd_logout(session: ImapSession, cmd: Command) -> str:
    session.untagged("BYE LOGOUT Requested")
    session.deselect()
    session.state = "logout"
    session.closing = True
    return "OK 73 good day (Success)"


async def cmd_id(session: ImapSession, cmd: Command) -> str:
    _args(cmd, 1)
    session.untagged(b'ID ("name" "GImap" "vendor" "Google, Inc." "support-url" "https://support.google.com/mail")')
    return "OK Success"


# --------------------------------------------------------------------------- authentication


def _authenticate(session: ImapSession, user: str, password: str, mechanism: str = "LOGIN") -> str:
    account = session.store.account(user.strip())
    ok = account is not None and _password_ok(account.password, password)
    if session.store.google is not None:
        session.store.google.note_password_login("imap", mechanism, user, ok)
    if account is None or not ok:
        return _INVALID
    return _logged_in(session, account)


def _logged_in(session: ImapSession, account: Account) -> str:
    if not session.server.login_allowed(account):
        return _TOO_MANY
    session.logged_in(account)
    session.untagged("CAPABILITY " + CAPS_AFTER_AUTH)
    return f"OK {account.address} authenticated (Success)"


def _password_ok(expected: str, given: str) -> bool:
    # Gmail accepts an app password with or without the spaces it is displayed with.
    return given == expected or re.sub(r"\s+", "", given) == re.sub(r"\s+", "", expected)


async def cmd_login(session: ImapSession, cmd: Command) -> str:
    args = _args(cmd, 2, 2)
    return _authenticate(session, astring_text(args[0]), astring_text(args[1]))


async def _client_response(session: ImapSession, challenge: str) -> bytes:
    """The client's line after a `+ challenge` continuation (never logged: it carries a secret)."""
    await session.continuation(challenge)
    line = await session.readline()
    if not line:
        raise ConnectionError("client went away during AUTHENTICATE")
    session.observer.record_wire(session.id, "imap", "c", b"***\r\n")
    return line.strip()


async def _xoauth2(session: ImapSession, payload: bytes) -> str:
    """XOAUTH2 as Google documents it: on a refused token, a base64 JSON challenge, whatever the
    client answers to it, then NO [AUTHENTICATIONFAILED]."""
    parsed = parse_xoauth2(payload)
    google = session.store.google
    account = session.store.account(parsed[0].strip()) if parsed is not None else None
    if parsed is not None and google is not None and account is not None and google.accepts("imap", *parsed):
        return _logged_in(session, account)
    if parsed is not None and google is not None and account is None:
        google.accepts("imap", *parsed)  # counted as the failed attempt it is
    await _client_response(session, XOAUTH2_CHALLENGE)
    return _INVALID


async def cmd_authenticate(session: ImapSession, cmd: Command) -> str:
    args = _args(cmd, 1, 2)
    mechanism = astring_text(args[0]).upper()
    if mechanism not in ("PLAIN", "XOAUTH2"):
        return "NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)"
    if len(args) == 2:
        payload = astring_text(args[1]).encode()
    else:
        payload = await _client_response(session, "")
        if payload == b"*":
            return "BAD Authentication cancelled (Failure)"
    if mechanism == "XOAUTH2":
        return await _xoauth2(session, payload)
    try:
        decoded = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return "BAD Invalid SASL argument. (Failure)"
    parts = decoded.split(b"\0")
    if len(parts) != 3:
        return _INVALID
    return _authenticate(
        session, parts[1].decode("utf-8", "replace"), parts[2].decode("utf-8", "replace"), mechanism="PLAIN"
    )


async def cmd_enable(session: ImapSession, cmd: Command) -> str:
    enabled: list[str] = []
    for token in _args(cmd, 1):
        name = astring_text(token).upper()
        if name == "CONDSTORE":
            session.condstore = True
            enabled.append(name)
        elif name == "UTF8=ACCEPT" and session.store.knobs.allow_utf8_accept:
            session.utf8 = True
            enabled.append(name)
    session.untagged(("ENABLED " + " ".join(enabled)).rstrip())
    return "OK Success"


# --------------------------------------------------------------------------- mailboxes


async def cmd_namespace(session: ImapSession, cmd: Command) -> str:
    session.untagged(b'NAMESPACE (("" "/")) NIL NIL')
    return "OK Success"


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    for ch in pattern:
        if ch == "*":
            parts.append(".*")
        elif ch == "%":
            parts.append("[^/]*")
        else:
            parts.append(re.escape(ch))
    return re.compile("^" + "".join(parts) + "$", re.S)


def _matches(regex: re.Pattern[str], name: str) -> bool:
    if name == "INBOX":
        return bool(regex.match(name) or regex.match("inbox") or regex.match("Inbox"))
    return bool(regex.match(name))


async def _list(session: ImapSession, cmd: Command, verb: str) -> str:
    account = _account(session)
    args = list(_args(cmd, 2))
    special_only = False
    first = args[0]
    if isinstance(first, list):  # LIST-EXTENDED selection options
        special_only = "SPECIAL-USE" in [astring_text(t).upper() for t in first]
        args = args[1:]
    if len(args) < 2:
        raise ParseError()
    reference = mailbox_arg(session, args[0]) if args[0] != b"" else ""
    pattern_arg = args[1]
    patterns = [astring_text(t) for t in (pattern_arg if isinstance(pattern_arg, list) else [pattern_arg])]
    status_items = _return_status(args[2:])
    if patterns == [""]:
        session.untagged(f'{verb} (\\Noselect) "/" ""')
        return "OK Success"
    regexes = [_pattern_regex(reference + session.decode_name(p)) for p in patterns]
    for attributes, name in account.list_entries():
        if not any(_matches(rx, name) for rx in regexes):
            continue
        attrs = list(attributes)
        if special_only and not _SPECIAL_USE.intersection(attrs):
            continue
        if verb == "XLIST":
            attrs = [_XLIST_NAMES.get(a, a) for a in attrs]
            if name == "INBOX":
                attrs.append("\\Inbox")
        line = f'{verb} ({" ".join(attrs)}) "/" '.encode() + session.mailbox_wire(name)
        session.untagged(line)
        if status_items is not None and "\\Noselect" not in attrs:
            folder = account.folder(name)
            if folder is not None:
                session.untagged(_status_line(session, account, folder, status_items))
    return "OK Success"


def _return_status(rest: list[Token]) -> list[Token] | None:
    """The STATUS items of a LIST-EXTENDED `RETURN (... STATUS (...))` (RFC 5819), or None."""
    status_items: list[Token] | None = None
    if rest:
        options_list = rest[1] if len(rest) == 2 else None
        if not isinstance(rest[0], str) or rest[0].upper() != "RETURN" or not isinstance(options_list, list):
            raise ParseError()
        for i, opt in enumerate(options_list):
            if isinstance(opt, str) and opt.upper() == "STATUS" and i + 1 < len(options_list):
                nxt = options_list[i + 1]
                status_items = nxt if isinstance(nxt, list) else None
    return status_items


async def cmd_list(session: ImapSession, cmd: Command) -> str:
    return await _list(session, cmd, "LIST")


async def cmd_lsub(session: ImapSession, cmd: Command) -> str:
    return await _list(session, cmd, "LSUB")


async def cmd_xlist(session: ImapSession, cmd: Command) -> str:
    return await _list(session, cmd, "XLIST")


def _status_line(session: ImapSession, account: Account, folder: Folder, items: list[Token]) -> bytes:
    current = account.sync(folder)
    values: list[str] = []
    for token in items:
        item = astring_text(token).upper()
        if item == "MESSAGES":
            value = len(current)
        elif item == "UIDNEXT":
            value = folder.uidnext
        elif item == "UIDVALIDITY":
            value = folder.uidvalidity
        elif item == "UNSEEN":
            value = sum(1 for _, m in current if FLAG_SEEN not in m.flags)
        elif item == "RECENT":
            value = 0
        elif item == "HIGHESTMODSEQ":
            value = account.modseq
        else:
            raise ParseError()
        values.append(f"{item} {value}")
    return b"STATUS " + session.mailbox_wire(folder.name) + b" (" + " ".join(values).encode() + b")"


async def cmd_status(session: ImapSession, cmd: Command) -> str:
    account = _account(session)
    args = _args(cmd, 2, 2)
    name = mailbox_arg(session, args[0])
    if not isinstance(args[1], list) or not args[1]:
        raise ParseError()
    folder = account.folder(name)
    if folder is None:
        return f"NO [NONEXISTENT] Unknown Mailbox: {name} (Failure)"
    session.untagged(_status_line(session, account, folder, args[1]))
    return "OK Success"


async def cmd_create(session: ImapSession, cmd: Command) -> str:
    account = _account(session)
    args = _args(cmd, 1, 2)
    account.create_label(mailbox_arg(session, args[0]))
    return "OK Success"


async def cmd_delete(session: ImapSession, cmd: Command) -> str:
    account = _account(session)
    name = mailbox_arg(session, _args(cmd, 1, 1)[0])
    account.delete_label(name)
    return "OK Success"


async def cmd_rename(session: ImapSession, cmd: Command) -> str:
    account = _account(session)
    args = _args(cmd, 2, 2)
    account.rename_label(mailbox_arg(session, args[0]), mailbox_arg(session, args[1]))
    return "OK Success"


async def cmd_subscribe(session: ImapSession, cmd: Command) -> str:
    _args(cmd, 1, 1)
    return "OK Success"


async def _select(session: ImapSession, cmd: Command, readonly: bool) -> str:
    account = _account(session)
    args = _args(cmd, 1, 2)
    name = mailbox_arg(session, args[0])
    if len(args) == 2:
        params = args[1]
        if not isinstance(params, list):
            raise ParseError()
        if any(isinstance(p, str) and p.upper() == "CONDSTORE" for p in params):
            session.condstore = True
    session.deselect()
    folder = account.folder(name)
    if folder is None:
        return f"NO [NONEXISTENT] Unknown Mailbox: {name} (now in authenticated state) (Failure)"
    current = session.select(folder, readonly)
    session.untagged(b"FLAGS (" + SYSTEM_FLAGS + b")")
    session.untagged(b"OK [PERMANENTFLAGS (" + SYSTEM_FLAGS + b" \\*)] Flags permitted.")
    session.untagged(b"OK [UIDVALIDITY %d] UIDs valid." % folder.uidvalidity)
    session.untagged(b"%d EXISTS" % len(current))
    session.untagged(b"0 RECENT")
    session.untagged(b"OK [UIDNEXT %d] Predicted next UID." % folder.uidnext)
    session.untagged(b"OK [HIGHESTMODSEQ %d]" % account.modseq)
    shown = session.mailbox_wire(folder.name).decode("utf-8")[1:-1]
    return f"OK [{'READ-ONLY' if readonly else 'READ-WRITE'}] {shown} selected. (Success)"


async def cmd_select(session: ImapSession, cmd: Command) -> str:
    return await _select(session, cmd, readonly=False)


async def cmd_examine(session: ImapSession, cmd: Command) -> str:
    return await _select(session, cmd, readonly=True)


async def cmd_unselect(session: ImapSession, cmd: Command) -> str:
    _args(cmd, 0, 0)
    session.deselect()
    return "OK Returned to authenticated state. (Success)"


async def cmd_close(session: ImapSession, cmd: Command) -> str:
    _args(cmd, 0, 0)
    if not session.readonly:
        messages.expunge_deleted(session, None)
    session.deselect()
    return "OK Returned to authenticated state. (Success)"


async def cmd_check(session: ImapSession, cmd: Command) -> str:
    return "OK Success"


async def cmd_getquotaroot(session: ImapSession, cmd: Command) -> str:
    account = _account(session)
    name = mailbox_arg(session, _args(cmd, 1, 1)[0])
    used = sum(m.size for m in account.messages.values()) // 1024
    session.untagged(b"QUOTAROOT " + imap_quoted(name) + b' ""')
    session.untagged(b'QUOTA "" (STORAGE %d 15728640)' % used)
    return "OK Success"


async def cmd_idle(session: ImapSession, cmd: Command) -> str:
    _args(cmd, 0, 0)
    if session.store.knobs.idle_refused:
        return "NO IDLE is not available for this account (Failure)"
    return await messages.idle(session)


# --------------------------------------------------------------------------- the table


def _table() -> dict[str, Spec]:
    table: dict[str, tuple[Handler, frozenset[str]]] = {
        "CAPABILITY": (cmd_capability, _ANY),
        "NOOP": (cmd_noop, _ANY),
        "LOGOUT": (cmd_logout, _ANY),
        "ID": (cmd_id, _ANY),
        "LOGIN": (cmd_login, _NONAUTH),
        "AUTHENTICATE": (cmd_authenticate, _NONAUTH),
        "ENABLE": (cmd_enable, _AUTH),
        "NAMESPACE": (cmd_namespace, _AUTH),
        "LIST": (cmd_list, _AUTH),
        "LSUB": (cmd_lsub, _AUTH),
        "XLIST": (cmd_xlist, _AUTH),
        "STATUS": (cmd_status, _AUTH),
        "CREATE": (cmd_create, _AUTH),
        "DELETE": (cmd_delete, _AUTH),
        "RENAME": (cmd_rename, _AUTH),
        "SUBSCRIBE": (cmd_subscribe, _AUTH),
        "UNSUBSCRIBE": (cmd_subscribe, _AUTH),
        "SELECT": (cmd_select, _AUTH),
        "EXAMINE": (cmd_examine, _AUTH),
        "GETQUOTAROOT": (cmd_getquotaroot, _AUTH),
        "APPEND": (messages.cmd_append, _AUTH),
        "IDLE": (cmd_idle, _AUTH),
        "UNSELECT": (cmd_unselect, _SELECTED),
        "CLOSE": (cmd_close, _SELECTED),
        "CHECK": (cmd_check, _SELECTED),
        "EXPUNGE": (messages.cmd_expunge, _SELECTED),
        "UID EXPUNGE": (messages.cmd_uid_expunge, _SELECTED),
    }
    for name, handler in messages.UID_COMMANDS.items():
        table[name] = (handler, _SELECTED)
    return {name: Spec(handler, states) for name, (handler, states) in table.items()}


COMMANDS: dict[str, Spec] = _table()
