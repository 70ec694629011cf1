"""The tour's last step: a `--follow` watcher on the sample mailboxes prints its line when mail arrives.

The watcher runs as Claude Code's Monitor runs it, a process of its own with no stdin; the tour
delivers one message to the emulator once the watcher's first check is done and its IDLE
connection waits, reads the one stdout line and stops the watcher as Monitor does, by SIGTERM.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage

from .setup import DemoSetup

WAIT_S = 30.0
_POLL_S = 0.05


@dataclass(frozen=True)
class Followed:
    line: str | None  # None: no line came within WAIT_S
    seconds: float  # from the delivery to the line
    stop_seconds: float  # from SIGTERM to the watcher's exit


def _ready(setup: DemoSetup, address: str) -> bool:
    """The first check is saved and the IDLE connection of `address` waits in All Mail."""
    if not (setup.folder / "wait-known.json").is_file():
        return False
    # The emulator logs a command when it is answered, an IDLE at its DONE; `+ idling` comes at once.
    idling = {e.session_id for e in setup.emulator.wire_log() if e.direction == "s" and e.data.startswith(b"+ idling")}
    return any(c.session_id in idling for c in setup.emulator.commands(address) if c.name == "LOGIN")


def follow_one_delivery(setup: DemoSetup, account: str, address: str, since: str, message: EmailMessage) -> Followed:
    env = {key: value for key, value in os.environ.items() if key != "MG_CONFIG"}
    env.update(setup.env(), MG_WATCH_DIR=str(setup.folder))
    command = [
        sys.executable, "-m", "mcp_multi_gmail", "--config", str(setup.config_path), "--follow",
        "--since", f"{account}={since}",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        cwd=setup.folder, encoding="utf-8", errors="replace",
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for text in proc.stdout:
            lines.put(text.rstrip("\n"))

    reader = threading.Thread(target=read, name="demo-follower", daemon=True)
    reader.start()
    line: str | None = None
    took = 0.0
    try:
        deadline = time.monotonic() + WAIT_S
        while not _ready(setup, address) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        if proc.poll() is None:
            delivered = time.monotonic()
            setup.emulator.deliver(address, message)
            try:
                line = lines.get(timeout=WAIT_S)
            except queue.Empty:
                line = None
            took = time.monotonic() - delivered
    finally:
        stopped = time.monotonic()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        stop_s = time.monotonic() - stopped
        reader.join(timeout=5)  # the pipe ends with the watcher
        if proc.stdout is not None:
            proc.stdout.close()
    return Followed(line, took, stop_s)
