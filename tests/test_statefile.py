"""The server's own files (the send journal, the undo records, the lists left) share one skeleton: a
moment is written one way, UTC to the second as the tool results show it; a damaged file is kept
and reported, and a file that cannot be written is reported, with the same code and the same kind
of message whichever store it is."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE, SendJournal
from mcp_multi_gmail.mail.subscriptions.unsubscribed import LEFT_FILE, Left, LeftLists, now_iso
from mcp_multi_gmail.mail.undo.records import Records
from mcp_multi_gmail.statefile import STORE_ERROR, parse_utc_stamp, utc_stamp

PRAGUE_WINTER = timezone(timedelta(hours=1))
MOMENT = datetime(2026, 12, 6, 11, 59, 22, 987654, tzinfo=PRAGUE_WINTER)
STAMP = "2026-12-06T10:59:22Z"
LEFT = Left(
    "osobni", "list:news.example.org", "mailto:leave@example.org", "mailto", now_iso(MOMENT), None, "example.org"
)


def test_a_moment_is_written_in_utc_to_the_second_and_read_back() -> None:
    assert utc_stamp(MOMENT) == STAMP
    assert parse_utc_stamp(STAMP) == datetime(2026, 12, 6, 10, 59, 22, tzinfo=UTC)
    assert parse_utc_stamp("2026-12-06T11:59:22+01:00") == parse_utc_stamp(STAMP)


def test_the_send_journal_and_the_lists_left_stamp_alike(tmp_path: Path) -> None:
    SendJournal(tmp_path).record("osobni", "<a@example.org>", now=MOMENT)
    LeftLists(tmp_path).claim(LEFT, force=False)
    journal = json.loads((tmp_path / JOURNAL_FILE).read_text(encoding="utf-8"))
    left = json.loads((tmp_path / LEFT_FILE).read_text(encoding="utf-8"))
    assert journal["sends"][0]["handed_over"] == STAMP and left["left"][0]["at"] == STAMP
    found = SendJournal(tmp_path).find("osobni", "<a@example.org>", now=MOMENT)
    assert found is not None and found.handed_over == parse_utc_stamp(STAMP)
    assert [left.at for left in LeftLists(tmp_path).of_account("osobni")] == [STAMP]


TOKEN = "undo_abc"
# Per store: (its file in a state folder, reading it, writing to it).
STORES: dict[str, tuple[Callable[[Path], Path], Callable[[Path], object], Callable[[Path], object]]] = {
    "send journal": (
        lambda folder: folder / JOURNAL_FILE,
        lambda folder: SendJournal(folder).find("osobni", "<a@example.org>"),
        lambda folder: SendJournal(folder).record("osobni", "<a@example.org>"),
    ),
    "lists left": (
        lambda folder: folder / LEFT_FILE,
        lambda folder: LeftLists(folder).find("osobni", "list:news.example.org", "news.example"),
        lambda folder: LeftLists(folder).claim(LEFT, force=False),
    ),
    "undo records": (
        lambda folder: Records(folder).path(TOKEN),
        lambda folder: Records(folder).read(TOKEN, "undo"),
        lambda folder: Records(folder).create(TOKEN, {"account": "osobni"}, "undo"),
    ),
}


@pytest.mark.parametrize("store", list(STORES))
def test_a_damaged_file_is_kept_and_reported_alike_in_every_store(store: str, tmp_path: Path) -> None:
    file_of, read, _write = STORES[store]
    path = file_of(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"version": 1, "acc', encoding="utf-8")
    with pytest.raises(MailError) as failed:
        read(tmp_path)
    assert failed.value.code == STORE_ERROR
    message = failed.value.message
    assert f"{path} is damaged (not a file this server wrote)" in message, message
    assert "The file is kept as it is, never emptied automatically. Ask the user to look at it:" in message
    assert path.read_text(encoding="utf-8") == '{"version": 1, "acc'


@pytest.mark.parametrize("store", list(STORES))
def test_a_file_that_cannot_be_written_is_reported_alike_in_every_store(store: str, tmp_path: Path) -> None:
    _file_of, _read, write = STORES[store]
    blocked = tmp_path / "state"
    blocked.write_text("a file where the state folder should be", encoding="utf-8")
    with pytest.raises(MailError) as failed:
        write(blocked)
    assert failed.value.code == STORE_ERROR
    message = failed.value.message
    assert "cannot be written in " in message and str(blocked) in message, message
    assert "Ask the user to make that folder writable for the server (or free disk space), then try again." in message
