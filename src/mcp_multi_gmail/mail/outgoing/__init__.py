"""Outgoing mail the assistant keeps or throws away: `drafts` (save one, list them) and `trash`."""

from . import drafts, trash
from .drafts import DraftResult, DraftsResult
from .trash import TrashResult

__all__ = ["DraftResult", "DraftsResult", "TrashResult", "drafts", "trash"]
