"""The pass's window is the same whatever timezone Gmail reads SEARCH SINCE in.

Gmail does not evaluate SINCE in UTC; the emulator's `date_search_timezone` knob plays each
plausible zone, and a boundary a few hours into a UTC day must always give the same messages:
everything from the start of that UTC day (or an hour before the boundary, if earlier) on.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.mail.work import window
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.watch.check import imap_check

pytestmark = pytest.mark.anyio

OSOBNI = "osobni@example.cz"
ZONES = ["America/Los_Angeles", "UTC", "Europe/Prague", "Pacific/Kiritimati"]
# Yesterday, 06:00 UTC: for a Prague user that is 7 in the morning, and in Los Angeles still the
# evening before, so a SINCE read in Pacific time would start two hours after the boundary.
DAY_START = datetime.combine(datetime.now(UTC).date() - timedelta(days=1), time.min, UTC)
BOUNDARY = DAY_START + timedelta(hours=6)


def message(mid: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Petr <petr@example.org>"
    msg["To"] = OSOBNI
    msg["Subject"] = f"Zpráva {mid}"
    msg["Message-ID"] = f"<{mid}@example.org>"
    msg.set_content("Text.")
    return msg


def deliver_at(emulator: GmailEmulator, mid: str, at: datetime) -> None:
    emulator.deliver(OSOBNI, message(mid), internaldate=at)


# (message, INTERNALDATE relative to the boundary's UTC day start, inside the window?)
AROUND = [
    ("day-before-13h", timedelta(hours=-11), False),  # midnight of that day in Kiritimati (UTC+14)
    ("day-before-23h", timedelta(hours=-1), False),  # midnight in Prague (UTC+1 in winter)
    ("just-before-midnight", timedelta(minutes=-10), False),
    ("just-after-midnight", timedelta(minutes=10), True),
    ("before-boundary", timedelta(hours=3), True),  # same UTC day: the window is by day
    ("after-boundary", timedelta(hours=7), True),  # lost for good if SINCE meant the day in Pacific time
    ("pacific-midnight", timedelta(hours=8, minutes=30), True),
    ("evening", timedelta(hours=20), True),
]


@pytest.fixture
def osobni(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    for mid, offset, _inside in AROUND:
        deliver_at(emulator, mid, DAY_START + offset)
    path = write_config([{"name": "o", "address": OSOBNI, "password": "osobniheslohesla", "processed_label": "Hotovo"}])
    return make_runtime(path)


def unprocessed(data: dict[str, Any]) -> set[str]:
    return {m["message_id"].split("@")[0] for t in data["threads"] for m in t["unprocessed"]}


@pytest.mark.parametrize("zone", ZONES)
async def test_the_window_holds_the_same_messages_in_every_search_zone(
    emulator: GmailEmulator, osobni: Runtime, call: Call, zone: str
) -> None:
    emulator.set_knobs(date_search_timezone=zone)
    data = await ok(call, osobni, "mg_next_pass", account="o", since=BOUNDARY.isoformat(), max_threads=100)
    expected = {mid for mid, _offset, inside in AROUND if inside}
    assert unprocessed(data) == expected
    assert data["total_threads"] == len(expected) and data["window_clear"] is False
    oldest = datetime.fromisoformat(data["oldest_unprocessed_at"].replace("Z", "+00:00"))
    assert oldest == DAY_START + timedelta(minutes=10)

    # Labelling everything clears the window in that zone too, and the watcher then sees nothing.
    ids = [m["message_id"] for t in data["threads"] for m in t["unprocessed"]]
    done = await ok(
        call, osobni, "mg_label_message", account="o", message_ids=ids, label="Hotovo", since=BOUNDARY.isoformat()
    )
    assert done["window"]["window_clear"] is True
    check = imap_check(osobni.config, osobni.endpoint)
    assert check("o", BOUNDARY) == set()
    deliver_at(emulator, "late-arrival", DAY_START + timedelta(hours=7, minutes=5))
    assert check("o", BOUNDARY) == {"late-arrival@example.org"}


@pytest.mark.parametrize("zone", ZONES)
async def test_a_boundary_just_after_midnight_keeps_the_hour_before_it(
    emulator: GmailEmulator, osobni: Runtime, call: Call, zone: str
) -> None:
    """A message missing from SEARCH for a moment at 23:55 would otherwise fall out of every window."""
    emulator.set_knobs(date_search_timezone=zone)
    boundary = DAY_START + timedelta(minutes=30)
    data = await ok(call, osobni, "mg_next_pass", account="o", since=boundary.isoformat(), max_threads=100)
    # The lower edge is 23:30 the day before: 23:50 is in, 23:00 is not.
    expected = {mid for mid, _offset, inside in AROUND if inside} | {"just-before-midnight"}
    assert unprocessed(data) == expected


async def test_the_5000_limit_counts_only_the_real_window(
    emulator: GmailEmulator, osobni: Runtime, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extra day the search asks for does not count towards the limit (here scaled down)."""
    monkeypatch.setattr(window, "MAX_WINDOW", 5)
    monkeypatch.setattr(window, "SEARCH_HEADROOM", 8)
    for n in range(4):  # the day before: found by the search, outside the window
        deliver_at(emulator, f"extra-{n}", DAY_START - timedelta(hours=2, minutes=n))
    data = await ok(call, osobni, "mg_next_pass", account="o", since=BOUNDARY.isoformat(), max_threads=100)
    assert data["total_threads"] == 5 and not any(mid.startswith("extra") for mid in unprocessed(data))

    deliver_at(emulator, "sixth", DAY_START + timedelta(hours=9))
    body = await error(call, osobni, "mg_next_pass", account="o", since=BOUNDARY.isoformat())
    assert body["code"] == "query_too_broad" and "holds 6 messages" in body["message"]

    # The search (the day before from 08:00 UTC in Pacific time) now answers 17 UIDs: more than
    # limit plus headroom, refused without reading them.
    for n in range(4, 8):
        deliver_at(emulator, f"extra-{n}", DAY_START - timedelta(hours=3, minutes=n))
    body = await error(call, osobni, "mg_next_pass", account="o", since=BOUNDARY.isoformat())
    assert body["code"] == "query_too_broad" and "well over 5 messages" in body["message"]
