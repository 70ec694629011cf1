"""Wait for a condition with a deadline instead of sleeping a fixed time.

A fixed sleep is either too short on a loaded machine (a flaky test) or too long everywhere (a slow
suite); polling a condition is as fast as the system allows and fails with a message when it never
comes true.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

POLL_S = 0.01


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    """Poll `predicate` until it returns something true; AssertionError when `timeout` passes first."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"not reached within {timeout} s: {what or _name(predicate)}")
        time.sleep(POLL_S)


async def wait_until_async(predicate: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    """`wait_until` for a coroutine: yields to the event loop between polls."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"not reached within {timeout} s: {what or _name(predicate)}")
        await asyncio.sleep(POLL_S)


def _name(predicate: Callable[[], object]) -> str:
    return getattr(predicate, "__qualname__", repr(predicate))
