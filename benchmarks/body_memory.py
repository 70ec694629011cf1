"""Peak memory of the server while it reads windows of a huge text body, N reads at once.

    uv run python benchmarks/body_memory.py                 # this checkout
    uv run python benchmarks/body_memory.py --rev main      # another revision, for "before"

One message with a 20 MB text body (UTF-8, base64, as mail programs send big bodies) sits in
an emulated mailbox. For each N (1, 5, 20) a fresh server process is started, N
`mg_get_message` calls for the body's first 8 000-character window are sent at once over stdio,
and the process's peak resident memory (VmHWM in /proc/<pid>/status, Linux) is read once all
have answered. `--rev` runs the server code of a git revision (exported with `git archive` into
a temporary folder and put first on PYTHONPATH), with this checkout's emulator and packages.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from stdio_server import Server

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.endpoint import loopback_environ

ROOT = Path(__file__).resolve().parent.parent
ADDRESS = "velka@example.cz"
PASSWORD = "velkaheslohesloo"
MESSAGE_ID = "velke-telo@example.cz"


def big_message(megabytes: int) -> bytes:
    line = "Příliš žluťoučký kůň úpěl ďábelské ódy; the quick brown fox jumps over the lazy dog.\n"
    text = line * (megabytes * 1_000_000 // len(line.encode()) + 1)
    body = base64.encodebytes(text.encode("utf-8"))
    head = (
        f"From: Karel <karel@example.org>\r\nTo: {ADDRESS}\r\nSubject: Velky dopis\r\n"
        f"Message-ID: <{MESSAGE_ID}>\r\nDate: Mon, 30 Nov 2026 08:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
    )
    return head.encode() + body.replace(b"\n", b"\r\n")


def export_revision(rev: str, into: Path) -> Path:
    """The `src/` folder of a git revision, unpacked into `into` (the checkout is not touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True)
    target = into / "export"
    target.mkdir()
    archive_path = into / "src.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(target, filter="data")
    return target / "src"


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def measure(config: Path, env: dict[str, str], parallel: int) -> dict[str, Any]:
    server = Server(config, env)
    try:
        idle = _status(server.proc.pid, "VmRSS")
        started = time.monotonic()
        args = {"account": "velka", "message_id": MESSAGE_ID}
        ids = [server.send("tools/call", {"name": "mg_get_message", "arguments": args}) for _ in range(parallel)]
        replies = [server.wait(i)[0] for i in ids]
        elapsed = time.monotonic() - started
        peak = _status(server.proc.pid, "VmHWM")
    finally:
        server.close()
    failed = [r for r in replies if r.get("error") or r["result"].get("isError")]
    first = replies[0]["result"].get("structuredContent") or {}
    return {
        "parallel": parallel,
        "idle_rss_mb": round(idle / 1e6, 1),
        "peak_rss_mb": round(peak / 1e6, 1),
        "seconds": round(elapsed, 2),
        "failed": len(failed),
        "window_chars": len(first.get("body") or ""),
        "body_total_length": first.get("body_total_length"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="git revision whose server code to measure (default: this checkout)")
    parser.add_argument("--megabytes", type=int, default=20)
    parser.add_argument("--parallel", default="1,5,20")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mg-body-memory-") as tmp_name:
        tmp = Path(tmp_name)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "MG_WATCH_DIR": str(tmp)}
        label = "this checkout"
        if args.rev:
            env["PYTHONPATH"] = str(export_revision(args.rev, tmp))
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            label = f"revision {args.rev}"
        with GmailEmulator(workdir=tmp) as emulator:
            emulator.add_account(ADDRESS, PASSWORD)
            emulator.deliver(ADDRESS, big_message(args.megabytes))
            config = tmp / "config.json"
            config.write_text(json.dumps({"accounts": [{"name": "velka", "address": ADDRESS, "password": PASSWORD}]}))
            env.update(loopback_environ(**emulator.env()))
            rows = [measure(config, env, int(n)) for n in args.parallel.split(",")]
    print(f"Peak RSS of the server, {args.megabytes} MB text body, first 8000-character window ({label}):")
    print("| parallel reads | idle RSS MB | peak RSS MB | seconds | failed |")
    print("|---:|---:|---:|---:|---:|")
    for row in rows:
        cells = [row["parallel"], row["idle_rss_mb"], row["peak_rss_mb"], row["seconds"], row["failed"]]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({"label": label, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
