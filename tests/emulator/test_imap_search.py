"""[UID] SEARCH through the IMAP front: standard keys, X-GM-RAW (incl. CHARSET UTF-8 literals), ids, lag."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pytest
from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError

from gmail_emulator import Knobs

if TYPE_CHECKING:
    from emulator.conftest import ImapEmu


@pytest.fixture
def mailbox(imap_emu: ImapEmu) -> ImapEmu:
    emu = imap_emu
    emu.deliver(emu.make_mail("Weekly report", "Numbers are up.", message_id="<w@x>"), ["\\Inbox", "Work"], ["\\Seen"])
    emu.deliver(emu.make_mail("Café résumé", "Bonjour", sender="Bob <bob@example.org>"), ["\\Inbox"])
    emu.deliver(
        emu.make_mail("Invoice", "Please pay", attachment=("invoice.pdf", b"%PDF")),
        ["\\Inbox", "\\Important"],
        ["\\Flagged"],
    )
    emu.deliver(
        emu.make_mail("Old news", "archived"), [], ["\\Seen"], internaldate=dt.datetime(2020, 5, 1, tzinfo=dt.UTC)
    )
    emu.deliver(emu.make_mail("Trashed report"), ["\\Inbox"], location="trash")
    return emu


def test_gmail_search_with_utf8_literal(mailbox: ImapEmu) -> None:
    client = mailbox.client()
    client.select_folder("INBOX", readonly=True)
    assert client.gmail_search("subject:café") == [2]
    assert client.gmail_search("résumé") == [2]
    search_lines = [r.line for r in mailbox.observer.commands() if r.name == "UID SEARCH"]
    assert "CHARSET UTF-8 X-GM-RAW {" in search_lines[0]


def test_raw_operators(mailbox: ImapEmu) -> None:
    client = mailbox.client()
    client.select_folder("INBOX", readonly=True)
    assert client.gmail_search('subject:"weekly report"') == [1]
    assert client.gmail_search("from:bob@example.org") == [2]
    assert client.gmail_search("from:example.org") == [2]
    assert client.gmail_search("is:unread") == [2, 3]
    assert client.gmail_search("is:starred") == [3]
    assert client.gmail_search("is:important") == [3]
    assert client.gmail_search("has:attachment") == [3]
    assert client.gmail_search("filename:invoice.pdf") == [3]
    assert client.gmail_search("label:Work") == [1]
    assert client.gmail_search("-label:Work") == [2, 3]
    assert client.gmail_search("report") == [1]  # the trashed "report" is not in INBOX
    assert client.gmail_search("rfc822msgid:w@x") == [1]
    assert client.gmail_search("weekly OR invoice") == [1, 3]
    assert client.gmail_search("newer_than:1d") == [1, 2, 3]
    client.select_folder("[Gmail]/All Mail", readonly=True)
    assert client.gmail_search("older_than:1y") == [4]
    assert client.gmail_search("before:2021/01/01") == [4]
    assert client.gmail_search("in:inbox is:read") == [1]
    client.select_folder("[Gmail]/Trash", readonly=True)
    assert client.gmail_search("report") == [1]


def test_raw_search_seq_numbers_and_unparseable(mailbox: ImapEmu) -> None:
    raw = mailbox.raw()
    raw.command("EXAMINE INBOX")
    assert raw.command('SEARCH X-GM-RAW "is:unread"') == [b"* SEARCH 2 3", b"r3 OK SEARCH completed (Success)"]
    assert raw.command('UID SEARCH X-GM-RAW "nothing-matches-this"') == [
        b"* SEARCH",
        b"r4 OK SEARCH completed (Success)",
    ]
    assert raw.command('UID SEARCH X-GM-RAW "subject:(unbalanced"') == [b"r5 BAD Could not parse command"]
    assert raw.command("UID SEARCH CHARSET KOI8-R ALL")[-1].startswith(b"r6 NO [BADCHARSET")
    assert raw.command("UID SEARCH RETURN (MIN MAX COUNT) ALL") == [
        b'* ESEARCH (TAG "r7") UID MIN 1 MAX 3 COUNT 3',
        b"r7 OK SEARCH completed (Success)",
    ]


def test_standard_search_keys(mailbox: ImapEmu) -> None:
    client = mailbox.client()
    client.select_folder("[Gmail]/All Mail", readonly=True)
    assert client.search(["UNSEEN"]) == [2, 3]
    assert client.search(["SEEN"]) == [1, 4]
    assert client.search(["FLAGGED"]) == [3]
    assert client.search(["SUBJECT", "weekly"]) == [1]
    assert client.search(["FROM", "bob"]) == [2]
    assert client.search(["X-GM-LABELS", "\\Inbox"]) == [1, 2, 3]
    assert client.search(["X-GM-LABELS", "work"]) == [1]
    assert client.search(["NOT", "X-GM-LABELS", "Work", "SINCE", dt.date(2025, 1, 1)]) == [2, 3]
    assert client.search(["BEFORE", dt.date(2021, 1, 1)]) == [4]
    assert client.search(["OR", "SUBJECT", "invoice", "SUBJECT", "news"]) == [3, 4]
    assert client.search(["UID", "2:3"]) == [2, 3]
    assert client.search(["SUBJECT", "café"], charset="UTF-8") == [2]  # a literal after CHARSET
    with pytest.raises(IMAPClientError):
        client.search(["FROBNICATE"])


def test_search_system_label_must_be_quoted(mailbox: ImapEmu) -> None:
    raw = mailbox.raw()
    raw.command('EXAMINE "[Gmail]/All Mail"')
    assert raw.command("UID SEARCH X-GM-LABELS \\Inbox") == [b"r3 BAD Could not parse command"]
    assert raw.command('UID SEARCH X-GM-LABELS "\\\\Inbox"')[0] == b"* SEARCH 1 2 3"


def test_msgid_and_thrid_search(mailbox: ImapEmu) -> None:
    msgs = sorted(mailbox.alice.messages.values(), key=lambda m: m.arrival)
    target = msgs[2]
    assert target.msgid > 2**53
    client = mailbox.client()
    client.select_folder("INBOX", readonly=True)
    assert client.search(["X-GM-MSGID", target.msgid]) == [3]
    assert client.search(["X-GM-THRID", target.thrid]) == [3]
    data = client.fetch([3], ["X-GM-MSGID"])
    assert data[3][b"X-GM-MSGID"] == target.msgid


def test_search_finds_mail_delivered_after_select(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    client.select_folder("INBOX")
    assert client.gmail_search("subject:late") == []
    imap_emu.deliver(imap_emu.make_mail("late arrival"))
    assert client.gmail_search("subject:late") == [1]


def test_search_index_lag(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.raw_search_lag_s = 1.5
    imap_emu.deliver(imap_emu.make_mail("fresh mail"))
    client = imap_emu.client()
    client.select_folder("INBOX")
    assert client.gmail_search("subject:fresh") == []  # the index has not seen it yet
    assert client.search(["SUBJECT", "fresh"]) == [1]  # standard SEARCH is immediate
    assert client.fetch([1], ["FLAGS"])[1][b"FLAGS"] == ()
    imap_emu.advance(2)
    assert client.gmail_search("subject:fresh") == [1]
    client.add_gmail_labels([1], ["Work"])
    assert client.gmail_search("label:Work") == []  # stale
    assert client.get_gmail_labels([1])[1] == ["Work"]  # FETCH is always fresh
    imap_emu.advance(2)
    assert client.gmail_search("label:Work") == [1]


def test_label_search_lag_knob(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.raw_search_lag_s = 1.5
    imap_emu.deliver(imap_emu.make_mail("labelled"))
    imap_emu.advance(2)
    client = imap_emu.client()
    client.select_folder("INBOX")
    client.add_gmail_labels([1], ["Done"])
    assert client.search(["X-GM-LABELS", "Done"]) == []  # answered from the index: not there yet
    imap_emu.store.knobs.label_search_lags = False
    assert client.search(["X-GM-LABELS", "Done"]) == [1]  # answered from the message itself
    imap_emu.store.knobs.label_search_lags = True
    imap_emu.advance(2)
    assert client.search(["X-GM-LABELS", "Done"]) == [1]


def _changed_after_arrival(emu: ImapEmu) -> IMAPClient:
    """Three messages whose read, star, inbox and label state another client changes after arrival:
    1 arrives unread in the inbox, then is read and archived; 2 arrives read, starred, labelled Work,
    then loses the star and the label and gains Été; 3 arrives unread and stays so, then is starred."""
    emu.deliver(emu.make_mail("one"), ["\\Inbox"])
    emu.deliver(emu.make_mail("two"), ["\\Inbox", "Work"], ["\\Seen", "\\Flagged"])
    emu.deliver(emu.make_mail("three"), ["\\Inbox"])
    client = emu.client()
    client.select_folder("[Gmail]/All Mail")
    client.add_flags([1], [b"\\Seen"])
    client.remove_gmail_labels([1], ["\\Inbox"])
    client.remove_flags([2], [b"\\Flagged"])
    client.remove_gmail_labels([2], ["Work"])
    client.add_gmail_labels([2], ["Été"])
    client.add_flags([3], [b"\\Flagged"])
    return client


@pytest.mark.parametrize("imap_knobs", [Knobs(raw_search_lag_s=0.0, raw_search_stale_state=True)], indirect=True)
def test_stale_state_knob_answers_from_the_state_on_arrival(imap_emu: ImapEmu) -> None:
    client = _changed_after_arrival(imap_emu)
    # FETCH and the standard keys are live
    assert client.search(["UNSEEN"]) == [3] and client.search(["FLAGGED"]) == [3]
    assert client.get_gmail_labels([1, 2]) == {1: [], 2: ["\\Inbox", "Été"]}
    # X-GM-RAW answers from the state each message arrived with
    assert client.gmail_search("is:unread") == [1, 3]
    assert client.gmail_search("IS:UNREAD") == [1, 3]
    assert client.gmail_search("is:read") == [2]
    assert client.gmail_search("-is:unread") == [2]
    assert client.gmail_search("NOT is:unread") == [2]
    assert client.gmail_search("is:starred") == [2]
    assert client.gmail_search("-is:starred") == [1, 3]
    assert client.gmail_search("in:inbox") == [1, 2, 3]
    assert client.gmail_search("-in:inbox") == []
    assert client.gmail_search("label:work") == [2]
    assert client.gmail_search("-label:Work") == [1, 3]
    assert client.gmail_search("label:été") == []
    # what the index knows besides state is still current: words, and mail that arrives later
    assert client.gmail_search("subject:two is:read") == [2]
    imap_emu.deliver(imap_emu.make_mail("four"), ["\\Inbox", "Work"], ["\\Seen"])
    assert client.gmail_search("label:Work") == [2, 4]
    # SEARCH X-GM-LABELS reads the same index while label_search_lags is on
    assert client.search(["X-GM-LABELS", "Work"]) == [2, 4]
    imap_emu.store.knobs.label_search_lags = False
    assert client.search(["X-GM-LABELS", "Work"]) == [4]
    # switched off, the index has caught up with every change
    imap_emu.store.knobs.raw_search_stale_state = False
    assert client.gmail_search("is:unread") == [3]
    assert client.gmail_search("is:starred") == [3]
    assert client.gmail_search("in:inbox") == [2, 3, 4]
    assert client.gmail_search("label:Work") == [4]
    assert client.gmail_search("label:été") == [2]


def test_stale_state_knob_is_off_by_default(imap_emu: ImapEmu) -> None:
    assert Knobs().raw_search_stale_state is False
    client = _changed_after_arrival(imap_emu)
    assert client.gmail_search("is:unread") == [3]
    assert client.gmail_search("-is:starred") == [1, 2]
    assert client.gmail_search("-in:inbox") == [1]
    assert client.gmail_search("label:Work") == []


@pytest.mark.parametrize(
    ("zone", "since_30", "on_30", "before_30"),
    [
        # Messages at 29 Nov 23:30Z, 30 Nov 05:00Z, 30 Nov 09:00Z and 30 Nov 20:00Z.
        ("America/Los_Angeles", [3, 4], [3, 4], [1, 2]),  # 30 Nov starts at 08:00Z (PST)
        ("UTC", [2, 3, 4], [2, 3, 4], [1]),
        ("Europe/Prague", [1, 2, 3, 4], [1, 2, 3, 4], []),  # 30 Nov starts at 29 Nov 23:00Z
        ("Pacific/Kiritimati", [1, 2, 3, 4], [1, 2, 3], []),  # 30 Nov is 29 Nov 10:00Z to 30 Nov 10:00Z
    ],
)
def test_date_keys_follow_the_search_timezone(
    imap_emu: ImapEmu, zone: str, since_30: list[int], on_30: list[int], before_30: list[int]
) -> None:
    imap_emu.store.knobs.update(date_search_timezone=zone)
    for at in (
        dt.datetime(2026, 11, 29, 23, 30, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 30, 5, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 30, 9, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 30, 20, tzinfo=dt.UTC),
    ):
        imap_emu.deliver(imap_emu.make_mail(f"at {at:%H:%M}"), ["\\Inbox"], internaldate=at)
    client = imap_emu.client()
    client.select_folder("INBOX", readonly=True)
    day = dt.date(2026, 11, 30)
    assert client.search(["SINCE", day]) == since_30
    assert client.search(["ON", day]) == on_30
    assert client.search(["BEFORE", day]) == before_30


def test_the_search_timezone_is_los_angeles_by_default_and_checked(imap_emu: ImapEmu) -> None:
    from gmail_emulator import Knobs

    assert Knobs().date_search_timezone == "America/Los_Angeles"
    with pytest.raises(ValueError, match="unknown IANA timezone"):
        imap_emu.store.knobs.update(date_search_timezone="Europe/Praha")
    with pytest.raises(ValueError, match="unknown IANA timezone"):
        Knobs(date_search_timezone="Mars/Olympus")
