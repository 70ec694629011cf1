"""Undo: what a write will change, recorded before it goes out (`record`: every write tool plans
and settles its record through the names handed on here), the record files in the state folder
(`records`), the one life cycle of a sweep's confirm_token and an undo token (`tokens`: planned,
applied, used), and taking a write back (`restore`, mg_undo)."""

from . import restore
from .record import (
    Claimed,
    Group,
    Recorder,
    claim,
    msgids,
    plan,
    release,
    reserve,
    settle,
    uidvalidity,
    undo_token_field,
)
from .restore import UndoResult

__all__ = [
    "Claimed",
    "Group",
    "Recorder",
    "UndoResult",
    "claim",
    "msgids",
    "plan",
    "release",
    "reserve",
    "restore",
    "settle",
    "uidvalidity",
    "undo_token_field",
]
