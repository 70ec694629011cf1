"""Setting the benchmark up: the generated mailboxes in the emulator and each server's configuration.

Ours runs as two processes (`a`, `b`, `c`, so that `account: "all"` means exactly those three; and
`big`, `p5`, `p50`), the peer as one process with `a`, `b`, `c` and `big`, and a minimal MCP server
on our SDK is the floor for the start-up rows. Every server gets a home folder of its own.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

import fixtures as fx
from common import HERE, RESULTS, log
from mcp import StdioServerParameters
from peer import PeerStatus

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.endpoint import loopback_environ

SWEEP_SIZE = 5000
SMOKE_SWEEP_SIZE = 1000  # the smoke run's sweep rows: the paging path over 5 000 takes a minute a run


@dataclass
class Setup:
    workdir: Path
    now: datetime
    trio: list[fx.Mailbox]  # three 1k mailboxes; the first also holds the 10 MB message
    big: fx.Mailbox | None  # 20k
    pass5: fx.Mailbox
    pass50: fx.Mailbox
    sweep: fx.Mailbox  # 5 000 one-message threads for rows s1-s3

    @property
    def rest(self) -> list[fx.Mailbox]:
        """The mailboxes of our second process."""
        return [b for b in (self.big, self.pass5, self.pass50, self.sweep) if b is not None]

    @property
    def peer_boxes(self) -> list[fx.Mailbox]:
        return [*self.trio, *([self.big] if self.big else [])]


def build_mailboxes(emu: GmailEmulator, with_big: bool, sweep_size: int = SWEEP_SIZE) -> Setup:
    now = fx.utc_now()
    workdir = Path(tempfile.mkdtemp(prefix="mg-bench-"))
    trio = []
    for index, name in enumerate(("a", "b", "c")):
        box = fx.Mailbox(name, f"{name}@{fx.DOMAIN}", 1000)
        started = time.perf_counter()
        fx.load(emu, box, fx.general_specs(name, 1000, reports=0, big=index == 0, now=now))
        log(f"mailbox {name}: 1 000 messages in {time.perf_counter() - started:.1f} s")
        trio.append(box)
    big = None
    if with_big:
        big = fx.Mailbox("big", f"big@{fx.DOMAIN}", 20_000)
        started = time.perf_counter()
        fx.load(emu, big, fx.general_specs("big", 20_000, reports=10_000, big=False, now=now), progress=log)
        log(f"mailbox big: 20 000 messages in {time.perf_counter() - started:.1f} s")
    pass5 = fx.Mailbox("p5", f"p5@{fx.DOMAIN}", 0)
    fx.load(emu, pass5, fx.pass_specs("p5", 5, now=now))
    pass50 = fx.Mailbox("p50", f"p50@{fx.DOMAIN}", 0)
    fx.load(emu, pass50, fx.pass_specs("p50", 50, now=now))
    sweep = fx.Mailbox("s5k", f"s5k@{fx.DOMAIN}", sweep_size)
    fx.load(emu, sweep, fx.sweep_specs("s5k", sweep_size, now=now))
    return Setup(workdir, now, trio, big, pass5, pass50, sweep)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8"}


def ours_params(emu: GmailEmulator, setup: Setup, name: str, boxes: list[fx.Mailbox]) -> StdioServerParameters:
    home = _private_dir(setup.workdir / f"ours-{name}")
    config = home / "config.json"
    accounts = [
        {
            "name": b.name,
            "address": b.address,
            "password": fx.PASSWORD,
            "processed_label": fx.PROCESSED,
            "sweep_limit": 10_000,
        }
        for b in boxes
    ]
    config.write_text(json.dumps({"accounts": accounts}, indent=2))
    config.chmod(0o600)
    exe = Path(sys.executable).parent / "mcp-multi-gmail"
    command, args = (str(exe), []) if exe.exists() else (sys.executable, ["-m", "mcp_multi_gmail"])
    # The state folder (send journal, undo records) in the server's home, not in the checkout.
    env = {**_base_env(home), "MG_WATCH_DIR": str(home), **loopback_environ(**emu.env())}
    return StdioServerParameters(command=command, args=[*args, "--config", str(config)], env=env, cwd=str(home))


def _peer_account(emu: GmailEmulator, box: fx.Mailbox) -> list[str]:
    return [
        "",
        "[[emails]]",
        f'account_name = "{box.name}"',
        f'full_name = "{box.name.upper()}"',
        f'email_address = "{box.address}"',
        "[emails.incoming]",
        f'user_name = "{box.address}"',
        f'password = "{fx.PASSWORD}"',
        f'host = "{emu.host}"',
        f"port = {emu.imap_port}",
        "use_ssl = true",  # implicit TLS like imap.gmail.com:993
        "start_ssl = false",
        "verify_ssl = false",  # the emulator's certificate is self-signed
    ]


def peer_params(emu: GmailEmulator, setup: Setup, status: PeerStatus) -> StdioServerParameters:
    # The config directory must be 0700, or the peer switches its metadata index off.
    home = _private_dir(setup.workdir / "peer")
    config_dir = _private_dir(home / ".config" / "mcp-email-server")
    config = config_dir / "config.toml"
    lines = [
        'credential_storage = "plaintext"',
        'allowed_recipients = ["*@example.com"]',
        'allowed_mutations = ["organize"]',
    ]
    for box in setup.peer_boxes:
        lines += _peer_account(emu, box)
    config.write_text("\n".join(lines) + "\n")
    config.chmod(0o600)
    env = {**_base_env(home), "MCP_EMAIL_SERVER_CONFIG_PATH": str(config)}
    assert status.command is not None
    return StdioServerParameters(command=str(status.command), args=["stdio"], env=env, cwd=str(home))


def minimal_params(setup: Setup) -> StdioServerParameters:
    home = _private_dir(setup.workdir / "minimal")
    args = [str(HERE / "minimal_server.py")]
    return StdioServerParameters(command=sys.executable, args=args, env=_base_env(home), cwd=str(home))


class ErrLogs:
    """The servers' stderr, one file each in results/ (closed when the run ends)."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack

    def __call__(self, name: str) -> TextIO:
        RESULTS.mkdir(parents=True, exist_ok=True)
        return self._stack.enter_context(open(RESULTS / f"{name}.stderr.log", "w", encoding="utf-8"))
