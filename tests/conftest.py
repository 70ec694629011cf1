"""Shared fixtures: one Gmail emulator per test session, reset before every test that uses it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gmail_emulator import GmailEmulator, Knobs

# Fake app passwords (16 lowercase letters, as Google issues them).
PASSWORDS = {
    "osobni@example.cz": "osobniheslohesla",
    "tym@example.com": "tymovehesloheslo",
    "upozorneni@example.com": "automatyheslooko",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def quick_knobs() -> Knobs:
    """Gmail's likeliest behaviour minus its delays: for the many tests that are about something else.
    A test about the Sent filing delay or the search-index lag sets those knobs itself."""
    return Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)


@pytest.fixture(scope="session")
def emulator_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GmailEmulator]:
    with GmailEmulator(workdir=tmp_path_factory.mktemp("emulator"), knobs=quick_knobs()) as emulator:
        yield emulator


@pytest.fixture
def emulator(emulator_session: GmailEmulator) -> GmailEmulator:
    """A fresh, empty emulator with the three test mailboxes and the quick knobs."""
    emulator_session.reset()
    for address, password in PASSWORDS.items():
        emulator_session.add_account(address, password)
    return emulator_session


def account_entry(name: str, address: str, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "address": address, "password": PASSWORDS.get(address, "x")}
    entry.update(extra)
    return entry


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    """Write a configuration JSON into tmp_path and return its path."""

    def write(accounts: list[dict[str, Any]], **top: Any) -> Path:
        path = tmp_path / "multigmail.json"
        body: dict[str, Any] = {"accounts": accounts, **top}
        path.write_text(json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")
        return path

    return write


class RawRpc:
    """Newline-delimited JSON-RPC to a server subprocess; every stdout line must be protocol."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int) -> dict[str, Any]:
        """Read stdout until the answer to request_id; a stray print() fails the JSON parse."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed stdout"
            message: dict[str, Any] = json.loads(line)
            assert message.get("jsonrpc") == "2.0"
            if message.get("id") == request_id:
                return message


@pytest.fixture
def raw_rpc() -> type[RawRpc]:
    return RawRpc
