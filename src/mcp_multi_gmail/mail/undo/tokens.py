"""One life cycle for every token the server hands out: a sweep's confirm_token and an undo token.

    planned  ->  applied  ->  used

A record is `planned` when it is written (a sweep's preview; an undo record, fsync'd before its
write's first change goes out), `applied` once its write was read back and settled (an undo token;
a confirm_token has nothing to settle and goes from planned to used), and `used` for good once the
change it stands for went out. Nothing ever leads out of `used`.

The call working on a record holds it: the holder (process, host, a lease) is written into the
record under the records' lock, so a second call (a thread of this process, or another server
process on the same state folder) is refused while the first is at work. A holder that died
(SIGKILL) or whose lease ran out holds nothing: its token is free again, in the state it had.
These functions change a record's body; callers run them inside `Records.update`.
"""

from __future__ import annotations

import os
import secrets
import socket
from datetime import timedelta
from pathlib import Path
from typing import Any

from ...errors import invalid_input
from . import records
from .records import parse_stamp, stamp

PLANNED = "planned"
APPLIED = "applied"
USED = "used"
# Longer than any call's deadline: a call abandoned at its deadline lets go when its worker ends.
LEASE = timedelta(minutes=20)
# States earlier versions wrote, read as the one they meant.
_OLD = {"completed": APPLIED, "reserved": PLANNED}


def state(record: dict[str, Any]) -> str:
    if record.get("used") is True:  # a sweep preview written before the life cycle had states
        return USED
    found = str(record.get("state", PLANNED))
    return _OLD.get(found, found)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, under another user
        return True
    try:  # Linux: a killed process its parent has not reaped yet is a zombie, and holds nothing
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def held(record: dict[str, Any]) -> bool:
    """Whether a live call holds the record: its lease runs, and on this host its process lives."""
    holder = record.get("holder")
    if not isinstance(holder, dict):
        return False
    try:
        if records.now() >= parse_stamp(holder["until"]):
            return False
        if holder.get("host") == socket.gethostname():
            return _alive(int(holder["pid"]))
    except (KeyError, TypeError, ValueError):
        return False
    return True


def hold(record: dict[str, Any], *, busy: str, used: str) -> str:
    """Take the record for this call; refused (invalid_input) when it was used or another call holds it."""
    if state(record) == USED:
        raise invalid_input(used)
    if held(record):
        raise invalid_input(busy)
    mine = secrets.token_hex(8)
    record["holder"] = {
        "id": mine,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "until": stamp(records.now() + LEASE),
    }
    return mine


def holds(record: dict[str, Any], mine: str) -> bool:
    holder = record.get("holder")
    return isinstance(holder, dict) and holder.get("id") == mine


def let_go(record: dict[str, Any], mine: str) -> None:
    """Give the record back in the state it has (only the holder can)."""
    if holds(record, mine):
        record.pop("holder", None)


def settle(record: dict[str, Any]) -> None:
    """planned -> applied; any other state stays as it is (an undo may have taken the record meanwhile)."""
    if state(record) == PLANNED:
        record["state"] = APPLIED
        record.pop("holder", None)


def use(record: dict[str, Any]) -> None:
    """-> used, for good."""
    record["state"] = USED
    record["used"] = True
    record["used_at"] = stamp(records.now())
    record.pop("holder", None)
