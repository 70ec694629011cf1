"""Special-folder paths per mailbox, remembered across calls by the server that looked them up.

The paths are localised ("[Gmail]/Sent Mail", "[Google Mail]/Gesendet") but practically never
change, and looking them up costs a LIST round trip on every call. A stale entry shows up as a
failing EXAMINE/SELECT, and the folders are then listed afresh. Each runtime owns one memory
(through its `Connections`), so a new runtime starts like a new server process.
"""

from __future__ import annotations

# (IMAP host, IMAP port, address folded to lower case)
MailboxKey = tuple[str, int, str]


class SpecialFolders:
    """Special-use flag → folder path, per mailbox."""

    def __init__(self) -> None:
        self._paths: dict[MailboxKey, dict[str, str]] = {}

    def get(self, key: MailboxKey) -> dict[str, str] | None:
        found = self._paths.get(key)
        return dict(found) if found is not None else None

    def remember(self, key: MailboxKey, paths: dict[str, str]) -> None:
        self._paths[key] = dict(paths)

    def forget(self, key: MailboxKey) -> None:
        self._paths.pop(key, None)

    def clear(self) -> None:
        """Drop every remembered path (a fresh start, as in a new process)."""
        self._paths.clear()
