"""A real server process over stdio, driven with raw JSON-RPC from a test.

Replies are read on a thread of their own and time-stamped as they arrive, so a test can fire
many calls at once, measure how long a `ping` takes meanwhile, and SIGKILL the process mid-call.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).parent / "mcp-multi-gmail"
SHORT_DEADLINE = Path(__file__).resolve().parent.parent / "support" / "short_deadline.py"


def server_env(emulator_env: dict[str, str], state_dir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "MG_WATCH_DIR": str(state_dir),  # the send journal of this test only
        **emulator_env,
    }


class ServerProcess:
    def __init__(self, config: Path, env: dict[str, str], *, call_timeout_s: float | None = None) -> None:
        """`call_timeout_s` shortens every call's deadline below the configuration's floor (deadline tests)."""
        command = [str(SCRIPT)]
        if call_timeout_s is not None:
            command = [sys.executable, str(SHORT_DEADLINE), str(call_timeout_s)]
        self.proc = subprocess.Popen(
            [*command, "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._ids = itertools.count(1)
        self._replies: dict[int, tuple[dict[str, Any], float]] = {}
        # Every server-sent notification, and where each reply came in the stdout stream.
        self.notifications: list[tuple[int, dict[str, Any]]] = []
        self.reply_order: dict[int, int] = {}
        self._lines = itertools.count()
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        init = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "load-test", "version": "1"}},
        )
        self.wait(init, 30)
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            arrived = time.monotonic()
            message = json.loads(line)  # anything but protocol on stdout fails here
            order = next(self._lines)
            if "id" in message and ("result" in message or "error" in message):
                with self._arrived:
                    self._replies[int(message["id"])] = (message, arrived)
                    self.reply_order[int(message["id"])] = order
                    self._arrived.notify_all()
            elif "method" in message and "id" not in message:
                with self._arrived:
                    self.notifications.append((order, message))

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        return request_id

    def call(self, tool: str, arguments: dict[str, Any], *, progress_token: str | None = None) -> int:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return self.request("tools/call", params)

    def wait(self, request_id: int, timeout: float) -> dict[str, Any]:
        return self.wait_timed(request_id, timeout)[0]

    def wait_timed(self, request_id: int, timeout: float) -> tuple[dict[str, Any], float]:
        """The reply and the monotonic time it arrived."""
        end = time.monotonic() + timeout
        with self._arrived:
            while request_id not in self._replies:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no reply to request {request_id} within {timeout} s")
                self._arrived.wait(left)
            return self._replies[request_id]

    def ping(self, timeout: float = 30) -> float:
        """Seconds from sending a ping to its answer."""
        sent = time.monotonic()
        _reply, arrived = self.wait_timed(self.request("ping"), timeout)
        return arrived - sent

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(30)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._reader.join(5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                with contextlib.suppress(OSError):  # the process is gone: nothing left to flush
                    pipe.close()

    def open_imap_sockets(self, imap_port: int) -> int:
        """TCP connections this process holds to the IMAP port (Linux /proc)."""
        inodes = set()
        for fd in Path(f"/proc/{self.proc.pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        count = 0
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if remote_port == imap_port and fields[9] in inodes:
                    count += 1
        return count


def tool_result(reply: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """(is_error, payload): the structured result, or the error body of a failed call."""
    result = reply["result"]
    if result.get("isError"):
        body = json.loads(result["content"][0]["text"])
        return True, body["error"]
    return False, result["structuredContent"]
