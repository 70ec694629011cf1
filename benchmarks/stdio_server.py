"""A server process of this checkout (or of `--rev`'s code on PYTHONPATH) driven over stdio JSON-RPC,
for the benchmarks that time answers or read the process's memory: each reply is kept with the
moment it arrived."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class Server:
    def __init__(self, config: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_multi_gmail", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.ids = itertools.count(1)
        self.replies: dict[int, tuple[dict[str, Any], float]] = {}
        self.done = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        self.wait(self.send("initialize", hello))
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "id" in message:
                with self.done:
                    self.replies[message["id"]] = (message, time.monotonic())
                    self.done.notify_all()

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        request_id = next(self.ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        return request_id

    def wait(self, request_id: int, timeout: float = 300) -> tuple[dict[str, Any], float]:
        end = time.monotonic() + timeout
        with self.done:
            while request_id not in self.replies:
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to {request_id}")
                self.done.wait(left)
            return self.replies[request_id]

    def pings_until_answered(self, ids: list[int]) -> list[float]:
        rounds = []
        while any(i not in self.replies for i in ids):
            sent = time.monotonic()
            _reply, arrived = self.wait(self.send("ping"))
            rounds.append(arrived - sent)
            time.sleep(0.02)
        return rounds

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
