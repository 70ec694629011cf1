"""mg_sweep's preview in small mailboxes: the sample of threads it shows the user, how it opens the
mailbox, how it looks up whole threads, and the sweep_limit counted by messages or by threads.

The large mailboxes (1 200 threads and more) are in test_sweep.py.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest
from sweep_box import ACCOUNTING, BOX, START, Spec, accounting_box, config_entry, load, message_id
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.imap import Fetched, ImapSession
from mcp_multi_gmail.mail.bulk import sweep
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

QUERY = "from:banka.example"
BANK_NAME = "Banka Lipová"


def _thread(emulator: GmailEmulator, tag: str) -> str:
    info = emulator.message(BOX, message_id(tag))
    assert info is not None
    return str(info.thrid)


async def test_the_preview_sample_shows_each_thread_once_by_its_newest_message_newest_first(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    # Arrival (UID) order is not date order: the sample goes by date. Thread "b" has an answer,
    # the newest message of all, which stands for its thread.
    hour = timedelta(hours=1)
    load(
        emulator,
        [
            Spec("a", "Výpis A", "vypisy@banka.example", ("\\Inbox",), when=START + 2 * hour),
            Spec("b", "Výpis B", "vypisy@banka.example", ("\\Inbox",), when=START),
            Spec("c", "Výpis C", "vypisy@banka.example", ("\\Inbox",), when=START + hour),
            Spec("b-re", "Re: Výpis B", "podpora@banka.example", ("\\Inbox",), reply_to="b", when=START + 3 * hour),
        ],
        labels=(),
    )
    runtime = make_runtime(write_config([config_entry()]))
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    assert (preview["matched_messages"], preview["matched_threads"]) == (4, 3)
    assert preview["sample"] == [
        {
            "thread_id": _thread(emulator, "b"),
            "from": {"name": BANK_NAME, "address": "podpora@banka.example"},
            "subject": "Re: Výpis B",
            "received_at": "2026-03-01T11:00:00Z",
            "matched_messages": 2,
        },
        {
            "thread_id": _thread(emulator, "a"),
            "from": {"name": BANK_NAME, "address": "vypisy@banka.example"},
            "subject": "Výpis A",
            "received_at": "2026-03-01T10:00:00Z",
            "matched_messages": 1,
        },
        {
            "thread_id": _thread(emulator, "c"),
            "from": {"name": BANK_NAME, "address": "vypisy@banka.example"},
            "subject": "Výpis C",
            "received_at": "2026-03-01T09:00:00Z",
            "matched_messages": 1,
        },
    ]


class _Answers:
    """A session whose answers lack what Gmail may leave out: message 2 has no INTERNALDATE, and
    message 4 was deleted for good between the search and the FETCH of the envelopes."""

    def fetch(self, uids: list[int], items: list[str]) -> dict[int, Fetched]:
        return {uid: Fetched(uid=uid) for uid in uids if uid != 4}


def test_the_sample_takes_a_message_without_its_date_or_envelope() -> None:
    # A message without INTERNALDATE counts as of the epoch, as message 3 is: the later UID first.
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    state = {
        1: Fetched(uid=1, thread_id=10, internaldate=datetime(2026, 3, 1, tzinfo=UTC)),
        2: Fetched(uid=2, thread_id=20),
        3: Fetched(uid=3, thread_id=30, internaldate=epoch),
        4: Fetched(uid=4, thread_id=40, internaldate=datetime(2026, 3, 2, tzinfo=UTC)),
    }
    sample = sweep._sample(cast(ImapSession, _Answers()), state, [1, 2, 3, 4])
    assert [(s.thread_id, s.from_, s.subject, s.received_at) for s in sample] == [
        ("40", None, None, "2026-03-02T00:00:00Z"),
        ("10", None, None, "2026-03-01T00:00:00Z"),
        ("30", None, None, "1970-01-01T00:00:00Z"),
        ("20", None, None, None),
    ]


async def test_a_preview_opens_all_mail_read_only(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    # docs/en/security.md: reading opens mailboxes read-only; only the apply opens one read-write.
    runtime = box_runtime(accounting_box(threads=3, replies=0).specs)
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    opened = [c.name for c in emulator.commands(BOX) if c.name in ("SELECT", "EXAMINE")]
    assert opened and set(opened) == {"EXAMINE"}, opened
    emulator.reset_counters()
    token = preview["confirm_token"]
    await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True}, confirm_token=token)
    assert "SELECT" in [c.name for c in emulator.commands(BOX)]


async def test_a_classification_looks_up_its_threads_a_bounded_number_at_a_time(
    emulator: GmailEmulator,
    box_runtime: Callable[..., Runtime],
    call: Call,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each thread search is one line of X-GM-THRID terms: more threads than fit go in several.
    monkeypatch.setattr(sweep, "THREADS_PER_SEARCH", 2)
    runtime = box_runtime(accounting_box(threads=5, replies=5).specs)
    emulator.reset_counters()
    preview = await ok(
        call, runtime, "mg_sweep", account="o", query="from:vypisy@banka.example", change={"add_label": ACCOUNTING}
    )
    assert (preview["matched_messages"], preview["matched_threads"]) == (10, 5)  # the answers too
    searches = [c.line for c in emulator.commands(BOX) if c.name == "UID SEARCH"]
    assert len(searches) == 1 + 3, searches  # the query, then 5 threads 2 a search
    assert all(line.count("X-GM-THRID") <= 2 for line in searches), searches


async def test_the_sweep_limit_counts_the_matches_or_every_message_of_their_threads(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    # 3 statements matched, each with an answer in its thread: 3 messages for a flag, 6 for a classification.
    load(emulator, accounting_box(threads=3, replies=3).specs)
    runtime = make_runtime(write_config([config_entry(sweep_limit=2)]))
    snapshot = emulator.snapshot()
    query = "from:vypisy@banka.example"
    body = await error(call, runtime, "mg_sweep", account="o", query=query, change={"seen": True})
    assert body["code"] == "query_too_broad"
    assert 'cover 3 messages in mailbox "o", more than its sweep_limit of 2.' in body["message"], body
    runtime = make_runtime(write_config([config_entry(sweep_limit=5)]))
    body = await error(call, runtime, "mg_sweep", account="o", query=query, change={"add_label": ACCOUNTING})
    assert body["code"] == "query_too_broad"
    words = 'cover 6 messages in the matched threads in mailbox "o", more than its sweep_limit of 5.'
    assert words in body["message"], body
    assert emulator.snapshot() == snapshot
