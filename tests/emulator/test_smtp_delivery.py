"""The emulator's SMTP front delivers and files as Gmail does (smtp_delivery.py): a copy in Sent Mail,
local recipients' inboxes and threads, the outbox for the rest, and the delays and merging knobs."""

from __future__ import annotations

import time

import pytest

from gmail_emulator import GmailEmulator, Knobs
from support import wait_until
from support.smtp_sending import ALICE, ALICE_PW, BOB, BOB_PW, Port, imap, inbox, make_message, send, sent_copies


@pytest.mark.parametrize("port", ["ssl", "starttls"])
def test_send_is_filed_into_sent_mail(emu: GmailEmulator, port: Port) -> None:
    errors, reply = send(emu, make_message(subject=f"via {port}"), port=port)
    assert errors == {}
    assert reply.startswith("2.0.0 OK ") and reply.endswith(" - gsmtp")

    with imap(emu, ALICE, ALICE_PW) as client:
        client.select_folder("[Gmail]/Sent Mail", readonly=True)
        uids = client.search()
        assert len(uids) == 1
        data = client.fetch(uids, ["BODY.PEEK[HEADER.FIELDS (SUBJECT MESSAGE-ID)]"])
        header = data[uids[0]][b"BODY[HEADER.FIELDS (SUBJECT MESSAGE-ID)]"]
        assert f"Subject: via {port}".encode() in header
        assert b"<hello-1@example.com>" in header
        client.select_folder("[Gmail]/All Mail", readonly=True)
        all_uids = client.search()
        labels = client.fetch(all_uids, ["X-GM-LABELS"])[all_uids[0]][b"X-GM-LABELS"]
        assert b"\\Sent" in labels
        assert b"\\Inbox" not in labels

    outbox = emu.outbox()
    assert len(outbox) == 1
    assert outbox[0].port_kind == port
    assert outbox[0].account == ALICE
    assert outbox[0].envelope_from == ALICE
    assert outbox[0].recipients == [BOB]


def test_filing_delay_knob(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=1.0)
    started = time.monotonic()
    send(emu, make_message())
    assert sent_copies(emu) == [] and emu.smtp_pending() == 1
    assert len(inbox(emu, BOB)) == 1  # delivery has its own (zero) delay
    wait_until(lambda: len(sent_copies(emu)) == 1, timeout=6)
    assert time.monotonic() - started >= 0.9


def test_never_filed_knob(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=None)
    send(emu, make_message())
    assert emu.smtp_pending() == 0  # nothing is scheduled that could file it later
    assert sent_copies(emu) == []
    assert len(emu.outbox()) == 1
    assert len(inbox(emu, BOB)) == 1


def test_delivery_delay_knob(emu: GmailEmulator) -> None:
    emu.set_knobs(delivery_delay_s=1.0)
    send(emu, make_message())
    assert inbox(emu, BOB) == []
    wait_until(lambda: len(inbox(emu, BOB)) == 1, timeout=5)


def test_local_delivery_joins_the_thread(emu: GmailEmulator) -> None:
    send(emu, make_message(subject="Lunch?", msgid="<lunch-1@example.com>"))
    got = inbox(emu, BOB)
    assert [m.header_id for m in got] == ["lunch-1@example.com"]
    assert "\\Sent" not in got[0].labels

    reply = make_message(
        sender=BOB, to=ALICE, subject="Re: Lunch?", msgid="<lunch-2@example.com>", in_reply_to="<lunch-1@example.com>"
    )
    send(emu, reply, port="starttls", username=BOB, password=BOB_PW)

    with imap(emu, ALICE, ALICE_PW) as client:
        client.select_folder("INBOX", readonly=True)
        inbox_uids = client.search()
        assert len(inbox_uids) == 1
        reply_thrid = client.fetch(inbox_uids, ["X-GM-THRID"])[inbox_uids[0]][b"X-GM-THRID"]
        client.select_folder("[Gmail]/Sent Mail", readonly=True)
        sent_uids = client.search()
        original_thrid = client.fetch(sent_uids, ["X-GM-THRID"])[sent_uids[0]][b"X-GM-THRID"]
    assert reply_thrid == original_thrid

    bob_msgs = {m.header_id: m for m in emu.messages(BOB)}
    assert bob_msgs["lunch-1@example.com"].thrid == bob_msgs["lunch-2@example.com"].thrid
    assert "\\Sent" in bob_msgs["lunch-2@example.com"].labels


def test_sent_to_self_is_one_message_with_sent_and_inbox(emu: GmailEmulator) -> None:
    send(emu, make_message(to=ALICE, msgid="<note-to-self@example.com>"))
    msgs = emu.messages(ALICE)
    assert len(msgs) == 1
    assert {"\\Sent", "\\Inbox"} <= msgs[0].labels


def test_sent_to_self_with_filing_delay(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=1.0)
    send(emu, make_message(to=ALICE, msgid="<note-2@example.com>"))
    first = emu.messages(ALICE)
    assert len(first) == 1 and first[0].labels == frozenset({"\\Inbox"})
    wait_until(lambda: "\\Sent" in emu.messages(ALICE)[0].labels)
    assert len(emu.messages(ALICE)) == 1


def test_external_recipient_only_in_outbox(emu: GmailEmulator) -> None:
    send(emu, make_message(to="stranger@elsewhere.example"))
    assert emu.messages(BOB) == []
    assert len(sent_copies(emu)) == 1
    assert emu.outbox()[0].recipients == ["stranger@elsewhere.example"]


def test_bcc_style_envelope_recipients_are_delivered(emu: GmailEmulator) -> None:
    send(emu, make_message(to="stranger@elsewhere.example"), recipients=["stranger@elsewhere.example", BOB])
    assert len(inbox(emu, BOB)) == 1


def test_similar_message_already_in_sent_is_not_filed_again_when_merging(emu: GmailEmulator) -> None:
    emu.set_knobs(merge_similar_sent=True)
    msg = make_message(msgid="<dup-1@example.com>")
    emu.append(ALICE, msg.as_bytes(), labels=["\\Sent"], flags=["\\Seen"])
    send(emu, msg)
    assert len(sent_copies(emu)) == 1
    # A different Date is not "similar": that one is filed.
    del msg["Date"]
    msg["Date"] = "Tue, 03 Nov 2026 10:00:00 +0000"
    send(emu, msg)
    assert len(sent_copies(emu)) == 2


def test_similar_message_is_filed_again_by_default(emu: GmailEmulator) -> None:
    msg = make_message(msgid="<dup-2@example.com>")
    emu.append(ALICE, msg.as_bytes(), labels=["\\Sent"], flags=["\\Seen"])
    send(emu, msg)
    assert len(sent_copies(emu)) == 2  # no merging unless the knob asks for it
    assert emu.smtp_pending() == 0


def test_default_knobs_are_realistic_delays() -> None:
    knobs = Knobs()
    assert knobs.sent_filing_delay_s is not None and 2.0 <= knobs.sent_filing_delay_s <= 10.0
    assert 2.0 <= knobs.raw_search_lag_s <= 5.0
    assert knobs.merge_similar_sent is False and knobs.thread_by_subject is True


def test_outbox_keeps_exact_bytes_and_missing_headers_are_added(emu: GmailEmulator) -> None:
    raw = (
        b"From: alice@example.com\r\n"
        b"To: bob@example.com\r\n"
        b"Subject: =?utf-8?q?P=C5=99=C3=ADli=C5=A1?=\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n"
        b"\r\n"
        b".a line that starts with a dot\r\n"
        b"\xc5\xbelu\xc5\xa5ou\xc4\x8dk\xc3\xbd k\xc5\xaf\xc5\x88\r\n"
        b"..two dots\r\n"
    )
    send(emu, raw, sender=ALICE, recipients=[BOB])
    (entry,) = emu.outbox()
    assert entry.data == raw
    assert b"Message-ID" not in entry.data

    (stored,) = sent_copies(emu)
    assert stored.header_id is not None and stored.header_id.endswith("@mx.google.com")
    assert stored.raw.endswith(raw)
    head = stored.raw[: len(stored.raw) - len(raw)]
    assert head.startswith(b"Message-ID: <") and b"\r\nDate: " in head
    (delivered,) = inbox(emu, BOB)
    assert delivered.header_id == stored.header_id
    # The recipient's copy carries Gmail's delivery trace and verdict on top; the sender's does not.
    assert delivered.raw.endswith(stored.raw)
    trace = delivered.raw[: len(delivered.raw) - len(stored.raw)]
    names = [line.split(b":", 1)[0] for line in trace.split(b"\r\n") if line and line[:1] not in b" \t"]
    assert names == [
        b"Received",
        b"ARC-Authentication-Results",
        b"Return-Path",
        b"Received",
        b"Received-SPF",
        b"Authentication-Results",
    ]
    assert b"by mx.google.com with ESMTPS" in trace and b"Authentication-Results: mx.google.com;" in trace
    assert b"Authentication-Results" not in stored.raw
