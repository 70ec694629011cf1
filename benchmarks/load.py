"""Parallel calls, a stalled Gmail and a crash mid-send: what the server does, before and after.

    uv run python benchmarks/load.py               # this checkout
    uv run python benchmarks/load.py --rev main    # another revision's server code (see body_memory.py)

Three scenarios against the emulator, each with a fresh server process over stdio:

1. 50 `mg_search_threads` calls on one mailbox at once (30 ms per SEARCH): the most IMAP logins
   the emulator saw at the same time (it allows 100 here, so the server's own cap shows), and the
   slowest `ping` sent meanwhile.
2. 40 calls against a SEARCH that stalls for 30 s (`call_timeout_s` 10 where it exists): the
   slowest `ping` meanwhile and when the calls ended.
3. `mg_send_message` held by the emulator after Gmail accepted it (Sent never filed), the
   server SIGKILLed, restarted and asked the same again: how many copies were accepted.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from body_memory import export_revision
from stdio_server import Server

from gmail_emulator import FaultRule, GmailEmulator, Knobs, SmtpFault
from mcp_multi_gmail.gmail.endpoint import loopback_environ

ADDRESS = "zatez@example.cz"
PASSWORD = "zatezheslohesloo"
ACCOUNT = {"name": "zatez", "address": ADDRESS, "password": PASSWORD, "can_send": True}
SEARCH = {"account": "zatez", "query": "from:karel"}


def _seed(emulator: GmailEmulator) -> None:
    for i in range(3):
        raw = (
            f"From: karel@example.org\r\nTo: {ADDRESS}\r\nSubject: Zprava {i}\r\nMessage-ID: <z{i}@example.org>\r\n"
            f"Date: Mon, 30 Nov 2026 08:00:00 +0000\r\n\r\nText {i}\r\n"
        )
        emulator.deliver(ADDRESS, raw.encode())


def _errors(server: Server, ids: list[int]) -> list[str]:
    out = []
    for i in ids:
        result = server.replies[i][0]["result"]
        if result.get("isError"):
            out.append(json.loads(result["content"][0]["text"])["error"]["code"])
    return out


def burst(emulator: GmailEmulator, config: Path, env: dict[str, str]) -> dict[str, Any]:
    emulator.set_latency("SEARCH", 0.03)
    server = Server(config, env)
    try:
        server.wait(server.send("tools/call", {"name": "mg_search_threads", "arguments": SEARCH}))
        emulator.reset_counters()
        ids = [server.send("tools/call", {"name": "mg_search_threads", "arguments": SEARCH}) for _ in range(50)]
        pings = server.pings_until_answered(ids)
        return {
            "logins_at_once": emulator.login_peak(ADDRESS),
            "slowest_ping_ms": round(max(pings) * 1000, 1),
            "errors": _errors(server, ids),
        }
    finally:
        server.close()
        emulator.set_latency("SEARCH", 0)


def stall(emulator: GmailEmulator, config: Path, env: dict[str, str]) -> dict[str, Any]:
    server = Server(config, env)
    try:
        server.wait(server.send("tools/call", {"name": "mg_search_threads", "arguments": SEARCH}))
        emulator.add_fault(FaultRule("delay:30", match="SEARCH", times=-1))
        started = time.monotonic()
        ids = [server.send("tools/call", {"name": "mg_search_threads", "arguments": SEARCH}) for _ in range(40)]
        pings = server.pings_until_answered(ids)
        ended = max(server.replies[i][1] for i in ids) - started
        return {
            "slowest_ping_ms": round(max(pings) * 1000, 1),
            "calls_ended_after_s": round(ended, 1),
            "errors": sorted(set(_errors(server, ids))),
        }
    finally:
        server.close()
        emulator.clear_faults()


def crash(emulator: GmailEmulator, config: Path, env: dict[str, str]) -> dict[str, Any]:
    emulator.set_knobs(sent_filing_delay_s=None)
    emulator.add_smtp_fault(SmtpFault("after_data", "hold"))
    args: dict[str, Any] = {
        "account": "zatez",
        "to": ["petr@example.org"],
        "subject": "Faktura",
        "body": "Posilam fakturu.",
    }
    args |= {"quote_original": False, "signature": False}
    first = Server(config, env)
    first.send("tools/call", {"name": "mg_send_message", "arguments": args})
    end = time.monotonic() + 30
    while emulator.smtp_held() < 1 and time.monotonic() < end:
        time.sleep(0.01)
    first.proc.kill()
    first.proc.wait()
    second = Server(config, env)
    try:
        reply, _at = second.wait(second.send("tools/call", {"name": "mg_send_message", "arguments": args}))
    finally:
        second.close()
    result = reply["result"]
    outcome = json.loads(result["content"][0]["text"])["error"]["code"] if result.get("isError") else "sent again"
    return {"smtp_accepts": len(emulator.outbox()), "repeat": outcome}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="git revision whose server code to measure (default: this checkout)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mg-load-") as tmp_name:
        tmp = Path(tmp_name)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "MG_WATCH_DIR": str(tmp)}
        label = "this checkout"
        top: dict[str, Any] = {"call_timeout_s": 10}
        if args.rev:
            env["PYTHONPATH"] = str(export_revision(args.rev, tmp))
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            label = f"revision {args.rev}"
            top = {}  # older revisions refuse unknown keys
        # Far above Gmail's 15, so the emulator shows how many connections the server itself opens.
        with GmailEmulator(workdir=tmp, knobs=Knobs(max_connections=100)) as emulator:
            emulator.add_account(ADDRESS, PASSWORD)
            _seed(emulator)
            config = tmp / "config.json"
            config.write_text(json.dumps({"accounts": [ACCOUNT], **top}))
            env.update(loopback_environ(**emulator.env()))
            rows = {
                "50 parallel calls": burst(emulator, config, env),
                "40 calls, SEARCH stalled 30 s": stall(emulator, config, env),
                "SIGKILL after DATA, repeat": crash(emulator, config, env),
            }
    print(f"Load, stall and crash ({label}):")
    for name, row in rows.items():
        print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
