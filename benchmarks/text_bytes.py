"""Bytes of the text content the assistant reads: the demo pass and a 50-thread search.

    uv run python benchmarks/text_bytes.py

Every byte of a tool result's text content lands in the assistant's context. This prints, for
two typical calls, the size of the text content as the server sends it now and the size the same
data would have pretty-printed (2-space indent) and compact. The emulator runs in-process, with
the demo seed (`mg_next_pass` on `osobni`, 5 days: 9 threads) plus one generated 1 000-message
mailbox (`mg_search_threads subject:Invoice`, 50 of its 67 single-message threads).
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import TextContent

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fixtures as fx  # noqa: E402

from gmail_emulator import GmailEmulator, Knobs  # noqa: E402
from mcp_multi_gmail.demo.setup import demo_accounts, demo_seed  # noqa: E402
from mcp_multi_gmail.gmail.endpoint import loopback_environ  # noqa: E402
from mcp_multi_gmail.runtime import Runtime  # noqa: E402
from mcp_multi_gmail.server import build_server  # noqa: E402


def sizes(text: str, data: Any) -> dict[str, int]:
    return {
        "served": len(text.encode("utf-8")),
        "pretty": len(json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")),
        "compact": len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")),
    }


async def measure(runtime: Runtime) -> dict[str, dict[str, int]]:
    since = (datetime.now(UTC) - timedelta(days=5)).date().isoformat()
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "demo pass (osobni, 9 threads)": ("mg_next_pass", {"account": "osobni", "since": since}),
        "search, 50 threads": ("mg_search_threads", {"account": "a", "query": "subject:Invoice", "max_results": 50}),
    }
    out: dict[str, dict[str, int]] = {}
    async with Client(build_server(runtime)) as client:
        for name, (tool, args) in calls.items():
            result = await client.call_tool(tool, args)
            [content] = result.content
            assert isinstance(content, TextContent) and result.is_error is False, content
            data = result.structured_content
            assert data is not None
            count = len(data["threads"])
            assert count in (9, 50), f"{name}: {count} threads"
            out[name] = sizes(content.text, data)
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="text-bytes-") as tmp:
        folder = Path(tmp)
        # The generated mailbox is delivered just now: without the index lag it is searchable at once.
        knobs = Knobs(raw_search_lag_s=0.0)
        with GmailEmulator(workdir=folder / "emulator", seed=demo_seed(), knobs=knobs) as emu:
            emu.set_latency("*", 0)
            mailbox = fx.Mailbox(name="a", address=f"a@{fx.DOMAIN}", size=1000)
            fx.load(emu, mailbox, fx.general_specs("a", 1000, reports=0, big=False, now=fx.utc_now()))
            accounts = [*demo_accounts(), {"name": "a", "address": mailbox.address, "password": fx.PASSWORD}]
            config = folder / "config.json"
            config.write_text(json.dumps({"accounts": accounts, "download_dir": str(folder / "dl")}), "utf-8")
            runtime = Runtime.load(config, environ=loopback_environ(**emu.env()))
            results = anyio.run(measure, runtime)
    print(f"{'call':34} {'served':>8} {'pretty':>8} {'compact':>8} {'saved':>6}")
    for name, size in results.items():
        saved = 1 - size["compact"] / size["pretty"]
        print(f"{name:34} {size['served']:8} {size['pretty']:8} {size['compact']:8} {saved:6.0%}")


if __name__ == "__main__":
    main()
