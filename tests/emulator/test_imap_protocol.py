"""Session-level IMAP behaviour as BEHAVIOURS.md lists it: greeting, CAPABILITY, LOGIN, LIST, SELECT..."""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

import pytest
from imapclient import imapclient as ic
from imapclient.exceptions import IMAPClientError, LoginError

from gmail_emulator.knobs import GERMAN_FOLDERS, Knobs
from support import wait_until

if TYPE_CHECKING:
    from emulator.conftest import ImapEmu

CAPS_PRE = (
    b"IMAP4rev1 UNSELECT IDLE NAMESPACE QUOTA ID XLIST CHILDREN X-GM-EXT-1 XYZZY SASL-IR "
    b"AUTH=XOAUTH2 AUTH=PLAIN AUTH=PLAIN-CLIENTTOKEN AUTH=OAUTHBEARER"
)
CAPS_POST = (
    b"IMAP4rev1 UNSELECT IDLE NAMESPACE QUOTA ID XLIST CHILDREN X-GM-EXT-1 UIDPLUS COMPRESS=DEFLATE "
    b"ENABLE MOVE CONDSTORE ESEARCH UTF8=ACCEPT LIST-EXTENDED LIST-STATUS LITERAL- SPECIAL-USE "
    b"APPENDLIMIT=35651584"
)
FLAGS = b"\\Answered \\Flagged \\Draft \\Deleted \\Seen $NotPhishing $Phishing"


def test_greeting_and_capabilities_raw(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw(login=False)
    assert re.fullmatch(rb"\* OK Gimap ready for requests from 127\.0\.0\.1 \w+\r\n", raw.greeting)
    assert raw.command("CAPABILITY") == [b"* CAPABILITY " + CAPS_PRE, b"r1 OK Thats all she wrote! (Success)"]
    lines = raw.command(f'LOGIN {imap_emu.user} "{imap_emu.password}"')
    assert lines == [b"* CAPABILITY " + CAPS_POST, f"r2 OK {imap_emu.user} authenticated (Success)".encode()]
    assert raw.command("CAPABILITY")[0] == b"* CAPABILITY " + CAPS_POST
    assert raw.command("LOGOUT") == [b"* BYE LOGOUT Requested", b"r4 OK 73 good day (Success)"]
    assert raw.readline() == b""  # the server closed the connection


def test_capabilities_with_imapclient(imap_emu: ImapEmu) -> None:
    client = imap_emu.client(login=False)
    assert not client.has_capability("MOVE")
    assert not client.has_capability("UIDPLUS")
    assert not client.has_capability("SPECIAL-USE")
    assert client.has_capability("X-GM-EXT-1")
    client.login(imap_emu.user, imap_emu.password)
    assert client.has_capability("MOVE") and client.has_capability("UIDPLUS")
    assert client.has_capability("SPECIAL-USE")
    client.logout()


def test_login_failures(imap_emu: ImapEmu) -> None:
    client = imap_emu.client(login=False)
    with pytest.raises(LoginError, match=r"\[AUTHENTICATIONFAILED\] Invalid credentials \(Failure\)"):
        client.login(imap_emu.user, "wrong")
    with pytest.raises(LoginError, match="AUTHENTICATIONFAILED"):
        client.login("nobody@gmail.test", "x")
    client.login(imap_emu.user.upper(), imap_emu.password)  # address is case-insensitive
    client.logout()
    spaced = imap_emu.client(login=False)
    spaced.login(imap_emu.user, "abcd efgh ijkl mnop")  # app passwords work with their spaces
    spaced.logout()


def test_authenticate_plain_with_imaplib(imap_emu: ImapEmu) -> None:
    conn: Any = imap_emu.imaplib(login=False)  # typeshed's imaplib result types are narrower than the wire
    token = f"\0{imap_emu.user}\0{imap_emu.password}".encode()
    typ, data = conn.authenticate("PLAIN", lambda _challenge: token)
    assert typ == "OK" and b"authenticated (Success)" in data[0]
    assert conn.state == "AUTH"
    conn.logout()
    wire = b"".join(e.data for e in imap_emu.observer.wire_log())
    assert imap_emu.password.encode() not in wire
    assert base64.b64encode(token) not in wire


def test_sasl_ir_authenticate_raw(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw(login=False)
    token = base64.b64encode(f"\0{imap_emu.user}\0{imap_emu.password}".encode()).decode()
    lines = raw.command(f"AUTHENTICATE PLAIN {token}")
    assert lines[0].startswith(b"* CAPABILITY IMAP4rev1") and lines[-1].endswith(b"authenticated (Success)")
    assert raw.command("AUTHENTICATE PLAIN AAAA")[-1] == b"r2 BAD Command received in Invalid state."


def test_state_checks(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw(login=False)
    assert raw.command("SELECT INBOX") == [b"r1 BAD Command received in Invalid state."]
    raw.command(f'LOGIN {imap_emu.user} "{imap_emu.password}"')
    assert raw.command("UID FETCH 1 UID") == [b"r3 BAD Command received in Invalid state."]
    assert raw.command("FROB") == [b"r4 BAD Unknown command"]


def test_id_namespace_noop_enable(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    assert raw.command('ID ("name" "test")') == [
        b'* ID ("name" "GImap" "vendor" "Google, Inc." "support-url" "https://support.google.com/mail")',
        b"r2 OK Success",
    ]
    assert raw.command("NAMESPACE") == [b'* NAMESPACE (("" "/")) NIL NIL', b"r3 OK Success"]
    assert raw.command("NOOP") == [b"r4 OK Success"]
    assert raw.command("ENABLE CONDSTORE UTF8=ACCEPT") == [b"* ENABLED CONDSTORE", b"r5 OK Success"]


def test_enable_utf8_accept_knob(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.allow_utf8_accept = True
    raw = imap_emu.raw()
    assert raw.command("ENABLE UTF8=ACCEPT") == [b"* ENABLED UTF8=ACCEPT", b"r2 OK Success"]
    lines = raw.command('LIST "" "*"')
    assert b'* LIST (\\HasNoChildren) "/" "\xc3\x89t\xc3\xa9"' in lines
    # R&-D is a *different* name once UTF8=ACCEPT is on
    assert raw.command('CREATE "R&-D"')[-1] == b"r4 OK Success"
    assert "R&-D" in imap_emu.alice.user_labels.values()


def test_list_special_use(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    lines = raw.command('LIST "" "*"')
    assert lines == [
        b'* LIST (\\HasNoChildren) "/" "INBOX"',
        b'* LIST (\\HasNoChildren) "/" "Work"',
        b'* LIST (\\HasNoChildren) "/" "&AMk-t&AOk-"',
        b'* LIST (\\Noselect \\HasChildren) "/" "[Gmail]"',
        b'* LIST (\\HasNoChildren \\All) "/" "[Gmail]/All Mail"',
        b'* LIST (\\HasNoChildren \\Drafts) "/" "[Gmail]/Drafts"',
        b'* LIST (\\HasNoChildren \\Important) "/" "[Gmail]/Important"',
        b'* LIST (\\HasNoChildren \\Sent) "/" "[Gmail]/Sent Mail"',
        b'* LIST (\\HasNoChildren \\Junk) "/" "[Gmail]/Spam"',
        b'* LIST (\\HasNoChildren \\Flagged) "/" "[Gmail]/Starred"',
        b'* LIST (\\HasNoChildren \\Trash) "/" "[Gmail]/Trash"',
        b"r2 OK Success",
    ]
    assert raw.command('LIST "" "%"')[:-1] == [
        b'* LIST (\\HasNoChildren) "/" "INBOX"',
        b'* LIST (\\HasNoChildren) "/" "Work"',
        b'* LIST (\\HasNoChildren) "/" "&AMk-t&AOk-"',
        b'* LIST (\\Noselect \\HasChildren) "/" "[Gmail]"',
    ]
    assert raw.command('LIST "" ""')[0] == b'* LIST (\\Noselect) "/" ""'
    special = raw.command('LIST (SPECIAL-USE) "" "*"')
    assert len(special) == 8 and all(b"[Gmail]/" in line for line in special[:-1])
    xlist = raw.command('XLIST "" "*"')
    assert b'* XLIST (\\HasNoChildren \\Inbox) "/" "INBOX"' in xlist
    assert b'* XLIST (\\HasNoChildren \\AllMail) "/" "[Gmail]/All Mail"' in xlist
    assert raw.command('LSUB "" "INBOX"')[0] == b'* LSUB (\\HasNoChildren) "/" "INBOX"'
    status = raw.command('LIST "" "INBOX" RETURN (STATUS (MESSAGES UNSEEN))')
    assert status[1] == b'* STATUS "INBOX" (MESSAGES 0 UNSEEN 0)'


def test_list_with_imapclient_finds_special_folders(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    assert client.find_special_folder(ic.ALL) == "[Gmail]/All Mail"
    assert client.find_special_folder(ic.DRAFTS) == "[Gmail]/Drafts"
    assert client.find_special_folder(ic.TRASH) == "[Gmail]/Trash"
    assert client.find_special_folder(ic.JUNK) == "[Gmail]/Spam"
    names = [name for _flags, _delim, name in client.list_folders()]
    assert "Été" in names  # decoded from modified UTF-7
    client.logout()


@pytest.mark.parametrize("imap_knobs", [Knobs(folder_names=dict(GERMAN_FOLDERS))], indirect=True)
def test_localised_folder_names(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    assert client.find_special_folder(ic.DRAFTS) == "[Google Mail]/Entwürfe"
    assert client.find_special_folder(ic.ALL) == "[Google Mail]/Alle Nachrichten"
    uid = client.append("[Google Mail]/Entwürfe", b"Subject: x\r\n\r\nbody\r\n")
    assert uid.startswith(b"[APPENDUID ")
    with pytest.raises(IMAPClientError, match=r"\[TRYCREATE\] Folder doesn't exist. \(Failure\)"):
        client.append("[Gmail]/Drafts", b"Subject: x\r\n\r\nbody\r\n")
    client.logout()


def test_create_delete_rename(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    client.create_folder("Projects/2026")
    listed = {name: flags for flags, _d, name in client.list_folders()}
    assert listed["Projects"] == (b"\\Noselect", b"\\HasChildren")
    assert listed["Projects/2026"] == (b"\\HasNoChildren",)
    with pytest.raises(IMAPClientError, match=r"\[ALREADYEXISTS\] Duplicate folder name Work \(Failure\)"):
        client.create_folder("Work")
    with pytest.raises(IMAPClientError, match=r"\[ALREADYEXISTS\]"):
        client.create_folder("[Gmail]/Trash")
    client.rename_folder("Projects/2026", "Archive 2026")
    names = [name for _f, _d, name in client.list_folders()]
    assert "Archive 2026" in names and "Projects/2026" not in names
    client.delete_folder("Archive 2026")
    with pytest.raises(IMAPClientError, match=r"\[NONEXISTENT\] Unknown Mailbox: Nope"):
        client.delete_folder("Nope")
    with pytest.raises(IMAPClientError, match=r"\[NONEXISTENT\] Unknown Mailbox: Nope"):
        client.select_folder("Nope")
    client.create_folder("Übung")
    assert "Übung" in imap_emu.alice.user_labels.values()  # decoded from &ANw-bung
    client.logout()


def test_select_and_examine_exact_lines(imap_emu: ImapEmu) -> None:
    for i in range(3):
        imap_emu.deliver(imap_emu.make_mail(f"m{i}"), flags=["\\Seen"] if i else [])
    raw = imap_emu.raw()
    modseq = imap_emu.alice.modseq
    assert raw.command("SELECT INBOX") == [
        b"* FLAGS (" + FLAGS + b")",
        b"* OK [PERMANENTFLAGS (" + FLAGS + b" \\*)] Flags permitted.",
        b"* OK [UIDVALIDITY 1] UIDs valid.",
        b"* 3 EXISTS",
        b"* 0 RECENT",
        b"* OK [UIDNEXT 4] Predicted next UID.",
        b"* OK [HIGHESTMODSEQ %d]" % modseq,
        b"r2 OK [READ-WRITE] INBOX selected. (Success)",
    ]
    lines = raw.command('EXAMINE "[Gmail]/All Mail"')
    assert lines[3] == b"* 3 EXISTS"
    assert lines[-1] == b"r3 OK [READ-ONLY] [Gmail]/All Mail selected. (Success)"
    status = raw.command('STATUS "INBOX" (MESSAGES UIDNEXT UIDVALIDITY UNSEEN RECENT HIGHESTMODSEQ)')
    assert status[0] == b'* STATUS "INBOX" (MESSAGES 3 UIDNEXT 4 UIDVALIDITY 1 UNSEEN 1 RECENT 0 HIGHESTMODSEQ %d)' % (
        modseq
    )
    assert raw.command('SELECT "[Gmail]"')[-1].startswith(b"r5 NO [NONEXISTENT] Unknown Mailbox: [Gmail]")
    assert raw.command("NOOP") == [b"r6 OK Success"]
    assert raw.command("CHECK") == [b"r7 BAD Command received in Invalid state."]  # a failed SELECT deselects


def test_imaplib_readonly_pitfall(imap_emu: ImapEmu) -> None:
    """Nothing but SELECT/EXAMINE may carry [READ-ONLY]: imaplib would poison the session."""
    imap_emu.deliver(imap_emu.make_mail("one"))
    conn: Any = imap_emu.imaplib()  # typeshed's imaplib result types are narrower than the wire
    typ, data = conn.select('"[Gmail]/All Mail"', readonly=True)
    assert typ == "OK" and data == [b"1"]
    typ, data = conn.uid("SEARCH", None, "ALL")
    assert (typ, data) == ("OK", [b"1"])
    typ, data = conn.uid("STORE", "1", "+FLAGS", "(\\Seen)")
    assert typ == "NO"
    typ, data = conn.uid("FETCH", "1", "(FLAGS)")
    assert typ == "OK" and b"FLAGS ()" in data[0]
    typ, _ = conn.noop()
    assert typ == "OK"
    typ, data = conn.select("INBOX")
    assert typ == "OK"
    typ, _ = conn.uid("STORE", "1", "+FLAGS", "(\\Seen)")
    assert typ == "OK"
    typ, _ = conn.close()
    assert typ == "OK"
    conn.logout()


def test_unselect_close_check(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    raw.command("SELECT INBOX")
    assert raw.command("CHECK") == [b"r3 OK Success"]
    assert raw.command("UNSELECT") == [b"r4 OK Returned to authenticated state. (Success)"]
    assert raw.command("CHECK") == [b"r5 BAD Command received in Invalid state."]


def test_malformed_input_never_kills_the_session(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    raw.send(b"\r\n")
    assert raw.readline() == b"* BAD Could not parse command\r\n"
    assert raw.command(b"SELECT \xff\xfe") == [b"r2 BAD Could not parse command"]
    assert raw.command(b'UID SEARCH X-GM-RAW "caf\xc3\xa9"') == [b"r3 BAD Could not parse command"]
    assert raw.command(b"FETCH (((") == [b"r4 BAD Could not parse command"]
    raw.command("SELECT INBOX")
    assert raw.command(b"UID FETCH 1:* (BODY[1.MIMEX])") == [b"r6 BAD Could not parse command"]
    assert raw.command(b"UID SEARCH FROB") == [b"r7 BAD Could not parse command"]
    assert raw.command(b'UID SEARCH X-GM-RAW "subject:(oops"') == [b"r8 BAD Could not parse command"]
    # LITERAL-: a non-synchronising literal above 4096 bytes is refused, the session goes on
    raw.send(b"x1 APPEND INBOX {5000+}\r\n" + b"x" * 5000 + b"\r\n")
    assert raw.until(b"x1")[-1].startswith(b"x1 BAD [TOOBIG]")
    assert raw.command("NOOP") == [b"r9 OK Success"]


def test_client_disconnects_mid_literal(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    raw.send(b"a1 APPEND INBOX {100}\r\n")
    assert raw.readline() == b"+ go ahead\r\n"
    raw.send(b"partial")
    raw.close()
    wait_until(lambda: not imap_emu.server.sessions)  # the server has ended that session
    client = imap_emu.client()  # the server is fine
    assert client.noop()[0].startswith(b"Success")
    client.logout()
    assert imap_emu.alice.messages == {}


def test_quota_root(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    lines = raw.command("GETQUOTAROOT INBOX")
    assert lines[0] == b'* QUOTAROOT "INBOX" ""'
    assert lines[1].startswith(b'* QUOTA "" (STORAGE ')


def test_imaplib_basic_flow(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("Plain old imaplib"))
    conn: Any = imap_emu.imaplib(login=False)  # typeshed's imaplib result types are narrower than the wire
    assert "IMAP4REV1" in conn.capabilities
    assert "MOVE" not in conn.capabilities
    typ, _ = conn.login(imap_emu.user, imap_emu.password)
    assert typ == "OK"
    typ, data = conn.list()
    assert typ == "OK" and b'(\\HasNoChildren \\Trash) "/" "[Gmail]/Trash"' in data
    typ, data = conn.select("INBOX")
    assert typ == "OK" and data == [b"1"]
    assert conn.response("UIDVALIDITY") == ("UIDVALIDITY", [b"1"])
    typ, data = conn.fetch("1", "(BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
    assert typ == "OK" and data[0][1] == b"Subject: Plain old imaplib\r\n\r\n"
    typ, data = conn.search(None, "SUBJECT", '"old imaplib"')
    assert (typ, data) == ("OK", [b"1"])
    typ, data = conn.logout()
    assert typ == "BYE"
