"""Shared fixtures: one Gmail emulator per test session, reset before every test that uses it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gmail_emulator import GmailEmulator

# Fake app passwords (16 lowercase letters, as Google issues them).
PASSWORDS = {
    "osobni@example.cz": "osobniheslohesla",
    "tym@example.com": "tymovehesloheslo",
    "upozorneni@example.com": "automatyheslooko",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def emulator_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GmailEmulator]:
    with GmailEmulator(workdir=tmp_path_factory.mktemp("emulator")) as emulator:
        yield emulator


@pytest.fixture
def emulator(emulator_session: GmailEmulator) -> GmailEmulator:
    """A fresh, empty emulator with the three test mailboxes and default knobs."""
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
