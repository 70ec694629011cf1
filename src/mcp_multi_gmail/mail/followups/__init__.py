"""The follow-up tools: the replies the user waits for (`awaiting`, mg_awaiting_replies) and a
thread's reminder (`remind`, mg_remind)."""

from . import awaiting, remind
from .awaiting import AwaitingResult

__all__ = ["AwaitingResult", "awaiting", "remind"]
