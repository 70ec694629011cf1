"""Waiting for a condition with a deadline, instead of sleeping a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `predicate` (briefly yielding the CPU) until it holds; fail after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


async def await_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """The same inside an event loop, without blocking it."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await anyio.sleep(0.01)
