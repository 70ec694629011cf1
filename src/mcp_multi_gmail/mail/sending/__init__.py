"""The send path, for every family that sends mail: what drafts and sends share (`prepare`:
signature, attachments, the original of a reply), the send journal (`journal`), and `send`
(mg_send, and a mailto opt-out: once through SMTP, the Sent copy read back)."""

from . import send
from .send import SendResult, SentCopy, send_prepared

__all__ = ["SendResult", "SentCopy", "send", "send_prepared"]
