"""`notifications/progress` for a tools/call that carries `_meta.progressToken` (docs/en/tools.md;
docs/architecture.md): the service layer's `progress.report` calls become notifications.

Reports may come from worker threads; they are queued onto the event loop and sent in order by
one task. The call's result waits until the queue has been sent, so no notification follows the
result (a client stops listening for them once the request is answered). Without a token
nothing is installed and nothing is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context

from .. import progress

logger = logging.getLogger("mcp_multi_gmail")

# Sending what is queued when the call ends: a wedged client must not hold the result back long.
_DRAIN_S = 1.0

_Item = tuple[float, float | None, str]


def _token(context: Context[Any, Any] | None) -> str | int | None:
    if context is None:
        return None
    try:
        meta = context.request_context.meta
    except ValueError:  # a direct call without a request (tests): nobody to tell
        return None
    token = (meta or {}).get("progress_token")
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


@asynccontextmanager
async def progress_notifications(context: Context[Any, Any] | None) -> AsyncIterator[None]:
    """Within the block, `progress.report` sends `notifications/progress` for this request."""
    if context is None or _token(context) is None:
        yield
        return
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[_Item | None] = asyncio.Queue()
    is_open = True

    def put(item: _Item) -> None:
        if is_open:  # a worker thread abandoned at the deadline may still report: too late
            queue.put_nowait(item)

    def reporter(done: float, total: float | None, message: str) -> None:
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            put((done, total, message))
        else:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the process is ending
                loop.call_soon_threadsafe(put, (done, total, message))

    async def send() -> None:
        while (item := await queue.get()) is not None:
            try:
                await context.report_progress(*item)
            except Exception:
                logger.debug("progress notification not sent", exc_info=True)

    sender = asyncio.ensure_future(send())
    try:
        with progress.reporting(reporter):
            yield
    finally:
        is_open = False
        queue.put_nowait(None)
        try:
            with anyio.move_on_after(_DRAIN_S):
                await asyncio.shield(sender)
        finally:
            sender.cancel()  # the call was cancelled (its client went) or the client reads no more
