"""Reading: threads by Gmail's search (`search`), a thread, a message and the label list
(`messages`), body windows (`bodies`), one attachment saved into the download folder
(`attachments`)."""

from . import attachments, messages, search
from .attachments import AttachmentResult
from .messages import LabelsResult, MessageResult, ThreadResult
from .search import SearchResult

__all__ = [
    "AttachmentResult",
    "LabelsResult",
    "MessageResult",
    "SearchResult",
    "ThreadResult",
    "attachments",
    "messages",
    "search",
]
