"""The lists left: which lists mg_unsubscribe already contacted, kept on disk across restarts.

A list is left once. Its record (mailbox, the list as the overview groups it, the URL's host and
path or the mailto address, when, how it answered) goes to a small file in the server's state
folder once the request reached the endpoint: every server process of the user reads the same
file, and a restart forgets nothing. A second mg_unsubscribe for the same list is refused with the
date unless the caller forces it. A request that never reached the endpoint (refused before a
connection, a name that did not resolve) is not recorded.

Written as the send journal is (statefile.py): a temporary file, fsync'd, renamed over the old
one, the folder fsync'd, all under an advisory lock shared by the processes. A damaged file is
reported, never emptied: emptying it would forget the lists left.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ...errors import MailError
from ...statefile import locked, write_atomically

LEFT_FILE = "unsubscribed.json"
LOCK_FILE = ".unsubscribed.lock"
VERSION = 1
MAX_ENTRIES = 10_000  # the oldest go first beyond this: no one leaves ten thousand lists

Method = Literal["one_click", "mailto"]

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Left:
    """One list left."""

    account: str
    list: str  # the overview's group: "list:<List-Id>" or "from:<sender>"
    target: str  # what was contacted: "https://host/path" or "mailto:address"
    method: Method
    at: str  # ISO 8601 UTC, seconds
    status: int | None  # the HTTP status of a one-click; None for a mailto or an unanswered request

    def matches(self, account: str, group: str, target: str) -> bool:
        return self.account == account and (self.list == group or self.target.casefold() == target.casefold())


def _damaged(path: Path, why: str) -> MailError:
    return MailError(
        "upstream_error",
        f"The record of lists already left, {path}, is damaged ({why}). Nothing was contacted. It is what keeps "
        "a list from being unsubscribed twice, so it is not emptied automatically. Ask the user to look at the "
        "file: deleting it forgets which lists were left.",
    )


def _unwritable(path: Path, error: OSError) -> MailError:
    reason = error.strerror or type(error).__name__
    return MailError(
        "upstream_error",
        f"The record of lists already left, {path}, cannot be written ({reason}). Ask the user to make the folder "
        f"{path.parent} writable for the server (or free disk space).",
    )


class LeftLists:
    def __init__(self, folder: Path) -> None:
        self.path = folder / LEFT_FILE

    def _load(self) -> list[Left]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return []
        except (OSError, UnicodeDecodeError) as error:
            raise _damaged(self.path, f"cannot be read: {type(error).__name__}") from None
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("left"), list):
            raise _damaged(self.path, "not a record this server wrote")
        entries: list[Left] = []
        for item in data["left"]:
            try:
                status = item.get("status")
                entries.append(
                    Left(
                        account=str(item["account"]),
                        list=str(item["list"]),
                        target=str(item["target"]),
                        method="mailto" if item["method"] == "mailto" else "one_click",
                        at=datetime.fromisoformat(str(item["at"]))
                        .astimezone(UTC)
                        .isoformat(timespec="seconds")
                        .replace("+00:00", "Z"),
                        status=int(status) if status is not None else None,
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                raise _damaged(self.path, "an entry without account, list, target, method or time") from None
        return entries

    def find(self, account: str, group: str, target: str) -> Left | None:
        """The newest record of this list (by its group or by what was contacted) in this mailbox."""
        with _LOCK:
            entries = self._load()
        return next((e for e in reversed(entries) if e.matches(account, group, target)), None)

    def of_account(self, account: str) -> dict[str, Left]:
        """The newest record of each list left in this mailbox, by group."""
        with _LOCK:
            entries = self._load()
        return {e.list: e for e in entries if e.account == account}

    def _save(self, entries: list[Left]) -> None:
        body = {"version": VERSION, "left": [asdict(e) for e in entries[-MAX_ENTRIES:]]}
        write_atomically(self.path, json.dumps(body, ensure_ascii=False))

    def record(
        self, account: str, group: str, target: str, method: Method, status: int | None, now: datetime | None = None
    ) -> Left:
        """Write down (fsync'd) that this list was contacted; raises MailError when it cannot."""
        moment = (now or datetime.now(UTC)).astimezone(UTC)
        entry = Left(
            account, group, target, method, moment.isoformat(timespec="seconds").replace("+00:00", "Z"), status
        )
        with _LOCK:
            try:
                with locked(self.path.parent / LOCK_FILE):
                    self._save([*self._load(), entry])
            except OSError as error:
                raise _unwritable(self.path, error) from None
        return entry
