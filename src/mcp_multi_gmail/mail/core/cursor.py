"""Page tokens that are cursors on the sort key, not offsets.

Threads are ordered newest first by (newest time, thread id, mailbox). A token remembers the key
of the last thread it showed, so the next page starts strictly after it: labelling threads of an
earlier page shortens the list without shifting what comes next, and nothing is skipped or shown
twice. A token also carries a fingerprint of the call's other arguments; one from a different
call, or one this server did not write, is refused rather than guessed at.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypedDict, TypeVar

from ...errors import invalid_input
from . import budget

_PREFIX = "c1."
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_TOKEN = 400


@dataclass(frozen=True, order=True)
class Key:
    """Sort key of a thread; bigger is newer (pages run from the biggest down)."""

    micros: int
    thread_id: int
    account: str


def key_of(moment: datetime | None, thread_id: int, account: str) -> Key:
    micros = 0 if moment is None else int((moment - _EPOCH).total_seconds() * 1_000_000)
    return Key(micros, thread_id, account)


def fingerprint(tool: str, **arguments: Any) -> str:
    text = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode(print_: str, last: Key) -> str:
    body = json.dumps([print_, last.micros, str(last.thread_id), last.account], separators=(",", ":"))
    return _PREFIX + base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def _refused(token: str) -> Exception:
    return invalid_input(
        f'"{token[:40]}" is not a page token from this call: it was not written by this server, or it '
        "belongs to a call with other arguments. Call again without page_token for the first page."
    )


def decode(token: str | None, print_: str) -> Key | None:
    """The key the next page starts after; None for the first page."""
    if token is None or not token.strip():
        return None
    text = token.strip()
    if len(text) > MAX_TOKEN or not text.isascii() or not text.startswith(_PREFIX):
        raise _refused(token)
    payload = text[len(_PREFIX) :]
    try:
        body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        stamp, micros, thread, account = body
        valid = (
            isinstance(stamp, str)
            and isinstance(micros, int)
            and isinstance(thread, str)
            and thread.isdigit()
            and isinstance(account, str)
        )
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise _refused(token) from None
    if not valid or stamp != print_:
        raise _refused(token)
    return Key(micros, int(thread), account)


# ---------------------------------------------------------------- one page across mailboxes

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class MailboxPage(Protocol[T_co]):
    """One mailbox's page of threads, newest first, with their keys and whether more follow it."""

    @property
    def threads(self) -> Sequence[T_co]: ...

    @property
    def keys(self) -> Sequence[Key]: ...

    @property
    def more(self) -> bool: ...


class PageFields(TypedDict, Generic[T]):
    """The fields every page of threads carries, whichever tool lists them."""

    threads: list[T]
    total_threads: int
    next_page_token: str | None
    page_budget_exhausted: bool
    cut: list[budget.Cut]


@dataclass
class Page(Generic[T]):
    """The threads of every mailbox's page together, newest first, as many as the call asked for."""

    keyed: list[tuple[Key, T]]
    more: bool  # threads follow after these, in some mailbox

    def threads(self, count: int) -> list[T]:
        return [thread for _key, thread in self.keyed[:count]]

    def token(self, stamp: str, count: int) -> str | None:
        """The token of the page after the first `count` threads (the result budget may end a page early)."""
        cut = count < len(self.keyed)
        return encode(stamp, self.keyed[count - 1][0]) if (self.more or cut) and count else None

    def fields(self, tool: str, stamp: str, count: int, total: int) -> PageFields[T]:
        """The first `count` threads of `total`, the token after them, and the cut when the result
        budget ended the page before it was full."""
        cut = count < len(self.keyed)
        return PageFields(
            threads=self.threads(count),
            total_threads=total,
            next_page_token=self.token(stamp, count),
            page_budget_exhausted=cut,
            cut=budget.page_cut(tool, "threads", count, total) if cut else [],
        )


def newest_first(pages: Sequence[MailboxPage[T]], limit: int) -> Page[T]:
    merged = sorted(
        ((key, thread) for page in pages for key, thread in zip(page.keys, page.threads, strict=True)),
        key=lambda pair: pair[0],
        reverse=True,
    )
    return Page(merged[:limit], len(merged) > limit or any(page.more for page in pages))
