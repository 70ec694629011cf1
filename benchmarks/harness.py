"""Driving the two MCP servers over stdio and measuring each operation.

One `Driver` per server process: the MCP SDK's `stdio_client` + `ClientSession` (the legacy
`initialize` handshake both servers speak), one tool call at a time, awaited before the next.
`measure_side_by_side()` runs a row's operations in turn, a number of times, against the emulator
and collects, per run, the wall time, the IMAP commands and logged-in connections the emulator
counted, the bytes the emulator sent and the bytes of the tool result(s).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from gmail_emulator import GmailEmulator

SETTLE_S = 0.02  # polling step while waiting for the last connection to close


class CallFailed(Exception):
    """A tool answered with isError (the text says why)."""

    def __init__(self, tool: str, text: str) -> None:
        super().__init__(f"{tool}: {text[:300]}")
        self.tool = tool
        self.text = text


@dataclass
class Reply:
    tool: str
    text: str  # concatenated text content
    structured: Any
    is_error: bool

    @property
    def text_bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    @property
    def structured_bytes(self) -> int:
        if self.structured is None:
            return 0
        return len(json.dumps(self.structured, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

    def data(self) -> Any:
        """The structured result, or the text parsed as JSON."""
        if self.structured is not None:
            return self.structured
        try:
            return json.loads(self.text)
        except ValueError:
            return None


class Driver:
    """One warm server process behind an MCP client session."""

    def __init__(self, label: str, params: StdioServerParameters, errlog: TextIO) -> None:
        self.label = label
        self.params = params
        self.errlog = errlog
        self._stack = AsyncExitStack()
        self.session: ClientSession | None = None
        self.tools: list[str] = []

    async def __aenter__(self) -> Driver:
        read, write = await self._stack.enter_async_context(stdio_client(self.params, errlog=self.errlog))
        session = await self._stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=600))
        await session.initialize()
        self.session = session
        self.tools = [t.name for t in (await session.list_tools()).tools]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def call(self, tool: str, arguments: dict[str, Any], *, allow_error: bool = False) -> Reply:
        assert self.session is not None
        result = await self.session.call_tool(tool, arguments)
        if not isinstance(result, CallToolResult):
            raise CallFailed(tool, f"unexpected result type {type(result).__name__}")
        text = "".join(c.text for c in result.content if isinstance(c, TextContent))
        reply = Reply(tool, text, result.structured_content, bool(result.is_error))
        if reply.is_error and not allow_error:
            raise CallFailed(tool, text)
        return reply


# --------------------------------------------------------------------------- measuring


@dataclass
class Sample:
    wall_s: float
    calls: int
    commands: int
    connections: int
    wire_bytes: int  # IMAP bytes the emulator sent
    text_bytes: int  # text content of the tool result(s), summed
    structured_bytes: int  # structuredContent as compact JSON, summed
    emulator_s: float = 0.0  # time the emulator spent on the commands, injected latency excluded
    error: str | None = None


@dataclass
class Cell:
    """One server × one operation × one latency."""

    samples: list[Sample] = field(default_factory=list)
    unavailable: str | None = None  # why there is no measurement
    timing_only: bool = False  # start-up rows: no IMAP, no result
    note: str | None = None
    check: dict[str, Any] = field(default_factory=dict)  # e.g. same Message-IDs as the other server

    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s.error is None]

    def walls(self) -> list[float]:
        return [s.wall_s for s in self.ok()]

    @property
    def median(self) -> float | None:
        walls = self.walls()
        return statistics.median(walls) if walls else None

    @property
    def p95(self) -> float | None:
        return percentile(self.walls(), 95)

    def _mid(self, name: str) -> int | None:
        values = [getattr(s, name) for s in self.ok()]
        return int(statistics.median(values)) if values else None

    def span(self, name: str) -> str:
        values = [getattr(s, name) for s in self.ok()]
        if not values:
            return "-"
        low, high = min(values), max(values)
        return str(low) if low == high else f"{low}–{high}"

    @property
    def calls(self) -> int | None:
        return self._mid("calls")

    @property
    def commands(self) -> int | None:
        return self._mid("commands")

    @property
    def connections(self) -> int | None:
        return self._mid("connections")

    @property
    def text_bytes(self) -> int | None:
        return self._mid("text_bytes")

    @property
    def wire_bytes(self) -> int | None:
        return self._mid("wire_bytes")

    @property
    def emulator_s(self) -> float | None:
        values = [s.emulator_s for s in self.ok()]
        return statistics.median(values) if values else None

    @property
    def error(self) -> str | None:
        errors = [s.error for s in self.samples if s.error is not None]
        return errors[0] if errors and not self.ok() else None

    def to_json(self) -> dict[str, Any]:
        return {
            "unavailable": self.unavailable,
            "note": self.note,
            "error": self.error,
            "median_s": self.median,
            "p95_s": self.p95,
            "calls": self.calls,
            "commands": self.commands,
            "connections": self.connections,
            "text_bytes": self.text_bytes,
            "wire_bytes": self.wire_bytes,
            "emulator_median_s": self.emulator_s,
            "check": self.check,
            "samples": [asdict(s) for s in self.samples],
        }


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * pct / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


Operation = Callable[[], Awaitable[list[Reply]]]


@dataclass
class _Runs:
    """One operation's runs while they go on."""

    op: Operation
    cell: Cell = field(default_factory=Cell)
    last: list[Reply] = field(default_factory=list)  # the replies of the last good run
    broken: bool = False


Before = Callable[[], object]  # runs untimed before each run; may return an awaitable (tool calls of its own)


async def _run_once(emu: GmailEmulator, op: Operation, before: Before | None) -> tuple[Sample, list[Reply]]:
    if before is not None:
        prepared = before()
        if inspect.isawaitable(prepared):
            await prepared
    emu.reset_counters()
    started = time.perf_counter()
    error: str | None = None
    replies: list[Reply] = []
    try:
        replies = await op()
    except CallFailed as failure:
        error = failure.text[:500] or str(failure)
    wall = time.perf_counter() - started
    await settle(emu)
    return _sample(emu, wall, replies, error), replies


async def measure_side_by_side(
    emu: GmailEmulator,
    ops: Sequence[Operation],
    runs: int,
    *,
    before: Before | None = None,
    warmup: bool = True,
) -> list[tuple[Cell, list[Reply]]]:
    """Each of `ops` run `runs` times, taking turns (A, B, A, B, …) after one unmeasured warm-up
    each, so that a change in the shared machine's load hits both servers of a row alike.
    `before` runs untimed before every run."""
    states = [_Runs(op) for op in ops]
    for index in range(runs + (1 if warmup else 0)):
        for state in (s for s in states if not s.broken):
            sample, replies = await _run_once(emu, state.op, before)
            if warmup and index == 0:
                if sample.error is not None:  # a broken operation fails the same way every time
                    state.cell.samples.append(sample)
                    state.last, state.broken = replies, True
                continue
            state.cell.samples.append(sample)
            if sample.error is None:
                state.last = replies
    return [(s.cell, s.last) for s in states]


async def measure(
    emu: GmailEmulator,
    op: Operation,
    runs: int,
    *,
    before: Before | None = None,
    warmup: bool = True,
) -> tuple[Cell, list[Reply]]:
    """Run `op` (one or more awaited tool calls) `runs` times; `before` runs untimed before each."""
    [(cell, last)] = await measure_side_by_side(emu, [op], runs, before=before, warmup=warmup)
    return cell, last


async def settle(emu: GmailEmulator, timeout: float = 15.0) -> None:
    """Wait until every IMAP connection has closed, so the counters hold the whole operation.

    Ours sends LOGOUT after the answer has gone back, so it is not in the wall time but must be in
    the command count, and must not leak into the next run's counters."""
    deadline = time.monotonic() + timeout
    await asyncio.sleep(SETTLE_S)
    while emu.open_imap_sessions() and time.monotonic() < deadline:
        await asyncio.sleep(SETTLE_S)


def _sample(emu: GmailEmulator, wall: float, replies: list[Reply], error: str | None) -> Sample:
    commands = emu.commands()
    latency = emu.observer.latency.get("*", 0.0)
    return Sample(
        wall_s=wall,
        calls=len(replies),
        commands=len(commands),
        connections=emu.connections(),
        wire_bytes=emu.observer.wire_bytes("s", "imap"),
        text_bytes=sum(r.text_bytes for r in replies),
        structured_bytes=sum(r.structured_bytes for r in replies),
        emulator_s=max(sum(c.duration for c in commands) - latency * len(commands), 0.0),
        error=error,
    )


# --------------------------------------------------------------------------- start-up time


@dataclass
class Startup:
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)  # server process user+sys CPU until the answer
    error: str | None = None


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp-multi-gmail-benchmark", "version": "1"},
    },
}


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
_TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


@dataclass
class StartupPair:
    """Start-up of several servers spawned in turn (A, B, A, B, …), so machine load hits them alike."""

    initialize: dict[str, Startup] = field(default_factory=dict)  # start -> initialize answer
    tools_list: dict[str, Startup] = field(default_factory=dict)  # start -> tools/list answer


async def _read_answer(stream: asyncio.StreamReader, request_id: int) -> bytes:
    while True:
        line = await asyncio.wait_for(stream.readline(), 60)
        if not line:
            return b""
        try:
            if json.loads(line).get("id") == request_id:
                return line
        except ValueError:
            return line


async def time_startups_side_by_side(
    servers: dict[str, StdioServerParameters], runs: int, errlog: TextIO
) -> StartupPair:
    """Each server spawned `runs` + 1 times, interleaved (the first round only warms the file cache):
    process start -> `initialize` answer, then -> the `tools/list` answer. Raw JSON-RPC."""
    out = StartupPair()
    for label in servers:
        out.initialize[label] = Startup()
        out.tools_list[label] = Startup()
    for index in range(runs + 1):
        for label, params in servers.items():
            init, listed = out.initialize[label], out.tools_list[label]
            if init.error is not None:
                continue
            started = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(
                params.command,
                *params.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=errlog,
                env=dict(params.env or {}),
                cwd=params.cwd,
                limit=1 << 24,  # a tools/list answer is one line of 40-50 KB
            )
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write((json.dumps(_INITIALIZE) + "\n").encode())
                await proc.stdin.drain()
                answer = await _read_answer(proc.stdout, 1)
                wall = time.perf_counter() - started
                cpu = _cpu_seconds(proc.pid)
                if b'"result"' not in answer:
                    init.error = f"no initialize result: {answer[:200]!r}"
                    continue
                proc.stdin.write((json.dumps(_INITIALIZED) + "\n" + json.dumps(_TOOLS_LIST) + "\n").encode())
                await proc.stdin.drain()
                tools = await _read_answer(proc.stdout, 2)
                listed_wall = time.perf_counter() - started
                if index > 0:
                    init.wall_s.append(wall)
                    if cpu is not None:
                        init.cpu_s.append(cpu)
                    if b'"result"' in tools:
                        listed.wall_s.append(listed_wall)
            finally:
                proc.stdin.close()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
    return out
