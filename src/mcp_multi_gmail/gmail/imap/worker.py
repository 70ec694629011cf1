"""The async doorway: a session's work runs on a worker thread, within the mailbox's connection cap.

imapclient is synchronous and not thread-safe, so each session lives in exactly one worker
thread and is never shared; `run_on_worker` is what the service layer awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from typing import TypeVar

import anyio

from ... import deadline
from ...config import SignIn
from ...errors import MailError
from ..connections import Connections, Gate
from ..endpoint import Endpoint
from .failures import TooManyConnections
from .login import LOGOUT_TIMEOUT_S, logged_in
from .session import ImapSession

T = TypeVar("T")

# Gmail's answer to one LOGIN too many; the wait before the one more try is jittered so that
# parallel calls do not come back at the same moment.
TOO_MANY_BACKOFF_S = (1.0, 3.0)

# Sessions whose answer is out but whose LOGOUT is still under way (see finish_logouts).
LOGGING_OUT: set[asyncio.Future[None]] = set()


async def run_on_worker(
    account: str,
    address: str,
    password: str | SignIn,
    endpoint: Endpoint,
    work: Callable[[ImapSession], T],
    *,
    connections: Connections | None = None,
    max_connections: int = 4,
) -> T:
    """Run `work` inside one IMAP session on a worker thread, within the mailbox's connection cap.

    Waiting for a free slot counts against the call's deadline. When Gmail still refuses the login
    for too many connections (other clients hold them), wait a jittered moment and try once more.
    """
    pool = connections if connections is not None else _default_connections()
    gate = pool.gate(f"{endpoint.imap_host}:{endpoint.imap_port}:{address}", max_connections)
    for attempt in (1, 2):
        try:
            return await _one_attempt(pool, gate, account, address, password, endpoint, work)
        except TooManyConnections as refused:
            if attempt == 2:
                raise MailError(
                    "upstream_error",
                    f"{refused.message} (Tried twice, a few seconds apart. This server itself opens at most "
                    f"{max_connections} connections to the mailbox at once: max_connections in the settings.)",
                    retryable=True,
                ) from None
        deadline.note(f'waiting to log in again to mailbox "{account}" (Gmail: too many connections)')
        await anyio.sleep(random.uniform(*TOO_MANY_BACKOFF_S))
    raise AssertionError("unreachable")


async def _one_attempt(
    pool: Connections,
    gate: Gate,
    account: str,
    address: str,
    password: str | SignIn,
    endpoint: Endpoint,
    work: Callable[[ImapSession], T],
) -> T:
    """Wait for a slot, then log in and run `work` on a worker thread; the answer comes back as
    soon as `work` returns, while the LOGOUT still runs on that thread."""
    deadline.note(f'waiting for a free connection to mailbox "{account}" ({gate.busy} of {gate.cap} in use)')
    await gate.acquire()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if answer.done():  # the caller gave up (a deadline): nobody is listening any more
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(value)  # type: ignore[arg-type]

    def report(value: T | None, error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone (process shutting down)
            loop.call_soon_threadsafe(settle, value, error)

    def in_thread() -> None:
        try:
            deadline.note(f'working with mailbox "{account}" over IMAP')
            with logged_in(account, address, password, endpoint, pool.special_folders) as session:
                # The answer goes back now; the LOGOUT and the close follow on this thread.
                report(work(session), None)
        except BaseException as error:  # noqa: BLE001 - handed to the caller, never lost in the worker
            report(None, error)
        finally:
            gate.release()  # only now is the connection really closed

    async def in_pool() -> None:
        try:
            # Cancelled before a thread took the work: the slot was never handed over, give it back here.
            await pool.run(in_thread, on_skipped=gate.release)
        except asyncio.CancelledError:
            settle(None, asyncio.CancelledError())
            raise

    closing = asyncio.ensure_future(in_pool())
    LOGGING_OUT.add(closing)
    closing.add_done_callback(LOGGING_OUT.discard)
    try:
        return await answer
    except asyncio.CancelledError:
        closing.cancel()  # work no thread has taken yet never runs; a running one is abandoned
        raise


async def finish_logouts(timeout: float = LOGOUT_TIMEOUT_S + 1.0) -> None:
    """Wait (at most `timeout` seconds) until every session handed back has logged out."""
    loop = asyncio.get_running_loop()
    pending = [task for task in LOGGING_OUT if not task.done() and task.get_loop() is loop]
    if pending:
        await asyncio.wait(pending, timeout=timeout)


_DEFAULT: Connections | None = None


def _default_connections() -> Connections:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Connections()
    return _DEFAULT
