"""Long id lists and UID sets are split into commands of bounded length.

Gmail's command-length limit is undocumented; other servers answer BAD to over-long lines. The
emulator's `max_line_length` knob models such a limit (8192 octets here, the minimum RFC 7162
asks servers to accept), and the command counts grow only in steps: 50 Message-IDs per search,
1 000 UIDs per FETCH or STORE.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.imap import IDS_PER_SEARCH, UIDS_PER_COMMAND, id_batches, uid_batches
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
PASSWORD = "osobniheslohesla"
LIMIT = {"max_line_length": 8192}


def seed(count: int, *, one_thread: bool = False) -> dict[str, Any]:
    messages = []
    for n in range(count):
        refs = "In-Reply-To: <zprava-0000@partner.example>\n" if one_thread and n else ""
        messages.append(
            {
                "raw": f"From: petr@partner.example\nTo: {ME}\nSubject: Hlášení\nMessage-ID: "
                f"<zprava-{n:04d}@partner.example>\n{refs}\nText {n}.\n",
                "labels": ["\\Inbox"],
                "internaldate": f"-{count - n}m",
            }
        )
    return {"accounts": [{"address": ME, "password": PASSWORD, "labels": ["Asistent"], "messages": messages}]}


@pytest.fixture
def runtime(write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]) -> Runtime:
    entry = {
        "name": "o",
        "address": ME,
        "password": PASSWORD,
        "processed_label": "Asistent",
        "classification_labels": {"Asistent/info": "good to know"},
    }
    return make_runtime(write_config([entry]))


def counts(emulator: GmailEmulator) -> Counter[str]:
    """Commands of the sessions that logged in since the counters were reset: work an earlier test
    left running in the background on the shared emulator is not this call's cost."""
    commands = emulator.commands()
    ours = {c.session_id for c in commands if c.name == "LOGIN"}
    return Counter(c.name for c in commands if c.session_id in ours)


def test_batches_keep_order_and_size() -> None:
    ids = [f"id-{n}@example.org" for n in range(101)]
    assert [len(b) for b in id_batches(ids)] == [IDS_PER_SEARCH, IDS_PER_SEARCH, 1]
    assert [b for batch in id_batches(ids) for b in batch] == ids
    assert [len(b) for b in uid_batches(list(range(2500, 0, -1)))] == [UIDS_PER_COMMAND, UIDS_PER_COMMAND, 500]
    # Ids long enough to make 50 of them an over-long line go in smaller groups.
    long_ids = [f"{'x' * 900}-{n}@example.org" for n in range(20)]
    assert all(sum(len(i) + 24 for i in batch) <= 7000 for batch in id_batches(long_ids))


@pytest.mark.parametrize("limit", [LIMIT, {}], ids=["8192-octet-lines", "no-limit"])
async def test_label_500_message_ids_under_a_line_limit(
    emulator_session: GmailEmulator, runtime: Runtime, call: Call, limit: dict[str, int]
) -> None:
    emulator_session.reset(seed(500))
    emulator_session.set_knobs(**limit)
    ids = [f"zprava-{n:04d}@partner.example" for n in range(500)]
    await ok(call, runtime, "mg_list_labels", account="o")  # warm: folders known
    emulator_session.reset_counters()
    data = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids, label="Asistent")
    assert data["succeeded"] == 500 and data["failed"] == 0
    assert all("Asistent" in m.labels for m in emulator_session.messages(ME))
    used = counts(emulator_session)
    # 500 ids: ten searches of 50; 500 UIDs: one FETCH before, one STORE, one FETCH after.
    assert used["UID SEARCH"] == 10 and used["UID FETCH"] == 2 and used["UID STORE"] == 1


async def test_search_count_grows_in_steps_of_fifty_ids(
    emulator_session: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator_session.reset(seed(51))
    # No search-index lag: a lookup inside the lag window falls back to more searches than this test counts.
    emulator_session.set_knobs(**LIMIT, raw_search_lag_s=0.0)
    await ok(call, runtime, "mg_list_labels", account="o")
    searches = []
    for size in (1, 50, 51):
        emulator_session.reset_counters()
        ids = [f"zprava-{n:04d}@partner.example" for n in range(size)]
        await ok(call, runtime, "mg_unlabel_message", account="o", message_ids=ids, label="Asistent")
        searches.append(counts(emulator_session)["UID SEARCH"])
    assert searches == [1, 1, 2]


async def test_a_thread_of_1001_messages_is_fetched_and_stored_in_two_steps(
    emulator_session: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator_session.reset(seed(1001, one_thread=True))
    emulator_session.set_knobs(**LIMIT)
    first = emulator_session.message(ME, "zprava-0000@partner.example")
    assert first is not None
    await ok(call, runtime, "mg_list_labels", account="o")
    emulator_session.reset_counters()
    data = await ok(call, runtime, "mg_label_thread", account="o", thread_id=str(first.thrid), label="Asistent/info")
    assert data["succeeded"] == 1001 and data["failed"] == 0
    used = counts(emulator_session)
    assert used["UID FETCH"] == 4 and used["UID STORE"] == 2  # 1 000 + 1, before and after
    assert all("Asistent/info" in m.labels for m in emulator_session.messages(ME))
