"""The assistant's pass over the demo mailbox `osobni`, played as docs/pro-asistenta.md says.

The same nine threads are worked through twice from a fresh seed: the long way the guide used to
prescribe (a read per message, a classification call per thread) and the way it prescribes now
(previews, batch classification). Both must leave the mailbox labelled the same; the new way has
to fit in at most 8 calls and 15 KB of results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.demo.setup import demo_accounts  # the same three mailboxes the demo shows
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from support import gmail_env, load_runtime

pytestmark = pytest.mark.anyio

DEMO_SEED = Path(str(files("gmail_emulator.seeds") / "demo" / "seed.json"))
JANA = "jana.novakova@example.cz"
AKCE, INFO = "Asistent/akce", "Asistent/info"
# What each new thread needs, by the message that opens its unprocessed part.
CLASSIFY = {
    "chata-vysocina-09@example.org": AKCE,
    "fwd-vyuctovani.mn.1@example.cz": AKCE,
    "talk-confirm-0417@forum.partner.example": AKCE,
    "{a1b2c3d4-e5f6-4789-9abc-def012345678}@email.seznam.example.cz": AKCE,
    "faktura-2026-11.202611@rychlynet.example.com": AKCE,
    "20-korektura-vizitek.8bit@tiskarna-horak.example.cz": AKCE,
    "prihlaska-keramika-204@ddm-lipova.example.cz": AKCE,
    "issue-142.jn142@weeklybyte.example.com": INFO,
    "q4-report.mt.1@partner.example": INFO,  # already answered by Jana
}
REPLY_TO = "chata-vysocina-09@example.org"
MAX_CALLS = 8
MAX_BYTES = 15_000


@dataclass
class Transcript:
    calls: list[str] = field(default_factory=list)
    text_bytes: int = 0  # the result text the assistant reads, as this server writes it
    compact_bytes: int = 0  # the same results as compact JSON
    sizes: list[tuple[str, int, int]] = field(default_factory=list)

    def line(self) -> str:
        return f"{len(self.calls)} calls, {self.text_bytes} B text, {self.compact_bytes} B compact JSON"


class Assistant:
    def __init__(self, client: Client, transcript: Transcript) -> None:
        self.client = client
        self.transcript = transcript

    async def __call__(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args)
        assert result.is_error is False, result.content
        data: dict[str, Any] = result.structured_content
        self.transcript.calls.append(tool)
        text = sum(len(c.text.encode()) for c in result.content if c.type == "text")
        compact = len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
        self.transcript.text_bytes += text
        self.transcript.compact_bytes += compact
        self.transcript.sizes.append((tool, text, compact))
        return data


def _runtime(emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path) -> Runtime:
    emulator.reset(DEMO_SEED)
    path = write_config(demo_accounts(), download_dir=str(tmp_path / "downloads"))
    return load_runtime(path, gmail_env(emulator))


def _labels(emulator: GmailEmulator) -> dict[str, list[str]]:
    """Our labels on every message; drafts by their subject (a draft's Message-ID is new each time)."""
    return {
        (m.header_id or "") if "\\Draft" not in m.labels else f"draft:{m.raw.count(b'Re: Chata')}": sorted(
            lb for lb in m.labels if lb.startswith("Asistent")
        )
        for m in emulator.messages(JANA)
        if m.location == "normal"
    }


def _plan(threads: list[dict[str, Any]]) -> dict[str, str]:
    """thread id → classification, from the first unprocessed message of each thread."""
    return {t["thread_id"]: CLASSIFY[t["unprocessed"][0]["message_id"]] for t in threads}


async def _draft(assistant: Assistant) -> None:
    await assistant(
        "mg_save_draft", account="osobni", to=["lucie.dvorakova@example.org"],
        subject="Re: Chata na Vysočině – kdy pojedeme?", in_reply_to=REPLY_TO,
        body="Ahoj Lucie, houby děti jedí a psa s sebou nebereme. Jana",
    )  # fmt: skip


async def long_way(assistant: Assistant, since: str) -> dict[str, Any]:
    """The old guide: the thread read whole, every new message read, one classification per thread."""
    first = await assistant("mg_next_pass", account="osobni", since=since)
    chata = next(t for t in first["threads"] if t["unprocessed"][0]["message_id"] == REPLY_TO)
    await assistant("mg_get_thread", account="osobni", thread_id=chata["thread_id"])
    for thread in first["threads"]:
        for message in thread["unprocessed"]:
            if message["state"] == "received" and thread is not chata:
                await assistant("mg_get_message", account="osobni", message_id=message["message_id"])
    for thread_id, label in _plan(first["threads"]).items():
        await assistant("mg_label_thread", account="osobni", thread_id=thread_id, label=label)
    await _draft(assistant)
    ids = [m["message_id"] for t in first["threads"] for m in t["unprocessed"]]
    await assistant("mg_label_message", account="osobni", message_ids=ids, label="Asistent", since=since)
    return await assistant("mg_next_pass", account="osobni", since=since)


async def guided_way(assistant: Assistant, since: str) -> dict[str, Any]:
    """The guide now: classify from the previews, one call per classification, one labelling."""
    first = await assistant("mg_next_pass", account="osobni", since=since)
    assert all(m["preview"] for t in first["threads"] for m in t["unprocessed"])
    plan = _plan(first["threads"])
    for label in sorted(set(plan.values())):
        chosen = [thread_id for thread_id, wanted in plan.items() if wanted == label]
        done = await assistant("mg_label_thread", account="osobni", thread_ids=chosen, label=label)
        assert all(t["outcome"] in ("changed", "already") for t in done["threads"])
    await _draft(assistant)
    ids = [m["message_id"] for t in first["threads"] for m in t["unprocessed"]]
    labelled = await assistant("mg_label_message", account="osobni", message_ids=ids, label="Asistent", since=since)
    assert labelled["window"]["window_clear"] is True
    return await assistant("mg_next_pass", account="osobni", since=since)


async def _play(
    way: Callable[[Assistant, str], Any],
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    tmp_path: Path,
) -> tuple[Transcript, dict[str, list[str]]]:
    runtime = _runtime(emulator, write_config, tmp_path)
    since = (datetime.now(UTC) - timedelta(days=7)).date().isoformat()
    transcript = Transcript()
    async with Client(build_server(runtime)) as client:
        last = await way(Assistant(client, transcript), since)
    assert last["window_clear"] is True and last["threads"] == []
    return transcript, _labels(emulator)


async def test_the_guided_pass_fits_in_8_calls_and_15_kb(
    emulator_session: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    before, long_labels = await _play(long_way, emulator_session, write_config, tmp_path)
    after, guided_labels = await _play(guided_way, emulator_session, write_config, tmp_path)
    print(f"\nlong way: {before.line()}\nguided way: {after.line()}")  # the numbers for the closing note
    assert guided_labels == long_labels  # the same work done
    assert len(before.calls) == 22
    assert len(after.calls) <= MAX_CALLS, after.calls
    assert after.text_bytes <= MAX_BYTES and after.compact_bytes <= MAX_BYTES, after.line()
