"""Work over a whole mailbox: `sweep` (mg_sweep: preview, re-check, batches read back)."""

from . import sweep
from .sweep import SweepResult

__all__ = ["SweepResult", "sweep"]
