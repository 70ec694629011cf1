"""Follow-ups the pass, the send path and the follow-up tools share: the threads that wait for an
answer (`waiting`), a thread's reminder labels written and read back (`threads`), and what a pass
or the watcher brings back (`due`)."""

from .due import DUE_KEY_PREFIX, DueReminder, FollowUps, due_keys, follow_ups, is_due
from .threads import RemindResult, ReplyReminder, change_thread, check_reply_by, remind_message
from .waiting import AwaitingEntry, ReminderInfo, scan

__all__ = [
    "DUE_KEY_PREFIX",
    "AwaitingEntry",
    "DueReminder",
    "FollowUps",
    "RemindResult",
    "ReminderInfo",
    "ReplyReminder",
    "change_thread",
    "check_reply_by",
    "due_keys",
    "follow_ups",
    "is_due",
    "remind_message",
    "scan",
]
