"""Long id lists and UID sets cut into commands whose lines stay short.

Gmail's command-length limit is undocumented and other servers answer BAD to very long lines
(RFC 7162 section 4 asks servers to take at least 8192 octets): long id lists and UID sets are
split into commands of bounded size, so the number of commands grows in steps, not per message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

IDS_PER_SEARCH = 50
UIDS_PER_COMMAND = 1000
MAX_LINE_CHARS = 7000


def _batches(items: list[T], most: int, width: Callable[[T], int]) -> list[list[T]]:
    """Items in order, in groups of at most `most` whose widths add up to at most MAX_LINE_CHARS."""
    batches: list[list[T]] = []
    current: list[T] = []
    chars = 0
    for item in items:
        wide = width(item)
        if current and (len(current) >= most or chars + wide > MAX_LINE_CHARS):
            batches.append(current)
            current, chars = [], 0
        current.append(item)
        chars += wide
    if current:
        batches.append(current)
    return batches


def uid_batches(uids: list[int]) -> list[list[int]]:
    """Sorted distinct UIDs in groups of at most UIDS_PER_COMMAND that fit on one command line."""
    return _batches(sorted(set(uids)), UIDS_PER_COMMAND, lambda uid: len(str(uid)) + 1)


def uid_set(uids: list[int]) -> str:
    """A UID set as IMAP writes it (RFC 3501 section 9, sequence-set), runs compressed to ranges:
    [1, 2, 3, 7] -> "1:3,7". A sweep over contiguous UIDs then costs a short line, not a long one."""
    ordered = sorted(set(uids))
    parts: list[str] = []
    start = previous = ordered[0] if ordered else 0
    for uid in ordered[1:]:
        if uid != previous + 1:
            parts.append(str(start) if start == previous else f"{start}:{previous}")
            start = uid
        previous = uid
    if ordered:
        parts.append(str(start) if start == previous else f"{start}:{previous}")
    return ",".join(parts)


def id_batches(bare_ids: list[str]) -> list[list[str]]:
    """Message-IDs in groups of at most IDS_PER_SEARCH whose search terms fit on one command line."""
    # The term around each id: rfc822msgid:"…" or OR HEADER Message-ID "<…>".
    return _batches(bare_ids, IDS_PER_SEARCH, lambda bare: len(bare.encode()) + 24)


def header_term(bare: str) -> str:
    """`HEADER Message-ID "<id>"`, always quoted: an unquoted id such as `a{3}` would read as a literal."""
    escaped = bare.replace("\\", "\\\\").replace('"', '\\"')
    return f'HEADER Message-ID "<{escaped}>"'
