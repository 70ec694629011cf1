"""The send journal: which messages were handed to Gmail, kept on disk across restarts.

Just before a message's bytes go to SMTP, its Message-ID and mailbox are written to a small
file in the server's state folder and fsync'd. If the server dies after Gmail accepted the
message but before Gmail filed it in Sent (or before its search index shows it), the restarted
server still knows: repeating the same call is refused as a duplicate. Entries are kept 7 days;
the Message-ID of a send carries its UTC day, so older entries can never match again.

A journal that cannot be written stops the send before anything goes out. A damaged journal is
reported, never emptied: emptying it would remove exactly the protection it exists for.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ... import deadline
from ...errors import MailError
from ...statefile import damaged, locked, parse_utc_stamp, read_entries, unwritable, utc_stamp, write_atomically

logger = logging.getLogger(__name__)

JOURNAL_FILE = "send-journal.json"
KEEP = timedelta(days=7)
VERSION = 1

# Parallel sends in one process take turns on the file; server processes of other conversations
# take turns through an advisory lock on a file beside it (statefile.locked).
_LOCK = threading.Lock()
LOCK_FILE = ".send-journal.lock"


@dataclass(frozen=True)
class Entry:
    account: str
    message_id: str
    handed_over: datetime


def _damaged(path: Path, why: str) -> MailError:
    return damaged(
        "The send journal", path, why, "Nothing was sent.",
        "the journal records which messages were already handed to Gmail, so that a repeated call cannot send "
        "one twice. If no message sent in the last 7 days is being repeated, they can delete it, and the next "
        "send starts a new one.",
    )  # fmt: skip


def _unwritable(path: Path, error: OSError) -> MailError:
    return unwritable(
        "The send journal", path.parent, error,
        "Nothing was sent: without the journal a repeated call after a crash could deliver the message twice.",
    )  # fmt: skip


def _entry(item: Any) -> Entry:
    return Entry(
        account=str(item["account"]),
        message_id=str(item["message_id"]),
        handed_over=parse_utc_stamp(item["handed_over"]),
    )


class SendJournal:
    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE

    # ------------------------------------------------------------------ reading

    def _load(self) -> list[Entry]:
        # No journal yet is no entries: writing one will tell whether the folder can hold it.
        return read_entries(
            self.path, VERSION, "sends", lambda why: _damaged(self.path, why),
            kind="journal", parse=_entry, incomplete="an entry without account, message_id or time",
        )  # fmt: skip

    def find(self, account: str, message_id: str, now: datetime | None = None) -> Entry | None:
        """The journalled send of this Message-ID from this mailbox within the last 7 days."""
        moment = now or datetime.now(UTC)
        wanted = message_id.casefold()
        with _LOCK:
            entries = self._load()
        for entry in entries:
            if entry.account == account and entry.message_id.casefold() == wanted and moment - entry.handed_over < KEEP:
                return entry
        return None

    # ------------------------------------------------------------------ writing

    def _save(self, entries: list[Entry]) -> None:
        body = {
            "version": VERSION,
            "sends": [
                {
                    "account": e.account,
                    "message_id": e.message_id,
                    "handed_over": utc_stamp(e.handed_over),
                }
                for e in entries
            ],
        }
        write_atomically(self.path, json.dumps(body, ensure_ascii=False))

    def record(self, account: str, message_id: str, now: datetime | None = None) -> Entry:
        """Write the send down (fsync'd) before its bytes go out; raises MailError when it cannot."""
        moment = now or datetime.now(UTC)
        entry = Entry(account, message_id, moment)
        with _LOCK:
            try:
                with locked(self.path.parent / LOCK_FILE):
                    kept = [e for e in self._load() if moment - e.handed_over < KEEP]
                    self._save([*kept, entry])
            except OSError as error:
                raise _unwritable(self.path, error) from None
        deadline.with_progress(lambda progress: _note_handed_over(progress, message_id))
        return entry

    def forget(self, account: str, message_id: str) -> None:
        """Take back an entry whose message certainly did not go out (Gmail refused it before DATA)."""
        wanted = message_id.casefold()
        with _LOCK:
            try:
                with locked(self.path.parent / LOCK_FILE):
                    entries = self._load()
                    left = [e for e in entries if not (e.account == account and e.message_id.casefold() == wanted)]
                    if len(left) != len(entries):
                        self._save(left)
            except (MailError, OSError) as error:
                # Logged, never raised: the send's own error is what the caller gets, and a leftover
                # entry only means a repeat needs repeat: true.
                logger.warning("záznam o odeslání %s se nepodařilo odebrat z deníku: %s", message_id, error)


def _note_handed_over(progress: deadline.CallProgress, message_id: str) -> None:
    progress.handed_over = (
        f"The message <{message_id}> was being handed to Gmail, so it may have been sent. It is recorded in the "
        "send journal, so repeating the same call is refused as a duplicate. Ask the user to check the Sent "
        "folder (or with the recipient); only if it did not arrive and the user wants it sent, call again with "
        "repeat: true."
    )


def duplicate(account: str, entry: Entry) -> MailError:
    when = utc_stamp(entry.handed_over)
    return MailError(
        "duplicate_send",
        f'This exact message was already handed to Gmail from mailbox "{account}" at {when} (UTC), as '
        f"<{entry.message_id}>; the send journal remembers it even if it does not show in Sent yet. Nothing was "
        "sent now. If the user really wants it delivered a second time, call again with repeat: true.",
    )
