"""Many threads classified in one call, and page tokens that survive labelling between pages."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

OSOBNI = "osobni@example.cz"
LABELS = {"Asistent/akce": "the user has to act", "Asistent/info": "for information"}


def _message(subject: str, message_id: str, reply_to: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Odesílatel <odesilatel@example.org>"
    msg["To"] = OSOBNI
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{message_id}>"
    if reply_to:
        msg["In-Reply-To"] = f"<{reply_to}>"
        msg["References"] = f"<{reply_to}>"
    msg.set_content(f"Text zprávy {message_id}.")
    return msg


def _threads(emulator: GmailEmulator, count: int, per_thread: int = 2) -> None:
    base = datetime.now(UTC) - timedelta(hours=3)
    for t in range(count):
        for i in range(per_thread):
            reply_to = f"t{t}-0@example.org" if i else None
            emulator.deliver(
                OSOBNI,
                _message(f"Téma {t}", f"t{t}-{i}@example.org", reply_to),
                internaldate=base + timedelta(minutes=t, seconds=i),
            )


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    entry = {
        "name": "o",
        "address": OSOBNI,
        "password": "osobniheslohesla",
        "processed_label": "Asistent",
        "classification_labels": LABELS,
    }
    return make_runtime(write_config([entry]))


def _thread_ids(emulator: GmailEmulator) -> list[str]:
    return list(dict.fromkeys(str(m.thrid) for m in emulator.messages(OSOBNI)))


# ------------------------------------------------------------------ batch labelling


async def test_batch_classification_reports_each_thread(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    _threads(emulator, 3)
    first, second, third = _thread_ids(emulator)
    await ok(call, runtime, "mg_label_thread", account="o", thread_id=first, label="Asistent/info")
    missing = "1234567890123"
    data = await ok(
        call, runtime, "mg_label_thread", account="o", thread_ids=[first, second, missing, third, second],
        label="Asistent/akce",
    )  # fmt: skip
    assert data["thread_id"] is None and data["label"] == "Asistent/akce"
    by_id = {t["thread_id"]: t for t in data["threads"]}
    assert list(by_id) == [first, second, missing, third]  # asked order, duplicates collapsed
    assert by_id[first]["outcome"] == "changed" and by_id[first]["replaced"] == ["Asistent/info"]
    assert by_id[first]["classification_before"] == ["Asistent/info"]
    assert by_id[second]["classification_after"] == ["Asistent/akce"] and by_id[second]["messages"] == 2
    assert by_id[missing]["outcome"] == "not_found" and by_id[missing]["messages"] == 0
    assert data["succeeded"] == 6 and data["failed"] == 0 and data["messages"] == []
    for info in emulator.messages(OSOBNI):
        assert "Asistent/akce" in info.labels and "Asistent/info" not in info.labels

    again = await ok(call, runtime, "mg_label_thread", account="o", thread_ids=[first, second], label="Asistent/akce")
    assert [t["outcome"] for t in again["threads"]] == ["already", "already"]
    off = await ok(call, runtime, "mg_unlabel_thread", account="o", thread_ids=[first, third], label="Asistent/akce")
    assert [t["classification_after"] for t in off["threads"]] == [[], []]
    kept = [i for i in emulator.messages(OSOBNI) if str(i.thrid) == second]
    assert all("Asistent/akce" in i.labels for i in kept)


async def test_batch_refusals_change_nothing(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    _threads(emulator, 2)
    ids = _thread_ids(emulator)
    before = {i.header_id: sorted(i.labels) for i in emulator.messages(OSOBNI)}
    cases: list[dict[str, Any]] = [
        {"thread_ids": [*ids, "not-a-thread"], "label": "Asistent/akce"},  # one bad id refuses the batch
        {"thread_ids": [], "label": "Asistent/akce"},
        {"thread_ids": [ids[0]] * 101, "label": "Asistent/akce"},
        {"thread_ids": ids, "thread_id": ids[0], "label": "Asistent/akce"},
        {"label": "Asistent/akce"},
    ]
    for args in cases:
        body = await error(call, runtime, "mg_label_thread", account="o", **args)
        assert body["code"] == "invalid_input", args
    # every rule of the single form holds for each thread: the processed label is no classification
    refused = await error(call, runtime, "mg_label_thread", account="o", thread_ids=ids, label="Asistent")
    assert refused["code"] == "label_forbidden"
    assert {i.header_id: sorted(i.labels) for i in emulator.messages(OSOBNI)} == before


@pytest.mark.parametrize("threads", [2, 20])
async def test_batch_command_count_is_flat(emulator: GmailEmulator, runtime: Runtime, call: Call, threads: int) -> None:
    _threads(emulator, threads)
    ids = _thread_ids(emulator)
    await ok(call, runtime, "mg_label_thread", account="o", thread_ids=ids[:1], label="Asistent/info")
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_label_thread", account="o", thread_ids=ids, label="Asistent/akce")
    assert len(data["threads"]) == threads and data["succeeded"] == 2 * threads
    names = [c.name for c in emulator.commands()]
    # SELECT, one SEARCH, FETCH before, LIST, STORE add, FETCH, STORE remove, FETCH: whatever the count
    assert names.count("UID SEARCH") == 1 and names.count("UID STORE") == 2 and names.count("UID FETCH") == 3
    assert len(names) <= 12, names


# ------------------------------------------------------------------ cursors


async def _page(call: Call, runtime: Runtime, token: str | None) -> dict[str, Any]:
    args: dict[str, Any] = {"account": "o", "since": (datetime.now(UTC) - timedelta(days=1)).date().isoformat()}
    if token is not None:
        args["page_token"] = token
    page: dict[str, Any] = await ok(call, runtime, "mg_next_pass", max_threads=2, **args)
    return page


async def test_pass_pages_survive_labelling_between_them(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    _threads(emulator, 7)
    seen: list[str] = []
    token: str | None = None
    while True:
        page = await _page(call, runtime, token)
        ids = [t["thread_id"] for t in page["threads"]]
        assert not set(ids) & set(seen), "a thread came twice"
        seen.extend(ids)
        # label what this page showed before asking for the next one: the list shrinks under the token
        message_ids = [m["message_id"] for t in page["threads"] for m in t["unprocessed"]]
        await ok(call, runtime, "mg_label_message", account="o", message_ids=message_ids, label="Asistent")
        token = page["next_page_token"]
        if token is None:
            break
    assert sorted(seen) == sorted(_thread_ids(emulator))  # nothing skipped
    assert (await _page(call, runtime, None))["window_clear"] is True


async def test_search_pages_survive_labelling_between_them(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    _threads(emulator, 5, per_thread=1)
    query = "-label:Asistent subject:Téma"
    first = await ok(call, runtime, "mg_search_threads", account="o", query=query, max_results=2)
    shown = [t["thread_id"] for t in first["threads"]]
    ids = [f"t{t}-0@example.org" for t in range(5)]
    await ok(call, runtime, "mg_label_message", account="o", message_ids=ids[3:], label="Asistent")
    second = await ok(
        call, runtime, "mg_search_threads", account="o", query=query, max_results=2,
        page_token=first["next_page_token"],
    )  # fmt: skip
    everything = _thread_ids(emulator)
    newest_first = list(reversed(everything))
    assert shown == newest_first[:2] and [t["thread_id"] for t in second["threads"]] == newest_first[2:4]


async def test_foreign_or_broken_tokens_are_refused(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    _threads(emulator, 3, per_thread=1)
    page = await _page(call, runtime, None)
    token = page["next_page_token"]
    assert token is not None and not token.isdigit()
    other_since = await error(
        call, runtime, "mg_next_pass", account="o", since="2020-01-01", max_threads=2, page_token=token
    )
    assert other_since["code"] == "invalid_input" and "other arguments" in other_since["message"]
    other_tool = await error(call, runtime, "mg_search_threads", account="o", query="x", page_token=token)
    assert other_tool["code"] == "invalid_input"
    for broken in ["3", "c1.", "c1.!!!", token[:-3], token + "AA", "c1." + "A" * 500]:
        body = await error(call, runtime, "mg_next_pass", account="o", since="2020-01-01", page_token=broken)
        assert body["code"] == "invalid_input", broken
