"""Row `w` of run.py: how long the `--wait` watcher takes from a delivery to its exit.

The real command line (`mcp-multi-gmail --wait --interval …`) against the emulator: start it on
an empty mailbox, wait until its first check is done (its state file exists) and, with IDLE,
until its IDLE connection is waiting; deliver one message; time until the process exits. The
poll-only side is the same program with the emulator refusing IDLE, which is how the watcher
worked before (it then finds the mail only at its next poll).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import TextIO

import fixtures as fx

from gmail_emulator import GmailEmulator

ADDRESS = f"w@{fx.DOMAIN}"


@dataclass
class Wakeups:
    seconds: list[float] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    error: str | None = None


def _message() -> bytes:
    msg = EmailMessage()
    msg["From"] = "anna@example.org"
    msg["To"] = ADDRESS
    msg["Subject"] = "Urgent: the contract"
    msg["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    msg.set_content("Please sign today.")
    return msg.as_bytes()


def _idling(emu: GmailEmulator) -> bool:
    return any(e.direction == "s" and e.data.startswith(b"+ idling") for e in emu.wire_log())


async def _until(condition: object, deadline: float) -> bool:
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def prepare(emu: GmailEmulator, workdir: Path) -> Path:
    """The watched mailbox (empty) and a configuration with only it."""
    emu.add_account(ADDRESS, fx.PASSWORD, [fx.PROCESSED])
    home = workdir / "watch"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.json"
    account = {"name": "w", "address": ADDRESS, "password": fx.PASSWORD, "processed_label": fx.PROCESSED}
    config.write_text(json.dumps({"accounts": [{**account, "watch": True}]}, indent=2))
    config.chmod(0o600)
    return config


async def measure_wakeups(
    emu: GmailEmulator, config: Path, *, interval: str, runs: int, idle: bool, errlog: TextIO
) -> Wakeups:
    """`runs` watchers, one after the other; each gets one new message after its first check."""
    out = Wakeups()
    exe = Path(sys.executable).parent / "mcp-multi-gmail"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "mcp_multi_gmail"]
    interval_s = float(interval[:-1]) * (60 if interval.endswith("m") else 1)
    emu.set_knobs(idle_refused=not idle)
    try:
        for _ in range(runs):
            state = Path(tempfile.mkdtemp(prefix="mg-bench-watch-"))
            env = {
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(config.parent),
                "LANG": "C.UTF-8",
                "MG_WATCH_DIR": str(state),
                **emu.env(),
            }
            today = datetime.now(UTC).date().isoformat()
            args = ["--wait", "--config", str(config), "--since", f"w={today}", "--interval", interval, "--max", "60m"]
            emu.reset_counters()
            proc = await asyncio.create_subprocess_exec(
                *command, *args, stdout=asyncio.subprocess.PIPE, stderr=errlog, env=env, cwd=str(config.parent)
            )
            try:
                ready = await _until(
                    lambda state=state: (state / "wait-known.json").exists() and (not idle or _idling(emu)),
                    time.monotonic() + 60,
                )
                if not ready:
                    out.error = "the watcher did not get ready within 60 s"
                    return out
                info = emu.deliver(ADDRESS, _message())
                delivered = time.monotonic()
                assert proc.stdout is not None
                stdout = await asyncio.wait_for(proc.stdout.read(), interval_s + 120)
                await proc.wait()
                out.seconds.append(time.monotonic() - delivered)
                out.lines.append(stdout.decode("utf-8", "replace").strip())
                if proc.returncode != 0:
                    out.error = f"exit code {proc.returncode}: {out.lines[-1][:200]}"
                    return out
                # Processed, so the next watcher starts from an empty window again.
                emu.add_labels(ADDRESS, str(info.header_id), [fx.PROCESSED])
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
    finally:
        emu.set_knobs(idle_refused=False)
    return out
