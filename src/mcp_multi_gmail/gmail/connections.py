"""How many IMAP connections run at once: a cap per mailbox and worker threads of our own.

Gmail allows 15 simultaneous IMAP connections per account, shared with the user's phone and
desktop clients (https://support.google.com/mail/answer/7126229), so one assistant issuing
parallel calls must not take them all. Each mailbox has a gate of `max_connections` slots; a
slot is held from before the connection opens until its worker thread has closed the socket,
so even a call abandoned at its deadline counts until its connection is really gone.

The worker threads come from an executor of our own. The MCP stdio transport reads and writes
through anyio's default thread pool; IMAP sessions there would starve it and leave the server
unable to read a request or answer `ping` while Gmail is slow.

Every IMAP connection of the process is also listed in `OPEN`, so that when the client goes (the
end of stdin) the server can cut the connections still in use and end at once instead of waiting
for a silent Gmail: the server exits within 2 s of the end of its stdin (docs/architecture.md,
server/lifetime.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import socket
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..deadline import Sockets, cut
from .special_folders import SpecialFolders

T = TypeVar("T")

DEFAULT_MAX_CONNECTIONS = 4
# Threads beyond the sum of the caps: calls abandoned at their deadline may still be closing.
_SPARE_THREADS = 4


class Gate:
    """At most `cap` connections to one mailbox at once. Waiting is async; release may come from
    any thread (the worker that closed the connection)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._semaphore = asyncio.Semaphore(cap)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._busy = 0
        self._lock = threading.Lock()

    @property
    def busy(self) -> int:
        with self._lock:
            return self._busy

    async def acquire(self) -> None:
        await self._semaphore.acquire()
        self._loop = asyncio.get_running_loop()
        with self._lock:
            self._busy += 1

    def release(self) -> None:
        """Give the slot back; safe from a worker thread and after the call itself has ended."""
        with self._lock:
            self._busy -= 1
        loop = self._loop
        if loop is None:
            return
        if _on_loop(loop):
            self._semaphore.release()
        else:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
                loop.call_soon_threadsafe(self._semaphore.release)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class OpenSessions:
    """The IMAP sessions of this process from before their connection opens until it is closed,
    with their sockets: those still working, and those whose answer is out and that only log out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._working = Sockets()
        self._logging_out = Sockets()

    @contextlib.contextmanager
    def held(self) -> Iterator[OpenSessions]:
        """Count one session for as long as the block runs (connecting, working, logging out)."""
        with self._lock:
            self._count += 1
        try:
            yield self
        finally:
            with self._lock:
                self._count -= 1

    def track(self, sock: socket.socket) -> bool:
        """List a newly connected session's socket; False (nothing listed) once the process is ending."""
        return self._working.add(sock)

    def answered(self, sock: socket.socket) -> None:
        """Its work is done and the answer went back: only its LOGOUT is left."""
        # Logouts already cut in between: this one is cut as it would have been with them.
        if self._working.discard(sock) and not self._logging_out.add(sock):
            cut(sock)

    def untrack(self, sock: socket.socket) -> None:
        self._working.discard(sock)
        self._logging_out.discard(sock)

    def end(self, *, logouts_too: bool) -> None:
        """The process is ending: cut every session still working (and, with `logouts_too`, those
        still logging out), and let no new one start."""
        self._working.cut_all()
        if logouts_too:
            self._logging_out.cut_all()

    @property
    def count(self) -> int:
        """Sessions not closed yet (a worker thread may still be connecting or closing one)."""
        with self._lock:
            return self._count


OPEN = OpenSessions()


class Searches:
    """UIDs that searches found, each with the view stamp of the folder it ran in
    (ImapSession.view_stamp): while the stamp is the same, the same search finds the same UIDs.
    The newest `size` are kept; worker threads share them."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._found: OrderedDict[Hashable, tuple[Hashable, list[int]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, stamp: Hashable) -> list[int] | None:
        with self._lock:
            found = self._found.get(key)
        return list(found[1]) if found is not None and found[0] == stamp else None

    def remember(self, key: Hashable, stamp: Hashable, uids: list[int]) -> None:
        with self._lock:
            self._found[key] = (stamp, list(uids))
            self._found.move_to_end(key)
            while len(self._found) > self._size:
                self._found.popitem(last=False)


class Connections:
    """Per-mailbox gates, the worker threads and what one server remembers between calls: the
    special folders and recent searches."""

    def __init__(self) -> None:
        self._gates: dict[tuple[str, int], Gate] = {}
        self.special_folders = SpecialFolders()
        self.searches = Searches()
        self._executor: ThreadPoolExecutor | None = None
        self._threads = 0

    def gate(self, mailbox: str, cap: int) -> Gate:
        """The gate of a mailbox; a changed cap (after a reload) starts a fresh gate."""
        key = (mailbox.casefold(), cap)
        found = self._gates.get(key)
        if found is None:
            found = self._gates[key] = Gate(cap)
        return found

    def size_for(self, caps: list[int]) -> None:
        """Size the worker threads from the caps of the configured mailboxes."""
        wanted = sum(caps) + _SPARE_THREADS
        if self._executor is not None and wanted <= self._threads:
            return
        old = self._executor
        self._executor = ThreadPoolExecutor(max_workers=wanted, thread_name_prefix="mg-imap")
        self._threads = wanted
        if old is not None:
            old.shutdown(wait=False)  # its running sessions finish on their own

    async def run(self, work: Callable[[], T], *, on_skipped: Callable[[], None]) -> T:
        """Run `work` on one of our worker threads (with the caller's context variables). If the
        caller is cancelled the thread is abandoned; it ends when its socket is closed. Work that
        was cancelled before any thread took it never runs: `on_skipped` is called instead."""
        if self._executor is None:
            self.size_for([DEFAULT_MAX_CONNECTIONS])
        assert self._executor is not None
        context = contextvars.copy_context()
        submitted = self._executor.submit(context.run, work)
        try:
            return await asyncio.wrap_future(submitted)
        except asyncio.CancelledError:
            if submitted.cancel():  # True only while no thread has taken it
                on_skipped()
            raise
