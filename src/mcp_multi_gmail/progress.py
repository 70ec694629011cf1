"""Progress of a long tool call, for a client that asked to hear it (MCP `notifications/progress`).

When a tools/call request carries `_meta.progressToken`, the MCP surface installs a reporter for
that call; the service layer marks its milestones with `report` (one mailbox of "all" answered,
a step of a labelling batch done, one more look into Sent) without knowing anything of MCP.
Outside such a call `report` does nothing. It may be called from the call's worker threads: the
context variable travels with the work (gmail/connections.py runs it in a copy of the context).
A bottom module: it imports nothing of the project.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# (progress so far, total when known, what was just done); must be safe to call from any thread.
Reporter = Callable[[float, float | None, str], None]

_current: ContextVar[Reporter | None] = ContextVar("mcp_multi_gmail_progress", default=None)


def report(done: float, total: float | None, message: str) -> None:
    """Tell the client how far the running call is (nothing happens when nobody asked)."""
    reporter = _current.get()
    if reporter is not None:
        reporter(done, total, message)


@contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Send this block's `report` calls to `reporter`."""
    token = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(token)


class Steps:
    """A call's milestones counted one by one against a known total."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0

    def step(self, message: str) -> None:
        self.done = min(self.done + 1, self.total)
        report(self.done, self.total, message)
