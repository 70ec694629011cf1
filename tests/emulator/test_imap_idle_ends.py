"""How one long IDLE ends on Gmail, as the emulator's knobs model it: a socket closed with no BYE
(`idle_drop_after_s`, default 600), `* BYE Session expired…` (`idle_bye_after_s`), or a connection
that goes silent with its socket still open (`idle_blackhole_after_s`)."""

from __future__ import annotations

import select
import time
from typing import TYPE_CHECKING

import pytest

from gmail_emulator.knobs import Knobs
from support import wait_until

if TYPE_CHECKING:
    from emulator.conftest import ImapEmu, RawImap


def idling(emu: ImapEmu) -> RawImap:
    raw = emu.raw()
    raw.command("SELECT INBOX")
    raw.send(b"i1 IDLE\r\n")
    assert raw.readline() == b"+ idling\r\n"
    return raw


def test_gmail_defaults_drop_an_idle_after_ten_minutes_and_nothing_else() -> None:
    knobs = Knobs()
    assert (knobs.idle_drop_after_s, knobs.idle_bye_after_s, knobs.idle_blackhole_after_s) == (600.0, None, None)


def test_an_idle_shorter_than_the_limit_ends_normally_and_the_next_one_starts_afresh(imap_emu: ImapEmu) -> None:
    imap_emu.call(imap_emu.store.knobs.update, idle_drop_after_s=0.6)
    raw = imap_emu.raw()
    raw.command("SELECT INBOX")
    began = time.monotonic()
    while time.monotonic() - began < 1.5:  # three times the limit in all, each IDLE well under it
        raw.send(b"i1 IDLE\r\n")
        assert raw.readline() == b"+ idling\r\n"
        assert select.select([raw.sock], [], [], 0.2)[0] == []  # nothing while idling, and no drop
        raw.send(b"DONE\r\n")
        assert raw.until(b"i1")[-1] == b"i1 OK IDLE terminated (Success)"
    assert raw.command("NOOP")[-1].endswith(b"OK Success")


@pytest.mark.parametrize("imap_knobs", [Knobs(raw_search_lag_s=0.0, idle_drop_after_s=0.3)], indirect=True)
def test_drop_closes_the_socket_without_a_bye(imap_emu: ImapEmu) -> None:
    raw = idling(imap_emu)
    began = time.monotonic()
    assert raw.readline() == b""  # end of stream, no BYE line first
    assert 0.25 <= time.monotonic() - began < 5


@pytest.mark.parametrize("imap_knobs", [Knobs(raw_search_lag_s=0.0, idle_bye_after_s=0.3)], indirect=True)
def test_bye_says_the_session_expired_and_closes(imap_emu: ImapEmu) -> None:
    raw = idling(imap_emu)
    assert raw.readline() == b"* BYE Session expired, please login again.\r\n"
    assert raw.readline() == b""


@pytest.mark.parametrize("imap_knobs", [Knobs(raw_search_lag_s=0.0, idle_blackhole_after_s=0.0)], indirect=True)
def test_blackhole_answers_nothing_but_keeps_the_socket_open(imap_emu: ImapEmu) -> None:
    raw = idling(imap_emu)
    imap_emu.deliver(imap_emu.make_mail("Nová pošta"))
    raw.send(b"DONE\r\n")
    raw.sock.settimeout(1.0)
    with pytest.raises(TimeoutError):  # no EXISTS, no tagged answer, and no end of stream either
        raw.readline()
    # The server did get DONE, and stayed silent.
    wait_until(
        lambda: any(e.direction == "c" and e.data == b"DONE\r\n" for e in imap_emu.observer.wire_log()),
        5,
        "the emulator to log the DONE it leaves unanswered",
    )


@pytest.mark.parametrize(
    "imap_knobs", [Knobs(raw_search_lag_s=0.0, idle_drop_after_s=5.0, idle_bye_after_s=0.2)], indirect=True
)
def test_the_earliest_end_wins(imap_emu: ImapEmu) -> None:
    raw = idling(imap_emu)
    assert raw.readline().startswith(b"* BYE Session expired")
