"""mg_trash_message: one message to Trash with UID MOVE, verified; never \\Deleted + EXPUNGE.

What Gmail does with an expunge depends on the user's IMAP settings (one of which deletes
forever), so the only move used is MOVE to the folder flagged \\Trash.
"""

from __future__ import annotations

from pydantic import BaseModel

from ...config import Account
from ...errors import MailError, not_found
from ...gmail.imap import ALL_MAIL, TRASH, ImapSession
from ...runtime import Runtime
from .. import undo
from ..core import budget, inputs, writes
from ..core.session import in_session

KEPT = "The message is in Trash, not deleted: Gmail keeps it there for 30 days and it can be restored until then."


class TrashResult(BaseModel):
    account: str
    message_id: str
    folder: str
    moved: bool
    uid_in_trash: int | None
    note: str
    undo_token: str | None = undo.undo_token_field()
    changes: list[writes.AttributeChange] = writes.changes_field()
    cut: list[budget.Cut] = budget.cut_field()


def _in_trash(
    account: Account, bare: str, trash: str, uid: int, *, moved: bool, note: str, undo_token: str | None = None
) -> TrashResult:
    """The message is in Trash at `uid`: moved there by this call, or found there already."""
    changed = int(moved)
    return TrashResult(
        account=account.name,
        message_id=bare,
        folder=trash,
        moved=moved,
        uid_in_trash=uid,
        note=note,
        undo_token=undo_token,
        changes=[
            writes.AttributeChange(
                attribute="trash", name=trash, action="added", changed=changed, already=1 - changed, failed=0
            )
        ],
    )


def _find(session: ImapSession, bare: str) -> list[int]:
    """UIDs of a Message-ID in the open folder: X-GM-RAW, then (on a miss) the header itself.

    Gmail's search index lags behind new mail, and whether X-GM-RAW finds anything inside Trash at
    all is not documented (the web search leaves Trash out unless asked)."""
    return session.search_message_id(bare)


def _already_in_trash(session: ImapSession, account: Account, bare: str) -> TrashResult:
    trash = session.open(TRASH)
    found = _find(session, bare)
    if not found:
        raise not_found(
            f'No message with Message-ID <{bare}> in mailbox "{account.name}": it is neither in the mail '
            "itself nor in Trash."
        )
    note = f"The message was already in Trash, so nothing was moved. {KEPT}"
    return _in_trash(account, bare, trash, max(found), moved=False, note=note)


def _trash(runtime: Runtime, session: ImapSession, account: Account, bare: str) -> TrashResult:
    all_mail = session.folder(ALL_MAIL)
    trash = session.folder(TRASH)  # both resolved first: names are localised
    session.open(ALL_MAIL, writable=True)
    uids = _find(session, bare)
    if not uids:
        return _already_in_trash(session, account, bare)
    uid = max(uids)
    # Gmail's own id of the message, read before the move: it stays the same in Trash, where it is
    # looked up without the search index.
    item = session.fetch([uid], ["X-GM-MSGID", "X-GM-LABELS"]).get(uid)
    if item is None or item.gmail_msgid is None:
        raise MailError(
            "upstream_error",
            f'The message <{bare}> could not be read in mailbox "{account.name}" just before moving it to '
            "Trash, so it was not moved. Try again.",
            retryable=True,
        )
    # Gmail's Trash keeps no user labels in All Mail's view: they are recorded to be put back on undo.
    recorder = undo.Recorder(runtime, account, "mg_trash_message", session)
    group = undo.Group("trash", "", True, {item.gmail_msgid: uid}, labels={item.gmail_msgid: list(item.labels or ())})
    recorder.plan([group])
    if not session.move([uid], TRASH):
        group.failed = {item.gmail_msgid}
        recorder.finish()
        raise MailError(
            "upstream_error",
            f'Gmail refused to move <{bare}> from "{all_mail}" to "{trash}" in mailbox "{account.name}". '
            "The message has not been touched.",
        )
    session.open(TRASH)
    landed = session.search_gmail_msgid(item.gmail_msgid)
    group.failed = set() if landed else {item.gmail_msgid}
    recorder.finish()
    if not landed:
        raise MailError(
            "upstream_error",
            f'Gmail accepted the move of <{bare}> but the message is not in "{trash}" afterwards. Check the '
            "mailbox in Gmail before doing anything else.",
        )
    return _in_trash(account, bare, trash, max(landed), moved=True, note=KEPT, undo_token=recorder.token)


async def trash_message(runtime: Runtime, account_name: str, message_id: str) -> TrashResult:
    account = runtime.account(account_name)
    bare = inputs.message_id(message_id)
    return await in_session(runtime, account, lambda s: _trash(runtime, s, account, bare))
