"""The server's own files write a moment one way: UTC to the second, as the tool results show it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE, SendJournal
from mcp_multi_gmail.mail.subscriptions.unsubscribed import LEFT_FILE, LeftLists
from mcp_multi_gmail.statefile import parse_utc_stamp, utc_stamp

PRAGUE_WINTER = timezone(timedelta(hours=1))
MOMENT = datetime(2026, 12, 6, 11, 59, 22, 987654, tzinfo=PRAGUE_WINTER)
STAMP = "2026-12-06T10:59:22Z"


def test_a_moment_is_written_in_utc_to_the_second_and_read_back() -> None:
    assert utc_stamp(MOMENT) == STAMP
    assert parse_utc_stamp(STAMP) == datetime(2026, 12, 6, 10, 59, 22, tzinfo=UTC)
    assert parse_utc_stamp("2026-12-06T11:59:22+01:00") == parse_utc_stamp(STAMP)


def test_the_send_journal_and_the_lists_left_stamp_alike(tmp_path: Path) -> None:
    SendJournal(tmp_path).record("osobni", "<a@example.org>", now=MOMENT)
    LeftLists(tmp_path).record("osobni", "list.example.org", "mailto:leave@example.org", "mailto", None, now=MOMENT)
    journal = json.loads((tmp_path / JOURNAL_FILE).read_text(encoding="utf-8"))
    left = json.loads((tmp_path / LEFT_FILE).read_text(encoding="utf-8"))
    assert journal["sends"][0]["handed_over"] == STAMP and left["left"][0]["at"] == STAMP
    found = SendJournal(tmp_path).find("osobni", "<a@example.org>", now=MOMENT)
    assert found is not None and found.handed_over == parse_utc_stamp(STAMP)
    assert LeftLists(tmp_path).of_account("osobni")["list.example.org"].at == STAMP
