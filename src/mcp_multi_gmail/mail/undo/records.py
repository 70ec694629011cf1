"""Undo records and sweep previews: small JSON files in the server's state folder, kept across restarts.

Every write tool writes the prior state of what it will change (per message, by X-GM-MSGID, and
per attribute) and fsyncs it before its STORE or MOVE goes out, then completes the record with
what the read-back showed. A server killed in the middle of a write leaves a record that
mg_undo in another process can still use. A sweep preview keeps the message set it showed, so
its apply can re-check it, in a record of the same kind.

One file per record, named by the SHA-256 of its token: the token itself is a secret (from
`secrets`) that only the tool result carries. The server processes of all conversations share
the folder and take turns through an advisory lock on a file in it, as the send journal does.
Records are kept 7 days. A damaged file is reported, never emptied or removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ... import statefile
from ...errors import MailError
from ...statefile import locked, parse_utc_stamp, read_versioned, utc_stamp, write_atomically

FOLDER = "undo"
KEEP = timedelta(days=7)
VERSION = 1
LOCK_FILE = ".lock"
UNDO_PREFIX = "undo_"
SWEEP_PREFIX = "sweep_"

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()


def now() -> datetime:
    """The clock records are dated by; tests move it instead of waiting out 15 minutes or 7 days."""
    return datetime.now(UTC)


def stamp(moment: datetime) -> str:
    return utc_stamp(moment)


def parse_stamp(value: object) -> datetime:
    return parse_utc_stamp(value)


def new_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(24)


class Records:
    """The record files of one state folder."""

    def __init__(self, state_folder: Path) -> None:
        self.folder = state_folder / FOLDER

    def path(self, token: str) -> Path:
        return self.folder / f"{hashlib.sha256(token.encode()).hexdigest()}.json"

    # ------------------------------------------------------------------ locking and files

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with _LOCK, locked(self.folder / LOCK_FILE):
            yield

    def _save(self, path: Path, body: dict[str, Any]) -> None:
        write_atomically(path, json.dumps(body, ensure_ascii=False, separators=(",", ":")))

    def _load(self, path: Path, what: str) -> dict[str, Any]:
        data = read_versioned(path, VERSION, lambda why: damaged(path, what, why))
        if data is None:
            raise MailError(
                "not_found",
                f"This {what} token is unknown to this server: no record of it exists (a token is kept 7 days; a "
                "sweep's confirm_token 15 minutes). Nothing was changed. Check that it was copied whole.",
            )
        if "account" not in data:
            raise damaged(path, what, "not a file this server wrote")
        return data

    # ------------------------------------------------------------------ the operations

    def create(self, token: str, body: dict[str, Any], what: str) -> None:
        """Write a new record (fsync'd); MailError, and nothing changed, when it cannot be written."""
        body = {"version": VERSION, **body}
        try:
            with self._locked():
                self._save(self.path(token), body)
        except OSError as error:
            raise unwritable(self.folder, what, error) from None
        self._prune()

    def read(self, token: str, what: str) -> dict[str, Any]:
        with self._locked():
            return self._load(self.path(token), what)

    def update(self, token: str, what: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Read, change and write a record back under the lock (MailError when it cannot be written)."""
        try:
            with self._locked():
                path = self.path(token)
                body = self._load(path, what)
                change(body)
                self._save(path, body)
                return body
        except OSError as error:
            raise unwritable(self.folder, what, error) from None

    _pruned_at = 0.0

    def _prune(self) -> None:
        """Remove records past their 7 days, at most once an hour per process. A file that does not read
        as a record is left where it is and logged: a damaged record is never removed."""
        if time.monotonic() - Records._pruned_at < 3600 and Records._pruned_at:
            return
        Records._pruned_at = time.monotonic()
        moment = now()
        oldest = (moment - KEEP).timestamp()
        with contextlib.suppress(OSError), self._locked():
            for path in self.folder.glob("*.json"):
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime >= oldest:
                        continue
                    try:
                        created = parse_stamp(self._load(path, "undo")["created"])
                    except (MailError, KeyError, ValueError):
                        logger.warning("záznam pro vrácení změn %s je poškozený; nechávám ho beze změny", path)
                        continue
                    if moment - created >= KEEP:
                        path.unlink()


def damaged(path: Path, what: str, why: str) -> MailError:
    return statefile.damaged(
        f"The record of this {what} token", path, why, "It cannot be used; nothing was changed.",
        "they may delete it once they no longer need to take that change back.",
    )  # fmt: skip


def unwritable(folder: Path, what: str, error: OSError) -> MailError:
    return statefile.unwritable(
        f"The {what} record", folder, error,
        "Nothing was changed: every change is recorded before it goes out, so that it can be taken back.",
    )  # fmt: skip


def after_error(cleanup: Callable[[], object], what: str) -> None:
    """Run a cleanup whose own failure must not replace what the caller is told (the first error, or the
    result): it is logged instead, as aiosmtplib does with a failing RSET after an error."""
    try:
        cleanup()
    except Exception as error:  # noqa: BLE001 - logged; the caller's own outcome stands
        logger.warning("%s se nepodařilo zapsat: %s", what, error)
