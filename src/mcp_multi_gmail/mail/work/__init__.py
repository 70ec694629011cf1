"""The daily work on a mailbox: the pass (`pass_`) over its window scan (`window`, which the
watcher shares), labels and flags (`labels`)."""

from . import labels, pass_
from .labels import MAX_THREADS, FlagsResult, LabelChange, ThreadLabelChange
from .pass_ import PassResult
from .window import scan_window

__all__ = [
    "MAX_THREADS",
    "FlagsResult",
    "LabelChange",
    "PassResult",
    "ThreadLabelChange",
    "labels",
    "pass_",
    "scan_window",
]
