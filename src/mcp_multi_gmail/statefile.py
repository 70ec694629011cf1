"""The server's own small files (the send journal, undo records, lists left, sign-in tokens): taken
in turns by every server process, and written whole or not at all.

A file is written beside itself under a temporary name, synced to the disk, renamed over the old
one, and its folder synced, so a crash leaves the old file or the new one, never half of one.
Processes take turns through an advisory lock on a file of its own (`fcntl.flock`, where the
system offers one; elsewhere only the threads of one process take turns, through the callers' own
thread locks). Both are readable and writable by their owner only.

Every store writes a moment the same way, `utc_stamp`: UTC to the second, `2026-12-06T10:59:22Z`
(the tool results show moments so too). Every store reads its file through `read_versioned`, and a
file that cannot be used or written is reported the same way whichever store it is (`damaged`,
`unwritable`, both with the code `STORE_ERROR`): the file is kept as it is, never emptied, because
it may be all that stops a message from going out twice or a change from being lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from .errors import ErrorCode, MailError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process at a time is all the lock covers
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """`lock_file` held exclusively (created when missing, with its folder) while the block runs."""
    lock_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8), synced, or leave it as it was. Raises OSError."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = folder / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.chmod(temporary, 0o600)  # a umask or a leftover file cannot widen it
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    with contextlib.suppress(OSError):  # the rename itself must survive a crash too
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def utc_stamp(moment: datetime) -> str:
    """`moment` as the server writes it: UTC, whole seconds, `Z` (`2026-12-06T10:59:22Z`)."""
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_utc_stamp(value: object) -> datetime:
    """A written moment (any ISO 8601 time with its offset) back, in UTC; ValueError when it is none."""
    return datetime.fromisoformat(str(value)).astimezone(UTC)


# --- a file that cannot be used or written: one code, one kind of message --------------------------

STORE_ERROR: ErrorCode = "upstream_error"


def damaged(name: str, path: Path, why: str, outcome: str, advice: str) -> MailError:
    """`name` ("The send journal") at `path` cannot be used; `outcome`: what the call did not do."""
    return MailError(
        STORE_ERROR,
        f"{name} {path} is damaged ({why}). {outcome} The file is kept as it is, never emptied automatically. "
        f"Ask the user to look at it: {advice}",
    )


def unwritable(name: str, folder: Path, error: OSError, outcome: str) -> MailError:
    """`name` cannot be written in `folder`; `outcome`: what the call did not do, and why that matters."""
    reason = error.strerror or type(error).__name__
    return MailError(
        STORE_ERROR,
        f"{name} cannot be written in {folder} ({reason}). {outcome} Ask the user to make that folder writable "
        "for the server (or free disk space), then try again.",
    )


def read_versioned(path: Path, version: int, damage: Callable[[str], MailError]) -> dict[str, Any] | None:
    """The JSON object a store wrote at `path` with `version`; None when there is no file yet.
    Anything else raises `damage(why)`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise damage(f"cannot be read: {type(error).__name__}") from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("version") != version:
        raise damage("not a file this server wrote")
    return data


E = TypeVar("E")


def read_entries(
    path: Path,
    version: int,
    key: str,
    damage: Callable[[str], MailError],
    *,
    kind: str,
    parse: Callable[[Any], E],
    incomplete: str,
) -> list[E]:
    """The entries a store keeps as a list under `key`, each read by `parse`; none when there is no
    file yet. Another shape raises `damage("not a <kind> this server wrote")`, an entry `parse`
    cannot read `damage(incomplete)`."""
    data = read_versioned(path, version, damage)
    if data is None:
        return []
    items = data.get(key)
    if not isinstance(items, list):
        raise damage(f"not a {kind} this server wrote")
    try:
        return [parse(item) for item in items]
    except (KeyError, TypeError, ValueError, AttributeError):
        raise damage(incomplete) from None
