"""A reminder on a thread, kept in the mailbox as a label (docs/pripominky.md, docs/en/follow-ups.md).

A reminder is one label of the reminder family (policy_reminders) on every message of the thread.
Setting one takes the thread's other dated reminders off (a move), clearing takes the whole family
off the thread, and "expect nothing" puts its mark on (and takes reply reminders off). The labels
are read back by FETCH; the write is recorded first so mg_undo can take it back. Nothing is kept
on disk but the undo record: the labels are the reminders.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from ...config import Account
from ...errors import MailError, not_found
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession
from ...policy import reminders as family
from ...runtime import Runtime
from .. import undo
from ..core import budget, writes
from ..core.lookup import ensure_label, or_tree
from ..core.session import in_session
from ..core.summary import carries
from .waiting import ReminderInfo


class RemindResult(BaseModel):
    account: str
    thread_id: str
    reminder: ReminderInfo | None = Field(description="The thread's reminder now; null when it has none")
    expect_nothing: bool = Field(description="The thread is marked as expecting no answer")
    added: list[str] = Field(description="Reminder labels put on")
    removed: list[str] = Field(description="Reminder labels taken off (a reminder moved, cleared or answered)")
    messages: int = Field(description="Messages of the thread")
    changes: list[writes.AttributeChange] = writes.changes_field()
    undo_token: str | None = undo.undo_token_field()
    cut: list[budget.Cut] = budget.cut_field()


def thread_uids(session: ImapSession, account: Account, thread: int) -> dict[int, Fetched]:
    """Every message of the thread with its labels (All Mail open); not_found when there is none."""
    uids = session.search(or_tree([thread]))
    if not uids:
        raise not_found(
            f'No thread {thread} in mailbox "{account.name}". Thread ids come from mg_awaiting_replies, '
            "mg_next_pass or mg_search_threads."
        )
    return session.fetch(uids, ["X-GM-THRID", *writes.READ_BACK])


def change_thread(
    runtime: Runtime,
    session: ImapSession,
    account: Account,
    thread: int,
    add: str | None,
    drop: Callable[[str], bool],
    tool: str,
) -> RemindResult:
    """Put `add` on every message of the thread and take off its family labels `drop` names, through
    the one label routine (core/writes: recorded for undo first, read back batch by batch)."""
    parent = account.reminder_label
    session.open(ALL_MAIL, writable=True)
    before = thread_uids(session, account, thread)
    uids = sorted(before)
    present = sorted({lb for item in before.values() for lb in item.labels or () if family.is_family(parent, lb)})
    going = [lb for lb in present if drop(lb) and (add is None or lb.casefold() != add.casefold())]
    wants: list[writes.Want] = []
    if add is not None:
        ensure_label(session, add)
        wants.append(writes.Want("label", add, True, uids))
    wants += [writes.Want("label", lb, False, [u for u in uids if carries(before[u].labels, lb)]) for lb in going]
    recorder = undo.Recorder(runtime, account, tool, session)
    after = writes.apply(session, before, wants, recorder=recorder)
    if any(want.failed for want in wants):
        raise MailError(
            "upstream_error",
            f"Gmail did not take every reminder label change on thread {thread} when it was read back. Call "
            "again: the same call changes only what is still missing.",
            retryable=True,
        )
    now_labels = {lb for uid in uids for lb in (after.get(uid) or before[uid]).labels or ()}
    return RemindResult(
        account=account.name,
        thread_id=str(thread),
        reminder=reminder_of(now_labels, parent),
        expect_nothing=any(family.is_expect_nothing(parent, lb) for lb in now_labels),
        added=[w.name for w in wants if w.on and w.changed],
        removed=[w.name for w in wants if not w.on and w.changed],
        messages=len(uids),
        changes=[w.entry() for w in wants],
        undo_token=recorder.token,
    )


def reminder_of(labels: set[str], parent: str) -> ReminderInfo | None:
    """The thread's earliest dated reminder among its labels."""
    dated = sorted((r for lb in labels if (r := family.parse_label(parent, lb)) is not None), key=lambda r: r.sort_key)
    if not dated:
        return None
    first = dated[0]
    return ReminderInfo(kind=first.kind, on=first.shown, label=family.label_name(parent, first))


# ------------------------------------------------------------------ expect_reply_by on send and draft


class ReplyReminder(BaseModel):
    """The reply reminder expect_reply_by set on the new message's thread."""

    set: bool = Field(description="false: the message went out (or was saved) but the reminder is not set")
    reminder: ReminderInfo | None
    undo_token: str | None = undo.undo_token_field()
    error: str | None = Field(default=None, description="Why it is not set; mg_remind can set it")


def check_reply_by(runtime: Runtime, account: Account, text: str) -> family.Reminder:
    """expect_reply_by refused before anything is sent or saved."""
    family.check_parent(account.name, account.reminder_label, account.processed_label, account.classification_labels)
    return family.check_on(text, "reply", runtime.config.zone, runtime.clock())


async def remind_message(
    runtime: Runtime, account: Account, message_id: str, reminder: family.Reminder, tool: str
) -> ReplyReminder:
    """Set a reply reminder on the thread of a message just sent or saved; a failure is reported, never raised."""
    parent = account.reminder_label
    label = family.label_name(parent, reminder)

    def work(session: ImapSession) -> RemindResult:
        session.open(ALL_MAIL)
        uids = session.search_message_id(message_id)
        found = session.fetch(uids[-1:], ["X-GM-THRID"]).get(uids[-1]) if uids else None
        if found is None or found.thread_id is None:
            raise not_found(f"The message <{message_id}> is not in All Mail yet.")
        return change_thread(
            runtime,
            session,
            account,
            found.thread_id,
            label,
            lambda lb: family.parse_label(parent, lb) is not None,
            tool,
        )

    try:
        done = await in_session(runtime, account, work)
    except MailError as error:
        return ReplyReminder(set=False, reminder=None, error=error.message)
    return ReplyReminder(set=True, reminder=done.reminder, undo_token=done.undo_token)
