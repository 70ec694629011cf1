"""The lists left: which lists mg_unsubscribe already contacted, kept on disk across restarts.

A list is left once. A list is what the overview groups (its List-Id, else its sender) as vouched
for by one signer (the domain of the DKIM signature Gmail passed over List-Unsubscribe): never its
URL, which one mailing service shares among all its lists, nor its List-Id alone, which anyone can
write. Its record (mailbox, list, signer, what was contacted: the URL's host and path or the mailto
address, when, how it answered) goes to a small file in the server's state folder: every server
process of the user reads the same file, and a restart forgets nothing.

A call claims the list before it contacts anyone: under the lock it looks for an earlier record of
the list and, finding none, writes its own, marked `pending`, in one step; two calls at once, in one
process or two, cannot both find nothing. Once the request has gone out the claim is settled with
its answer; when nothing went out it is taken back. A claim left pending (the process stopped, the
call was cancelled while the request was out) refuses the list like a record, since the request may
have reached the endpoint. A second mg_unsubscribe for a list claimed or left is refused with the
date unless the caller forces it.

Records of the first format (version 1 without `signer` or `pending`, written before issue 41) are
read as they are: such a record names its list by the group alone, so it stands for that list
whoever signs it now; it is kept unchanged when the file is written again. Its `target` (host and
path) is only shown, never matched: matching it made two lists of one service one. The file stays
version 1 (the new fields are additions an older server ignores), so an older server still reads it.

Written as the send journal is (statefile.py): a temporary file, fsync'd, renamed over the old
one, the folder fsync'd, all under an advisory lock shared by the processes. A damaged file is
reported, never emptied: emptying it would forget the lists left.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ...errors import MailError
from ...statefile import damaged, locked, parse_utc_stamp, read_entries, unwritable, utc_stamp, write_atomically

LEFT_FILE = "unsubscribed.json"
LOCK_FILE = ".unsubscribed.lock"
VERSION = 1
MAX_ENTRIES = 10_000  # the oldest go first beyond this: no one leaves ten thousand lists

Method = Literal["one_click", "mailto"]

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Left:
    """One list left (or claimed by a call under way: `pending`)."""

    account: str
    list: str  # the overview's group: "list:<List-Id>" or "from:<sender>"
    target: str  # what was contacted, as shown: "https://host/path" or "mailto:address"; never matched
    method: Method
    at: str  # ISO 8601 UTC, seconds
    status: int | None  # the HTTP status of a one-click; None for a mailto or an unanswered request
    signer: str | None = None  # the DKIM d= that vouched for the list's header; None: a first-format record
    pending: bool = False  # claimed by a call, its outcome not written (yet)

    def matches(self, account: str, group: str, signer: str) -> bool:
        return self.account == account and self.list == group and self.signer in (None, signer)


def newest(entries: list[Left], account: str, group: str, signer: str) -> Left | None:
    """The newest record of this list, as this signer vouches for it, in this mailbox."""
    return next((e for e in reversed(entries) if e.matches(account, group, signer)), None)


def now_iso(now: datetime | None = None) -> str:
    return utc_stamp(now or datetime.now(UTC))


def _damaged(path: Path, why: str) -> MailError:
    return damaged(
        "The record of lists already left", path, why, "Nothing was contacted.",
        "it is what keeps a list from being unsubscribed twice; deleting it forgets which lists were left.",
    )  # fmt: skip


def _unwritable(path: Path, error: OSError) -> MailError:
    return unwritable(
        f"The record of lists already left ({path.name})", path.parent, error,
        "It is what keeps a list from being unsubscribed twice.",
    )  # fmt: skip


def _left(item: Any) -> Left:
    status, signer = item.get("status"), item.get("signer")
    return Left(
        account=str(item["account"]),
        list=str(item["list"]),
        target=str(item["target"]),
        method="mailto" if item["method"] == "mailto" else "one_click",
        at=utc_stamp(parse_utc_stamp(item["at"])),
        status=int(status) if status is not None else None,
        signer=str(signer) if signer is not None else None,
        pending=item.get("pending") is True,
    )


class LeftLists:
    def __init__(self, folder: Path) -> None:
        self.path = folder / LEFT_FILE

    def _load(self) -> list[Left]:
        return read_entries(
            self.path, VERSION, "left", lambda why: _damaged(self.path, why),
            kind="record", parse=_left, incomplete="an entry without account, list, target, method or time",
        )  # fmt: skip

    def find(self, account: str, group: str, signer: str) -> Left | None:
        """The newest record of this list in this mailbox (a dry run's look: it claims nothing)."""
        with _LOCK:
            return newest(self._load(), account, group, signer)

    def of_account(self, account: str) -> list[Left]:
        """Every record of this mailbox, oldest first."""
        with _LOCK:
            return [e for e in self._load() if e.account == account]

    def _save(self, entries: list[Left]) -> None:
        body = {"version": VERSION, "left": [_written(e) for e in entries[-MAX_ENTRIES:]]}
        write_atomically(self.path, json.dumps(body, ensure_ascii=False))

    def _update(self, change: Callable[[list[Left]], list[Left] | None]) -> None:
        """Load, change and write back as one step under both locks; `change` returns None to write nothing."""
        with _LOCK:
            try:
                with locked(self.path.parent / LOCK_FILE):
                    changed = change(self._load())
                    if changed is not None:
                        self._save(changed)
            except OSError as error:
                raise _unwritable(self.path, error) from None

    def claim(self, entry: Left, *, force: bool) -> Left | None:
        """Write `entry` (pending) unless this list is claimed or left already: then that record, and
        nothing is written (with `force`, written all the same). Raises MailError when it cannot."""
        earlier: list[Left] = []

        def change(entries: list[Left]) -> list[Left] | None:
            found = newest(entries, entry.account, entry.list, entry.signer or "")
            if found is not None and not force:
                earlier.append(found)
                return None
            return [*entries, entry]

        self._update(change)
        return earlier[0] if earlier else None

    def settle(self, claim: Left, outcome: Left | None) -> None:
        """Replace the claim by its outcome (None: nothing went out, the claim is taken back)."""

        def change(entries: list[Left]) -> list[Left]:
            kept = list(entries)
            if claim in kept:
                del kept[len(kept) - 1 - kept[::-1].index(claim)]
            return [*kept, outcome] if outcome is not None else kept

        self._update(change)


def _written(entry: Left) -> dict[str, object]:
    """An entry as the file holds it: a first-format record as it was read (no signer, no pending)."""
    fields = asdict(entry)
    if entry.signer is None:
        del fields["signer"]
    if not entry.pending:
        del fields["pending"]
    return fields
