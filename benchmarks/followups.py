"""Follow-ups benchmark: mg_awaiting_replies against the paging path, and the pass with and without reminders.

    uv run python benchmarks/followups.py                 # 3 mailboxes x 2 000 sent threads, 25 ms a command
    uv run python benchmarks/followups.py --threads 200   # smaller, for a quick look

Each mailbox holds `--threads` threads the user started within the last 30 days (half of them
answered, a tenth with only an out-of-office). The emulator adds `--latency` ms to every IMAP
command. Measured in-process through a real MCP client over the emulator's TLS:

- `mg_awaiting_replies` on "all": wall time, and IMAP commands per mailbox;
- the paging path an assistant has without it: `mg_search_threads` "in:sent newer_than:30d" page
  by page, then `mg_get_thread` per thread. Its `mg_get_thread` calls are timed on a sample of
  `--sample` threads per mailbox and scaled to all of them (every call is the same shape: one
  thread, the same commands), which is said in the output;
- `mg_next_pass` with no reminder set, and with `--reminders` reply reminders set per mailbox.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from mcp import Client

from gmail_emulator import GmailEmulator, Knobs
from mcp_multi_gmail.gmail.endpoint import loopback_environ
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server

PASSWORD = "benchheslohesla1"
BOXES = ("f1", "f2", "f3")


def message(sender: str, to: str, subject: str, msg_id: str, answers: str | None = None, **headers: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, to, subject, f"<{msg_id}>"
    if answers:
        msg["In-Reply-To"] = msg["References"] = f"<{answers}>"
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content("Dobrý den, posílám podklady a prosím o odpověď.")
    return bytes(msg)


def load(emu: GmailEmulator, box: str, threads: int) -> None:
    address = f"{box}@example.cz"
    emu.add_account(address, PASSWORD)
    now = datetime.now(UTC)

    def add() -> None:
        account = emu.store.account(address)
        assert account is not None
        for n in range(threads):
            sent_at = now - timedelta(days=1 + 28 * n / threads)
            mine = f"{box}-{n}@example.cz"
            peer = f"kontakt{n % 97}@example.org"
            account.add_message(message(address, peer, f"Dotaz {n}", mine), labels=["\\Sent"], internaldate=sent_at)
            if n % 2:
                reply = message(peer, address, f"Re: Dotaz {n}", f"re-{mine}", mine)
                account.add_message(reply, labels=["\\Inbox"], internaldate=sent_at + timedelta(hours=5))
            elif n % 10 == 0:
                away = message(
                    peer, address, f"Automatická odpověď: Dotaz {n}", f"ooo-{mine}", mine, Auto_Submitted="auto-replied"
                )
                account.add_message(away, labels=["\\Inbox"], internaldate=sent_at + timedelta(minutes=1))

    emu._on_loop(add)


def commands_per_box(emu: GmailEmulator) -> dict[str, int]:
    return {box: len(emu.commands(f"{box}@example.cz")) for box in BOXES}


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise RuntimeError(f"{tool}: {result.content}")
    data: dict[str, Any] = result.structured_content or {}
    return data


async def timed(emu: GmailEmulator, client: Client, tool: str, **args: Any) -> tuple[float, dict[str, int], Any]:
    emu.reset_counters()
    began = time.perf_counter()
    data = await call(client, tool, **args)
    return time.perf_counter() - began, commands_per_box(emu), data


async def measure_awaiting(emu: GmailEmulator, client: Client) -> dict[str, Any]:
    """mg_awaiting_replies on "all", every page; then the first page's commands per mailbox."""
    times: list[float] = []
    commands, listed = dict.fromkeys(BOXES, 0), 0
    token: str | None = None
    while True:
        extra: dict[str, str] = {"page_token": token} if token else {}
        wall, per_box, data = await timed(emu, client, "mg_awaiting_replies", account="all", max_results=100, **extra)
        times.append(wall)
        for box, count in per_box.items():
            commands[box] += count
        listed += len(data["threads"])
        token = data["next_page_token"]
        if token is None:
            break
    _wall, first_page, _ = await timed(emu, client, "mg_awaiting_replies", account="all", max_results=100)
    return {
        "calls": len(times),
        "seconds": round(sum(times), 2),
        "first_page_s": round(times[0], 2),
        "imap_commands_per_mailbox_first_page": first_page,
        "imap_commands_per_mailbox_all_pages": commands,
        "threads_listed": listed,
    }


async def sent_threads(emu: GmailEmulator, client: Client) -> tuple[dict[str, list[str]], float, int, dict[str, int]]:
    """The paging path's first half: mg_search_threads over Sent, page by page, in every mailbox."""
    search_s, search_calls = 0.0, 0
    thread_ids: dict[str, list[str]] = {box: [] for box in BOXES}
    emu.reset_counters()
    for box in BOXES:
        token: str | None = None
        while True:
            extra: dict[str, str] = {"page_token": token} if token else {}
            began = time.perf_counter()
            data = await call(
                client, "mg_search_threads", account=box, query="in:sent newer_than:30d", max_results=100, **extra
            )
            search_s += time.perf_counter() - began
            search_calls += 1
            thread_ids[box] += [t["thread_id"] for t in data["threads"]]
            token = data["next_page_token"]
            if token is None:
                break
    return thread_ids, search_s, search_calls, commands_per_box(emu)


async def measure_paging(
    emu: GmailEmulator, client: Client, sample: int
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Search Sent, then mg_get_thread per thread: timed on a sample, scaled to every thread."""
    thread_ids, search_s, search_calls, search_commands = await sent_threads(emu, client)
    sample_times: list[float] = []
    emu.reset_counters()
    for box in BOXES:
        for thread in thread_ids[box][:sample]:
            began = time.perf_counter()
            await call(client, "mg_get_thread", account=box, thread_id=thread)
            sample_times.append(time.perf_counter() - began)
    per_thread_commands = sum(commands_per_box(emu).values()) / max(1, len(sample_times))
    total_threads = sum(len(ids) for ids in thread_ids.values())
    per_thread_s = statistics.mean(sample_times)
    return {
        "search_calls": search_calls,
        "search_s": round(search_s, 2),
        "get_thread_calls": total_threads,
        "get_thread_s_measured_per_call": round(per_thread_s, 3),
        "get_thread_sampled": len(sample_times),
        "seconds_scaled": round(search_s + per_thread_s * total_threads, 1),
        "calls": search_calls + total_threads,
        "imap_commands_per_mailbox": {
            box: round(search_commands[box] + per_thread_commands * len(thread_ids[box])) for box in BOXES
        },
    }, thread_ids


async def measure_passes(
    emu: GmailEmulator, client: Client, thread_ids: dict[str, list[str]], reminders: int, latency_s: float
) -> dict[str, Any]:
    """mg_next_pass on "all" with no reminder, then with `reminders` reply reminders per mailbox."""
    since = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    wall, per_box, _ = await timed(emu, client, "mg_next_pass", account="all", since=since)
    out: dict[str, Any] = {"without": {"seconds": round(wall, 2), "imap_commands_per_mailbox": per_box}}
    later = (datetime.now(UTC) + timedelta(days=3)).date().isoformat()
    emu.set_latency("*", 0)
    for box in BOXES:
        for thread in thread_ids[box][:reminders]:
            await call(client, "mg_remind", account=box, thread_id=thread, on=later)
    emu.set_latency("*", latency_s)
    wall, per_box, data = await timed(emu, client, "mg_next_pass", account="all", since=since)
    out["with"] = {
        "reminders_per_mailbox": reminders,
        "seconds": round(wall, 2),
        "imap_commands_per_mailbox": per_box,
        "reminders_due": len(data["reminders_due"]),
        "awaiting_overdue": data["awaiting_overdue"],
    }
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"threads_per_mailbox": args.threads, "latency_ms": args.latency}
    knobs = Knobs(raw_search_lag_s=0.0, sent_filing_delay_s=0.0)
    with GmailEmulator(knobs=knobs) as emu, tempfile.TemporaryDirectory() as tmp:
        for box in BOXES:
            load(emu, box, args.threads)
        config = Path(tmp) / "multigmail.json"
        accounts = [{"name": box, "address": f"{box}@example.cz", "password": PASSWORD} for box in BOXES]
        config.write_text(json.dumps({"accounts": accounts, "timezone": "Europe/Prague"}), encoding="utf-8")
        runtime = Runtime.load(config, environ=loopback_environ(**emu.env()), state_dir=Path(tmp) / "state")
        async with Client(build_server(runtime)) as client:
            await call(client, "mg_awaiting_replies", account="all", max_results=1)  # warm: folders known
            emu.set_latency("*", args.latency / 1000)
            out["awaiting"] = await measure_awaiting(emu, client)
            out["paging"], thread_ids = await measure_paging(emu, client, args.sample)
            out["pass"] = await measure_passes(emu, client, thread_ids, args.reminders, args.latency / 1000)
    a, p = out["awaiting"], out["paging"]
    out["ratios"] = {"calls": round(a["calls"] / p["calls"], 4), "time": round(a["seconds"] / p["seconds_scaled"], 4)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=25.0, help="ms added to every IMAP command")
    parser.add_argument("--sample", type=int, default=20, help="mg_get_thread calls timed per mailbox")
    parser.add_argument("--reminders", type=int, default=20, help="reply reminders set per mailbox for the pass")
    print(json.dumps(asyncio.run(run(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
