"""mg_label_thread with thread_ids: every outcome fits the result budget or is counted.

A hundred threads that each carry two long classifications (changed to a third one) give outcomes
of about 550 characters each, more than 40 000 together. The result then lists every thread that
needs attention, as many successes as fit, and counts the rest in `threads_omitted`, instead of
the last resort cutting the end of `threads` without a word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.imap import finish_logouts
from mcp_multi_gmail.server import build_server
from support import gmail_env, load_runtime

pytestmark = pytest.mark.anyio

BOX = "osobni@example.cz"
PASSWORD = "osobniheslohesla"
CLASSES = {f"Asistent/Třída {i:02d} s dlouhým názvem štítku pro třídění došlé pošty": "význam" for i in range(8)}
THREADS = 100


def message(index: int) -> bytes:
    return (
        f"From: odesilatel@example.org\r\nTo: {BOX}\r\nSubject: vlakno {index}\r\n"
        f"Message-ID: <vlakno-{index}@example.org>\r\nDate: Mon, 30 Nov 2026 08:00:00 +0000\r\n\r\ntext\r\n"
    ).encode()


async def test_many_thread_outcomes_are_counted_not_cut(emulator_session: GmailEmulator, tmp_path: Path) -> None:
    emulator_session.reset()
    emulator_session.add_account(BOX, PASSWORD, labels=list(CLASSES))
    for index in range(THREADS):
        emulator_session.deliver(BOX, message(index), labels=["\\Inbox", *list(CLASSES)[:2]])
    threads = sorted({str(m.thrid) for m in emulator_session.messages(BOX)})
    assert len(threads) == THREADS
    missing = [str(10**18 + i) for i in range(3)]
    path = tmp_path / "multigmail.json"
    entry = {"name": "osobni", "address": BOX, "password": PASSWORD, "classification_labels": CLASSES}
    path.write_text(json.dumps({"accounts": [entry]}, ensure_ascii=False), encoding="utf-8")
    runtime = load_runtime(path, gmail_env(emulator_session), state_dir=tmp_path / "state")
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(
            "mg_label_thread",
            {"account": "osobni", "label": list(CLASSES)[3], "thread_ids": threads[:97] + missing},
        )
    await finish_logouts()
    assert not result.is_error, result.content
    content: dict[str, Any] = result.structured_content or {}
    assert len(json.dumps(content, ensure_ascii=False, separators=(",", ":"))) <= 40_000
    listed = content["threads"]
    # The not_found ones first and whole, then successes; together with the count, every thread.
    assert [t["thread_id"] for t in listed[:3]] == missing and {t["outcome"] for t in listed[:3]} == {"not_found"}
    assert {t["outcome"] for t in listed[3:]} == {"changed"}
    assert content["threads_omitted"] > 0
    assert len(listed) - 3 + content["threads_omitted"] == 97
    assert content["succeeded"] == 97  # every message of the 97 threads found was classified
    assert all("…[cut]" not in label for t in listed for label in t["classification_before"])
