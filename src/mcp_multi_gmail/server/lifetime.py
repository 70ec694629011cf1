"""The stdio server's life: it serves until its client closes stdin, then ends at once.

The server exits within 2 s of the end of its stdin, whatever is in flight (docs/architecture.md,
docs/en/tools.md). The SDK cancels the requests in flight when stdin ends; their IMAP sessions
run on worker threads, which a cancelled task cannot stop, and the interpreter waits for those
threads at exit. A stalled Gmail would keep the process alive for the call's deadline and the
LOGOUT wait. So when the client goes, every connection still in use is cut: a blocked read wakes
with an error, its thread closes the socket and ends. A send whose bytes went to Gmail needs
nothing more: its entry was written to the send journal (and fsync'd) before DATA and is only
removed when Gmail refused the message before DATA.

Then the process leaves without the interpreter's own teardown: with a few hundred modules
loaded that alone took about a second on a busy machine, and nothing in it matters to a server
whose client is gone (the journal is on disk, stdout and stderr are flushed, logging is shut).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

import anyio

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

logger = logging.getLogger("mcp_multi_gmail")

# The LOGOUTs that follow answers already given get this long (Gmail answers one in milliseconds);
# then their connections are cut too.
LOGOUT_GRACE_S = 0.5
# How long the worker threads get to close their cut connections before the process leaves anyway.
THREADS_GRACE_S = 0.3


async def serve_stdio(server: MCPServer) -> None:
    """Serve over stdio until the client goes, then cut what is still open."""
    try:
        await server.run_stdio_async()
    finally:
        await end_sessions()


async def end_sessions() -> None:
    """The client has gone: no answer can reach it any more. Abandon the reads in flight, give
    answered sessions a moment for their LOGOUT, then cut everything and wait briefly for the
    worker threads."""
    from ..gmail.connections import OPEN
    from ..gmail.imap import finish_logouts

    OPEN.end(logouts_too=False)
    await finish_logouts(LOGOUT_GRACE_S)
    OPEN.end(logouts_too=True)
    with anyio.move_on_after(THREADS_GRACE_S):
        while OPEN.count:
            await anyio.sleep(0.01)


def freeze_long_lived() -> None:
    """Leave what exists now (the SDK, the tools and their schemas: most of the process's objects)
    out of every later garbage collection. A full collection walks every object it tracks; over
    all of those it paused the server for ~0.1 s in the middle of a call. Their memory is freed as
    before when nothing refers to them any more; only cycles among them are never collected."""
    gc.freeze()


def run_stdio(server: MCPServer, exit_code: Callable[[], int] = lambda: 0) -> NoReturn:
    """`serve_stdio` in its own event loop; when the client has gone, the process ends here, with
    `exit_code()` (1 for a server that never left repair mode)."""
    anyio.run(serve_stdio, server)
    from ..gmail.connections import OPEN

    if OPEN.count:
        # A session whose cut socket could not wake its thread in time (a TLS handshake not yet
        # listed, a pause between looks into Sent): nothing it could still do reaches anyone.
        logger.info("%d IMAP session(s) still closing when the client went; leaving without them", OPEN.count)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(exit_code())
