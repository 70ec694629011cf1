"""The one place every write permission is decided.

Sending, recipients, sender aliases, outgoing attachments, labels, flags, the size limit and
unsubscribing are all checked here and nowhere else, one module per subject: `sending`,
`attachments`, `labels` (labels, flags and sweeps), `unsubscribing`, `reminders` (the reminder
labels' own family, docs/pripominky.md), over `common`. The functions
are pure (apart from `realpath`/`stat` for attachments) and take the configured values as plain
parameters. Every refusal raises `MailError` with an English message that says what is allowed,
and never suggests that the assistant widen a permission: that is the user's decision alone.

This face hands on the names the rest of the server uses (`policy.check_recipients`, ...).
"""

from ..headers import check_header_value  # re-exported for callers, as before the split
from . import reminders
from .attachments import MAX_ATTACHMENTS, AllowedAttachment, check_single_name, resolve_attachments
from .common import check_count
from .labels import (
    ALLOWED_FLAGS,
    SWEEP_FLAGS,
    SweepChange,
    check_flags,
    check_message_label,
    check_sweep_change,
    check_sweep_size,
    check_thread_label,
    imap_flag,
)
from .sending import (
    MAX_MESSAGE_BYTES,
    MAX_MESSAGE_MB,
    MAX_RECIPIENTS,
    MAX_REFERENCES,
    check_can_send,
    check_has_to,
    check_message_size,
    check_recipients,
    resolve_sender,
)
from .unsubscribing import (
    MAX_OPT_OUT_BODY,
    MAX_OPT_OUT_SUBJECT,
    ONE_CLICK_PORT,
    OPT_OUT_TEXT,
    OptOut,
    check_can_unsubscribe,
    check_mailto,
    check_one_click,
    one_click_target,
    why_not_mailto,
    why_not_one_click,
)

__all__ = [
    "ALLOWED_FLAGS",
    "MAX_ATTACHMENTS",
    "MAX_MESSAGE_BYTES",
    "MAX_MESSAGE_MB",
    "MAX_OPT_OUT_BODY",
    "MAX_OPT_OUT_SUBJECT",
    "MAX_RECIPIENTS",
    "MAX_REFERENCES",
    "ONE_CLICK_PORT",
    "OPT_OUT_TEXT",
    "SWEEP_FLAGS",
    "AllowedAttachment",
    "OptOut",
    "SweepChange",
    "check_can_send",
    "check_can_unsubscribe",
    "check_count",
    "check_flags",
    "check_has_to",
    "check_header_value",
    "check_mailto",
    "check_message_label",
    "check_message_size",
    "check_one_click",
    "check_recipients",
    "check_single_name",
    "check_sweep_change",
    "check_sweep_size",
    "check_thread_label",
    "imap_flag",
    "one_click_target",
    "reminders",
    "resolve_attachments",
    "resolve_sender",
    "why_not_mailto",
    "why_not_one_click",
]
