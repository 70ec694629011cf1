"""One in-process MCP client and server per runtime, for all of a test's tool calls.

Building a server registers every tool (their schemas), and a new client asks for the tool list
before its first call (to check results against the output schemas): together most of what one
call used to cost. A test's calls on one runtime therefore share one server and one connection;
the server reads the runtime on every call, so a reload or a changed runtime still shows.

The connections are held open by tasks of a task group that the (async) fixture owns, and closed
when the test ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client

from mcp_multi_gmail.gmail.imap import finish_logouts
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server


class Clients:
    def __init__(self, hosts: TaskGroup, done: anyio.Event) -> None:
        self._hosts, self._done = hosts, done
        self._clients: list[tuple[Runtime, Client]] = []
        self._opening = anyio.Lock()

    async def _host(self, runtime: Runtime, *, task_status: TaskStatus[Client]) -> None:
        async with Client(build_server(runtime)) as client:
            task_status.started(client)
            await self._done.wait()

    async def client(self, runtime: Runtime) -> Client:
        async with self._opening:  # calls started together open one connection, not several
            for known, open_client in self._clients:
                if known is runtime:
                    return open_client
            opened: Client = await self._hosts.start(self._host, runtime)
            self._clients.append((runtime, opened))
            return opened

    async def call(self, runtime: Runtime, tool: str, args: dict[str, Any], *, settle_s: float | None = None) -> Any:
        """One tool call; returns the CallToolResult once the session's LOGOUT has landed too (it
        follows the answer in the background), so the test may look at the emulator's counters.
        `settle_s` bounds that wait (finish_logouts' own bound when None)."""
        result = await (await self.client(runtime)).call_tool(tool, args)
        await (finish_logouts() if settle_s is None else finish_logouts(settle_s))
        return result


@asynccontextmanager
async def clients() -> AsyncIterator[Clients]:
    done = anyio.Event()
    async with anyio.create_task_group() as hosts:
        try:
            yield Clients(hosts, done)
        finally:
            done.set()
