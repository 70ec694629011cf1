"""Knobs for behaviours Gmail does not document: the command-line limit, X-GM-RAW inside Trash,
and the search-index lag (which seeded, "old" mail does not have)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError

from gmail_emulator import GmailEmulator
from gmail_emulator.knobs import Knobs

if TYPE_CHECKING:
    from emulator.conftest import ImapEmu

LIMITED = Knobs(raw_search_lag_s=0.0, max_line_length=200)


@pytest.mark.parametrize("imap_knobs", [LIMITED], indirect=True)
def test_an_over_long_line_gets_bad_and_the_session_goes_on(imap_emu: ImapEmu) -> None:
    conn = imap_emu.raw()
    conn.command("EXAMINE INBOX")
    reply = conn.command("UID SEARCH " + " ".join(["ALL"] * 60))
    assert reply[-1].split(b" ", 1)[1].startswith(b"BAD Command line too long")
    assert conn.command("UID SEARCH ALL")[-1].split(b" ", 1)[1].startswith(b"OK")


@pytest.mark.parametrize("imap_knobs", [LIMITED], indirect=True)
def test_literal_data_does_not_count_towards_the_line_limit(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    big = imap_emu.make_mail("long body", body="x" * 5000)
    client.append("INBOX", big)
    assert len(imap_emu.alice.messages) == 1


@pytest.mark.parametrize("imap_knobs", [LIMITED], indirect=True)
def test_a_refused_line_ending_in_a_literal_gets_no_go_ahead(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    with pytest.raises(IMAPClientError):
        client.append("INBOX" + "/x" * 150, imap_emu.make_mail("refused"))
    assert imap_emu.alice.messages == {}
    client.append("INBOX", imap_emu.make_mail("accepted"))  # the connection stays in step
    assert len(imap_emu.alice.messages) == 1


def test_no_line_limit_by_default(imap_emu: ImapEmu) -> None:
    assert Knobs().max_line_length is None
    client = imap_emu.client()
    client.select_folder("INBOX", readonly=True)
    assert client.search(" ".join(["ALL"] * 5000)) == []


@pytest.mark.parametrize(
    ("imap_knobs", "found"),
    [
        (Knobs(raw_search_lag_s=0.0, raw_search_in_trash=True), True),
        (Knobs(raw_search_lag_s=0.0, raw_search_in_trash=False), False),
    ],
    indirect=["imap_knobs"],
    ids=["finds", "blind"],
)
def test_raw_search_inside_trash_follows_the_knob(imap_emu: ImapEmu, found: bool) -> None:
    imap_emu.deliver(imap_emu.make_mail("gone", message_id="<gone@x>"), labels=[], location="trash")
    client = imap_emu.client()
    client.select_folder("[Gmail]/Trash", readonly=True)
    assert bool(client.gmail_search('rfc822msgid:"gone@x"')) is found
    # Naming Trash always works, and so do the keys that do not use the index.
    assert client.gmail_search('in:trash rfc822msgid:"gone@x"')
    assert client.search(["HEADER", "Message-ID", "<gone@x>"])


def test_seeded_mail_is_indexed_at_once_and_new_mail_only_after_the_lag(emulator_session: GmailEmulator) -> None:
    address, password = "seed@example.cz", "seedseedseedseed"
    raw = "From: a@example.org\nSubject: Stará\nMessage-ID: <stara@example.org>\n\nText.\n"
    emulator_session.reset(
        {
            "knobs": {"raw_search_lag_s": 30.0},
            "accounts": [{"address": address, "password": password, "messages": [{"raw": raw}]}],
        }
    )
    emulator_session.deliver(address, raw.replace("stara@", "nova@").encode())
    with IMAPClient(
        "127.0.0.1", port=emulator_session.imap_port, ssl_context=emulator_session.client_ssl_context()
    ) as client:
        client.login(address, password)
        client.select_folder("[Gmail]/All Mail", readonly=True)
        assert len(client.gmail_search("rfc822msgid:stara@example.org")) == 1
        assert client.gmail_search("rfc822msgid:nova@example.org") == []
        assert len(client.search(["HEADER", "Message-ID", "<nova@example.org>"])) == 1
