"""One deadline per tool call, and what the call had done when it ran out.

The tool wrapper opens a `CallProgress` for every call; the protocol layer (IMAP sessions on worker
threads, SMTP submissions) writes into it what it is doing and whether a change has gone out, and
registers its sockets. When the deadline passes, the wrapper reports from that record and closes
the registered sockets, so a worker thread blocked on a slow Gmail ends instead of lingering.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from .errors import MailError

DEFAULT_CALL_TIMEOUT_S = 60
# A send's deadline grows by one second for every this many bytes it uploads (the message as handed to
# SMTP, attachments base64-encoded): the budget of a line as slow as 256 kbit/s, so a 10 MB
# attachment (about 13.7 MB as sent, some 55 s at 2 Mbit/s) gets about 7 minutes more, not a cut DATA.
UPLOAD_BYTES_PER_S = 32 * 1024


def upload_allowance_s(size: int) -> float:
    """The seconds a call's deadline grows by for uploading `size` bytes (UPLOAD_BYTES_PER_S)."""
    return max(size, 0) / UPLOAD_BYTES_PER_S


def cut(sock: socket.socket) -> None:
    """Shut a socket down so that a thread blocked on it wakes now.

    The plain socket's shutdown, not SSLSocket's: it wakes a thread blocked in recv() on another
    thread without touching the TLS object that thread is using."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Sockets:
    """Sockets to cut together at one moment (a call's deadline, the process's end); none is taken in after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.ended = False

    def add(self, sock: socket.socket) -> bool:
        """Take a socket in; False (and nothing kept) once they were cut."""
        with self._lock:
            if self.ended:
                return False
            self._open.add(sock)
            return True

    def discard(self, sock: socket.socket) -> bool:
        """Let a socket go; whether it was still here (not cut, not let go before)."""
        with self._lock:
            here = sock in self._open
            self._open.discard(sock)
            return here

    def cut_all(self) -> None:
        """Cut every socket still here, and take none in from now on."""
        with self._lock:
            self.ended = True
            sockets = list(self._open)
            self._open.clear()
        for sock in sockets:
            cut(sock)


@dataclass
class CallProgress:
    """What one tool call is doing; shared by the call's task and its worker threads."""

    timeout_s: float
    deadline: float  # time.monotonic() value
    doing: str = "starting"
    # Mailboxes to which a change (STORE, APPEND, MOVE, CREATE) was sent: its outcome is unknown.
    changed: list[str] = field(default_factory=list)
    # A send whose bytes went to Gmail (DATA started): what to say about it when time runs out.
    handed_over: str | None = None
    not_sent: str | None = None  # a send that had not reached DATA yet: nothing went out
    extended_s: float = 0.0  # how much later the deadline is than call_timeout_s (a send's upload)
    # The call's result should its deadline pass from here on: a send Gmail has accepted is a success
    # whatever happens next (only the wait for its Sent copy may be cut short).
    outcome: Callable[[], object] | None = None
    # How the task that enforces the deadline learns that it moved (set by the tool wrapper).
    on_extend: Callable[[float], None] | None = None
    _sockets: Sockets = field(default_factory=Sockets)

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def note(self, doing: str) -> None:
        self.doing = doing

    def extend(self, seconds: float) -> None:
        """Move the deadline later (a send's upload time); only from the call's own task."""
        if seconds <= 0:
            return
        self.deadline += seconds
        self.extended_s += seconds
        if self.on_extend is not None:
            self.on_extend(seconds)

    def mark_changed(self, account: str) -> None:
        if account not in self.changed:
            self.changed.append(account)

    @property
    def expired(self) -> bool:
        """The deadline passed (`expire` ran): no socket is registered any more."""
        return self._sockets.ended

    def register(self, sock: socket.socket) -> bool:
        """Remember a socket to close at the deadline; False (and nothing kept) when it has passed."""
        return self._sockets.add(sock)

    def unregister(self, sock: socket.socket) -> None:
        self._sockets.discard(sock)

    def expire(self) -> None:
        """The deadline passed: cut every socket still in use, so blocked worker threads end now."""
        self._sockets.cut_all()

    def error(self) -> MailError:
        """The error a call gets when its deadline passes, saying what is known."""
        grown = f", plus {self.extended_s:.0f} s for the upload" if self.extended_s >= 1 else ""
        head = (
            f"The call did not finish within its deadline of {self.timeout_s:g} s (call_timeout_s{grown}) while "
            f"{self.doing}."
        )
        if self.handed_over is not None:
            tail = self.handed_over
        elif self.changed:
            boxes = ", ".join(f'"{name}"' for name in self.changed)
            tail = (
                f"A change had already been sent to mailbox {boxes}, so it may or may not have been made. "
                "Read the current state before deciding what to do next."
            )
        elif self.not_sent is not None:
            tail = self.not_sent
        else:
            tail = "Nothing was changed. Gmail is slow or unreachable right now; try again in a moment."
        # Once the message's bytes were on their way a repeat is refused as a duplicate anyway: never retryable.
        return MailError("upstream_error", f"{head} {tail}", retryable=self.handed_over is None)


_current: ContextVar[CallProgress | None] = ContextVar("mcp_multi_gmail_call", default=None)


def current() -> CallProgress | None:
    """The running tool call's record (None outside a tool call, e.g. in the watcher)."""
    return _current.get()


# A socket timeout runs this much past the call's deadline: the deadline itself ends the call and
# says what was known; the socket timeout is only the backstop.
_SOCKET_SLACK_S = 1.0


def remaining(default: float) -> float:
    """A socket timeout for the running call: `default`, but not far past the call's deadline."""
    progress = _current.get()
    if progress is None:
        return default
    return min(default, progress.remaining() + _SOCKET_SLACK_S)


@contextmanager
def call_scope(timeout_s: float) -> Iterator[CallProgress]:
    progress = CallProgress(timeout_s=timeout_s, deadline=time.monotonic() + timeout_s)
    token = _current.set(progress)
    try:
        yield progress
    finally:
        _current.reset(token)


def note(doing: str) -> None:
    progress = _current.get()
    if progress is not None:
        progress.note(doing)


def with_progress(action: Callable[[CallProgress], None]) -> None:
    progress = _current.get()
    if progress is not None:
        action(progress)


def extend(seconds: float) -> None:
    """Grow the running call's deadline (see UPLOAD_BYTES_PER_S); nothing outside a tool call."""
    progress = _current.get()
    if progress is not None:
        progress.extend(seconds)


def settle(outcome: Callable[[], object]) -> None:
    """From now on, a passing deadline ends the call with `outcome()` instead of an error."""
    progress = _current.get()
    if progress is not None:
        progress.outcome = outcome
