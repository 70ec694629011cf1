"""FETCH, STORE, SEARCH, COPY/MOVE, APPEND and EXPUNGE with Gmail's label semantics (BEHAVIOURS.md)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Literal

import pytest
from imapclient.exceptions import IMAPClientError

from gmail_emulator.knobs import Knobs
from gmail_emulator.store import DRAFT, INBOX, SENT, STARRED

if TYPE_CHECKING:
    from imapclient import IMAPClient

    from emulator.conftest import ImapEmu


def _labels(client: IMAPClient, uid: int) -> set[str]:
    return set(client.get_gmail_labels([uid])[uid])


# --------------------------------------------------------------------------- FETCH


def test_fetch_gmail_attributes_order_and_quoting(imap_emu: ImapEmu) -> None:
    msg = imap_emu.deliver(
        imap_emu.make_mail("Labels"),
        ["\\Inbox", "\\Important", "Work", "Muy Importante", "Été", "R&D", "[foobar]"],
        ["\\Seen"],
    )
    raw = imap_emu.raw()
    raw.command('EXAMINE "[Gmail]/All Mail"')
    lines = raw.command("UID FETCH 1 (FLAGS X-GM-LABELS X-GM-MSGID X-GM-THRID)")
    assert lines[0] == (
        b'* 1 FETCH (X-GM-THRID %d X-GM-MSGID %d X-GM-LABELS ("\\\\Important" "\\\\Inbox" "[foobar]" '
        b'"Muy Importante" R&-D Work &AMk-t&AOk-) UID 1 FLAGS (\\Seen))' % (msg.thrid, msg.msgid)
    )
    assert msg.msgid > 2**53
    raw.command("EXAMINE INBOX")
    lines = raw.command("FETCH 1 (X-GM-LABELS)")
    assert lines[0] == b'* 1 FETCH (X-GM-LABELS ("\\\\Important" "[foobar]" "Muy Importante" R&-D Work &AMk-t&AOk-))'
    raw.command("EXAMINE Work")
    assert raw.command("UID FETCH 1 (X-GM-LABELS)")[0] == (
        b'* 1 FETCH (X-GM-LABELS ("\\\\Important" "\\\\Inbox" "[foobar]" "Muy Importante" R&-D &AMk-t&AOk-) UID 1)'
    )


def test_fetch_labels_with_imapclient(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("x"), ["\\Inbox", "\\Starred", "Été", "R&D"])
    imap_emu.deliver(imap_emu.make_mail("y"), ["Work"])
    client = imap_emu.client()
    client.select_folder("[Gmail]/All Mail", readonly=True)
    labels = client.get_gmail_labels([1, 2])
    assert set(labels[1]) == {"\\Inbox", "\\Starred", "Été", "R&D"}
    assert labels[2] == ["Work"]
    client.select_folder("INBOX", readonly=True)
    assert set(client.get_gmail_labels([1])[1]) == {"\\Starred", "Été", "R&D"}  # own label omitted
    client.select_folder("Work", readonly=True)
    assert client.get_gmail_labels([1]) == {1: []}


def test_fetch_everything_imapclient(imap_emu: ImapEmu) -> None:
    raw_mail = imap_emu.make_mail("Report", "Line one\nLine two\n", attachment=("r.pdf", b"%PDF-1.4 fake"))
    msg = imap_emu.deliver(raw_mail, internaldate=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    client = imap_emu.client()
    client.normalise_times = False
    client.select_folder("INBOX")
    data = client.fetch(
        [1],
        [
            "UID",
            "FLAGS",
            "X-GM-THRID",
            "X-GM-MSGID",
            "INTERNALDATE",
            "RFC822.SIZE",
            "ENVELOPE",
            "BODYSTRUCTURE",
            "BODY.PEEK[1]<0.4>",
            "BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]",
        ],
    )[1]
    assert data[b"X-GM-MSGID"] == msg.msgid and data[b"X-GM-THRID"] == msg.thrid
    assert data[b"INTERNALDATE"] == dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=data[b"INTERNALDATE"].tzinfo)
    assert data[b"INTERNALDATE"].utcoffset() == dt.timedelta(0)
    assert data[b"RFC822.SIZE"] == len(raw_mail)
    assert data[b"ENVELOPE"].subject == b"Report"
    assert data[b"BODY[1]<0>"] == b"Line"
    assert data[b"BODY[HEADER.FIELDS (SUBJECT FROM)]"] == b"From: Carol <carol@example.com>\r\nSubject: Report\r\n\r\n"
    bs = data[b"BODYSTRUCTURE"]
    assert bs.is_multipart
    parts, subtype = bs[0], bs[1]
    assert subtype == b"MIXED" and len(parts) == 2
    attachment = parts[1]
    assert attachment[0] == b"APPLICATION" and attachment[1] == b"PDF"
    assert attachment[8] == (b"ATTACHMENT", (b"FILENAME", b"r.pdf"))
    assert data[b"FLAGS"] == ()  # nothing above set \Seen


def test_body_peek_keeps_unseen_and_body_sets_seen(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("seen test"))
    raw = imap_emu.raw()
    raw.command("EXAMINE INBOX")
    lines = raw.command("UID FETCH 1 (BODY[])")
    assert b"FLAGS" not in lines[0]  # read-only: BODY[] does not set \Seen
    raw.command("SELECT INBOX")
    lines = raw.command("UID FETCH 1 (BODY.PEEK[TEXT]<0.5>)")
    assert lines[0] == b"* 1 FETCH (UID 1 BODY[TEXT]<0> {5}\r\nHi th)"
    assert imap_emu.alice.messages[next(iter(imap_emu.alice.messages))].flags == frozenset()
    lines = raw.command("UID FETCH 1 (BODY[1])")
    assert lines[0].startswith(b"* 1 FETCH (UID 1 BODY[1] {")
    assert lines[0].endswith(b" FLAGS (\\Seen))")
    lines = raw.command("FETCH 1 (RFC822.HEADER BODY[9] BODY)")
    assert b"BODY[9] NIL" in lines[0] and b'BODY ("TEXT" "PLAIN"' in lines[0]


def test_fetch_changedsince_and_modseq(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("a"))
    imap_emu.deliver(imap_emu.make_mail("b"))
    raw = imap_emu.raw()
    raw.command("SELECT INBOX (CONDSTORE)")
    before = imap_emu.alice.modseq
    raw.command("UID STORE 2 +FLAGS.SILENT (\\Seen)")
    lines = raw.command(f"UID FETCH 1:* (FLAGS) (CHANGEDSINCE {before})")
    assert len(lines) == 2 and lines[0].startswith(b"* 2 FETCH (UID 2 FLAGS (\\Seen) MODSEQ (")


# --------------------------------------------------------------------------- STORE


def test_store_labels_and_starred_double_fetch(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("star me"))
    raw = imap_emu.raw()
    raw.command("SELECT INBOX")
    assert raw.command("UID STORE 1 +X-GM-LABELS (\\Starred)") == [
        b'* 1 FETCH (X-GM-LABELS ("\\\\Starred") UID 1)',
        b"* 1 FETCH (FLAGS (\\Flagged) UID 1)",
        b"r3 OK Success",
    ]
    assert raw.command('STORE 1 -X-GM-LABELS ("\\\\Starred")') == [
        b"* 1 FETCH (X-GM-LABELS ())",
        b"* 1 FETCH (FLAGS ())",
        b"r4 OK Success",
    ]
    assert raw.command("UID STORE 1 +X-GM-LABELS.SILENT (Work)") == [b"r5 OK Success"]
    assert raw.command("UID STORE 1 +FLAGS (\\Flagged)") == [b"* 1 FETCH (FLAGS (\\Flagged) UID 1)", b"r6 OK Success"]
    msg = next(iter(imap_emu.alice.messages.values()))
    assert msg.labels == {INBOX, "Work", STARRED}  # \Flagged stars the message


def test_store_labels_imapclient(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("x"), ["\\Inbox", "Work"])
    client = imap_emu.client()
    client.select_folder("[Gmail]/All Mail")
    result = client.add_gmail_labels([1], ["\\Important", "Été", "R&D"])
    assert set(result[1]) == {"\\Inbox", "\\Important", "Work", "Été", "R&D"}
    assert client.remove_gmail_labels([1], ["\\Inbox"], silent=True) is None
    result = client.set_gmail_labels([1], ["Work", "\\Starred"])
    assert set(result[1]) == {"Work", "\\Starred"}
    assert client.get_flags([1]) == {1: (b"\\Flagged",)}
    names = [name for _f, _d, name in client.list_folders()]
    assert "R&D" in names


def test_remove_own_label_is_a_noop(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("x"), ["\\Inbox", "Work"])
    client = imap_emu.client()
    client.select_folder("Work")
    client.remove_gmail_labels([1], ["Work"])
    client.noop()
    assert client.search(["ALL"]) == [1]
    client.select_folder("INBOX")
    client.remove_gmail_labels([1], ["\\Inbox"])
    assert client.noop()[1] == []  # still there
    client.select_folder("[Gmail]/All Mail")
    client.remove_gmail_labels([1], ["\\Inbox"])
    assert _labels(client, 1) == {"Work"}


@pytest.mark.parametrize("policy", ["create", "ignore", "no"])
def test_unknown_label_policy(imap_emu: ImapEmu, policy: Literal["create", "ignore", "no"]) -> None:
    imap_emu.store.knobs.unknown_label_policy = policy
    imap_emu.deliver(imap_emu.make_mail("x"))
    client = imap_emu.client()
    client.select_folder("INBOX")
    if policy == "no":
        with pytest.raises(IMAPClientError, match=r"NONEXISTENT"):
            client.add_gmail_labels([1], ["Brand New"])
        assert "brand new" not in imap_emu.alice.user_labels
        return
    client.add_gmail_labels([1], ["Brand New"])
    names = [name for _f, _d, name in client.list_folders()]
    labels = _labels(client, 1)
    if policy == "create":
        assert "Brand New" in names and labels == {"Brand New"}
    else:
        assert "Brand New" not in names and labels == set()
    client.add_gmail_labels([1], ["work"])  # existing labels resolve case-insensitively
    assert "Work" in _labels(client, 1)


def test_store_accepted_but_not_applied(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("flaky", message_id="<flaky@x>"))
    imap_emu.store.knobs.store_not_applied_ids = {"flaky@x"}
    client = imap_emu.client()
    client.select_folder("INBOX")
    reply = client.add_gmail_labels([1], ["Work"])
    assert reply[1] == ["Work"]  # the reply says it worked...
    assert _labels(client, 1) == set()  # ...but nothing changed
    client.add_gmail_labels([1], ["Work"])  # each listed id misbehaves once
    assert _labels(client, 1) == {"Work"}
    imap_emu.store.knobs.store_not_applied_fraction = 1.0
    assert client.add_flags([1], ["\\Seen"])[1] == (b"\\Seen",)
    assert client.get_flags([1])[1] == ()


def test_store_readonly_and_unchangedsince(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("a"))
    imap_emu.deliver(imap_emu.make_mail("b"))
    raw = imap_emu.raw()
    raw.command("EXAMINE INBOX")
    assert raw.command("UID STORE 1 +FLAGS (\\Seen)") == [b"r3 NO STORE attempt on READ-ONLY folder (Failure)"]
    raw.command("SELECT INBOX")
    stale = imap_emu.alice.modseq
    raw.command("UID STORE 2 +FLAGS.SILENT (\\Answered)")
    lines = raw.command(f"UID STORE 1:2 (UNCHANGEDSINCE {stale}) +FLAGS (\\Seen)")
    assert lines[-1] == b"r6 OK [MODIFIED 2] Conditional Store Failed (Success)"
    assert lines[0] == b"* 1 FETCH (FLAGS (\\Seen) UID 1)"


def test_store_deleted_auto_expunge_archives(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("bye"), ["\\Inbox", "Work"])
    client = imap_emu.client()
    client.select_folder("INBOX")
    client.delete_messages([1])
    assert client.search(["ALL"]) == []
    client.select_folder("[Gmail]/All Mail")
    assert client.search(["ALL"]) == [1]
    assert _labels(client, 1) == {"Work"}
    assert client.get_flags([1])[1] == ()


# --------------------------------------------------------------------------- EXPUNGE


def test_expunge_in_inbox_archives_and_in_label_removes_label(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.auto_expunge = False
    imap_emu.deliver(imap_emu.make_mail("one"), ["\\Inbox", "Work"])
    imap_emu.deliver(imap_emu.make_mail("two"), ["\\Inbox", "Work"])
    raw = imap_emu.raw()
    raw.command("SELECT INBOX")
    raw.command("STORE 1 +FLAGS.SILENT (\\Deleted)")
    assert raw.command("EXPUNGE") == [b"* 1 EXPUNGE", b"r4 OK Success"]
    msgs = sorted(imap_emu.alice.messages.values(), key=lambda m: m.arrival)
    assert msgs[0].labels == {"Work"} and msgs[0].flags == frozenset()
    raw.command("SELECT Work")
    raw.command("UID STORE 2 +FLAGS.SILENT (\\Deleted)")
    assert raw.command("UID EXPUNGE 1") == [b"r7 OK Success"]  # UID 1 is not \Deleted
    assert raw.command("UID EXPUNGE 1:2") == [b"* 2 EXPUNGE", b"r8 OK Success"]
    assert msgs[1].labels == {INBOX}


def test_expunge_in_trash_deletes_forever_and_close_expunges(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.auto_expunge = False
    imap_emu.deliver(imap_emu.make_mail("gone"), location="trash")
    imap_emu.deliver(imap_emu.make_mail("draft"), ["\\Draft"])
    client = imap_emu.client()
    client.select_folder("[Gmail]/Trash")
    client.delete_messages([1])
    client.expunge()
    client.select_folder("[Gmail]/Drafts")
    client.delete_messages([1])
    client.close_folder()
    assert imap_emu.alice.messages == {}


@pytest.mark.parametrize("behaviour", ["archive", "trash", "delete"])
def test_expunge_behavior_in_all_mail(imap_emu: ImapEmu, behaviour: Literal["archive", "trash", "delete"]) -> None:
    imap_emu.store.knobs.expunge_behavior = behaviour
    msg = imap_emu.deliver(imap_emu.make_mail("x"), [])
    client = imap_emu.client()
    client.select_folder("[Gmail]/All Mail")
    client.delete_messages([1])
    if behaviour == "archive":
        assert msg.location == "normal" and client.search(["ALL"]) == [1]
    elif behaviour == "trash":
        assert msg.location == "trash" and client.search(["ALL"]) == []
    else:
        assert imap_emu.alice.messages == {}


# --------------------------------------------------------------------------- COPY / MOVE


def test_copy_adds_label_with_copyuid(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("copy me"))
    conn = imap_emu.imaplib()
    conn.select("INBOX")
    typ, data = conn.copy("1", "Work")
    work = imap_emu.alice.folder("Work")
    assert work is not None
    work_validity = work.uidvalidity
    assert typ == "OK" and data == [f"[COPYUID {work_validity} 1 1] (Success)".encode()]
    msg = next(iter(imap_emu.alice.messages.values()))
    assert msg.labels == {INBOX, "Work"}
    typ, data = conn.copy("1", '"No Such"')
    assert typ == "NO" and data == [b"[TRYCREATE] Folder doesn't exist. (Failure)"]


def test_move_response_shape(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("a"))
    imap_emu.deliver(imap_emu.make_mail("b"))
    raw = imap_emu.raw()
    raw.command("SELECT INBOX")
    trash = imap_emu.alice.folder("[Gmail]/Trash")
    assert trash is not None
    assert raw.command('UID MOVE 2 "[Gmail]/Trash"') == [
        b"* OK [COPYUID %d 2 1] (Success)" % trash.uidvalidity,
        b"* 2 EXPUNGE",
        b"r3 OK Success",
    ]


def test_move_to_trash_and_back(imap_emu: ImapEmu) -> None:
    msg = imap_emu.deliver(imap_emu.make_mail("trash me"), ["\\Inbox", "Work"], ["\\Seen", "\\Flagged"])
    client = imap_emu.client()
    client.select_folder("INBOX")
    client.move([1], "[Gmail]/Trash")
    assert client.search(["ALL"]) == []
    for folder in ("[Gmail]/All Mail", "Work", "[Gmail]/Starred"):
        client.select_folder(folder, readonly=True)
        assert client.search(["ALL"]) == [], folder
    client.select_folder("[Gmail]/Trash")
    assert client.search(["ALL"]) == [1]
    assert set(client.get_flags([1])[1]) == {b"\\Seen", b"\\Flagged"}  # flags survive the trip
    client.move([1], "INBOX")
    assert msg.location == "normal" and INBOX in msg.labels
    client.select_folder("INBOX")
    assert len(client.search(["ALL"])) == 1


def test_move_between_labels(imap_emu: ImapEmu) -> None:
    msg = imap_emu.deliver(imap_emu.make_mail("m"), ["Work"])
    client = imap_emu.client()
    client.select_folder("Work")
    client.move([1], "INBOX")
    assert msg.labels == {INBOX}
    client.select_folder("INBOX")
    client.move([1], "[Gmail]/Spam")
    assert msg.location == "spam"
    client.select_folder("[Gmail]/Spam")
    client.copy([1], "Work")  # COPY out of Spam restores it, with the label
    assert msg.location == "normal" and msg.labels == {INBOX, "Work"}  # type: ignore[comparison-overlap]


# --------------------------------------------------------------------------- APPEND


def test_append_appenduid_and_drafts(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    reply = client.append(
        "[Gmail]/Drafts",
        b"Subject: draft\r\n\r\nbody\r\n",
        flags=["\\Draft", "\\Seen"],
        msg_time=dt.datetime(2026, 1, 2),
    )
    drafts = imap_emu.alice.folder("[Gmail]/Drafts")
    assert drafts is not None
    assert reply == f"[APPENDUID {drafts.uidvalidity} 1] (Success)".encode()
    msg = next(iter(imap_emu.alice.messages.values()))
    assert msg.labels == {DRAFT} and msg.flags == {"\\Seen"}  # no \Draft flag, as Gmail
    client.select_folder("[Gmail]/All Mail")
    assert _labels(client, 1) == {"\\Draft"}
    assert client.get_flags([1])[1] == (b"\\Seen",)


def test_append_draft_flag_visible_knob(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.draft_flag_visible = True
    client = imap_emu.client()
    client.append("[Gmail]/Drafts", b"Subject: d\r\n\r\nx\r\n", flags=["\\Draft"])
    assert next(iter(imap_emu.alice.messages.values())).flags == {"\\Draft"}


def test_append_targets(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    client.append("INBOX", b"Subject: i\r\n\r\nx\r\n")
    client.append("Work", b"Subject: w\r\n\r\nx\r\n")
    client.append("[Gmail]/All Mail", b"Subject: a\r\n\r\nx\r\n")
    client.append("[Gmail]/Trash", b"Subject: t\r\n\r\nx\r\n")
    client.append("[Gmail]/Starred", b"Subject: s\r\n\r\nx\r\n")
    by_subject = {m.parsed.subject: m for m in imap_emu.alice.messages.values()}
    assert by_subject["i"].labels == {INBOX}
    assert by_subject["w"].labels == {"Work"}
    assert by_subject["a"].labels == frozenset()
    assert by_subject["t"].location == "trash"
    assert by_subject["s"].labels == {STARRED} and by_subject["s"].flags == {"\\Flagged"}
    with pytest.raises(IMAPClientError, match=r"\[TRYCREATE\]"):
        client.append("Nope", b"Subject: n\r\n\r\nx\r\n")


def test_append_dates_are_clamped(imap_emu: ImapEmu) -> None:
    conn = imap_emu.imaplib()
    now = imap_emu.store.now()
    conn.append("INBOX", None, '"01-Jan-1960 00:00:00 +0000"', b"Subject: old\r\n\r\nx\r\n")
    conn.append("INBOX", None, '"01-Jan-2999 00:00:00 +0000"', b"Subject: future\r\n\r\nx\r\n")
    conn.append("INBOX", None, '"01-Jan-2001 10:00:00 +0200"', b"Subject: fine\r\n\r\nx\r\n")
    by_subject = {m.parsed.subject: m for m in imap_emu.alice.messages.values()}
    assert abs((by_subject["old"].internaldate - now).total_seconds()) < 60
    assert abs((by_subject["future"].internaldate - now).total_seconds()) < 60
    assert by_subject["fine"].internaldate == dt.datetime(2001, 1, 1, 8, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize("imap_knobs", [Knobs(raw_search_lag_s=0.0, merge_similar_sent=True)], indirect=True)
def test_append_similar_sent_replaces_when_merging(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    mail = imap_emu.make_mail("sent once", message_id="<same@x>")
    client.append("[Gmail]/Sent Mail", mail)
    client.append("[Gmail]/Sent Mail", mail)
    sent = [m for m in imap_emu.alice.messages.values() if SENT in m.labels]
    assert len(sent) == 1
    other_date = imap_emu.make_mail("sent once", message_id="<same@x>", date="Tue, 06 Jan 2026 10:00:00 +0000")
    client.append("[Gmail]/Sent Mail", other_date)
    assert len([m for m in imap_emu.alice.messages.values() if SENT in m.labels]) == 2


def test_append_literal_plus_and_go_ahead(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    body = b"Subject: lit\r\n\r\nx\r\n"
    raw.send(b"x1 APPEND INBOX (\\Seen) {%d+}\r\n" % len(body) + body + b"\r\n")
    assert raw.until(b"x1")[-1] == b"x1 OK [APPENDUID 1 1] (Success)"
    raw.send(b"x2 APPEND INBOX {%d}\r\n" % len(body))
    assert raw.readline() == b"+ go ahead\r\n"
    raw.send(body + b"\r\n")
    assert raw.until(b"x2")[-1] == b"x2 OK [APPENDUID 1 2] (Success)"


def test_threading_by_headers(imap_emu: ImapEmu) -> None:
    first = imap_emu.deliver(imap_emu.make_mail("topic", message_id="<root@x>"))
    reply = imap_emu.deliver(imap_emu.make_mail("Re: topic", message_id="<r1@x>", in_reply_to="<root@x>"))
    other = imap_emu.deliver(imap_emu.make_mail("unrelated", message_id="<u@x>"))
    assert reply.thrid == first.msgid and other.thrid == other.msgid
    client = imap_emu.client()
    client.select_folder("INBOX", readonly=True)
    assert client.search(["X-GM-THRID", first.thrid]) == [1, 2]
    assert client.search(["X-GM-MSGID", reply.msgid]) == [2]
    assert reply.msgid > 2**53


def test_append_similar_sent_keeps_both_by_default(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    mail = imap_emu.make_mail("sent twice", message_id="<twice@x>")
    client.append("[Gmail]/Sent Mail", mail)
    client.append("[Gmail]/Sent Mail", mail)
    assert len([m for m in imap_emu.alice.messages.values() if SENT in m.labels]) == 2
