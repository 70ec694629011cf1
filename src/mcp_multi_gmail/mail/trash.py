"""mg_trash_message: one message to Trash with UID MOVE, verified; never \\Deleted + EXPUNGE.

What Gmail does with an expunge depends on the user's IMAP settings (one of which deletes
forever), so the only move used is MOVE to the folder flagged \\Trash.
"""

from __future__ import annotations

from ..config import Account
from ..errors import MailError, not_found
from ..gmail.imap import ALL_MAIL, TRASH, ImapSession
from ..runtime import Runtime
from . import inputs
from .read import in_session
from .results import TrashResult

KEPT = "The message is in Trash, not deleted: Gmail keeps it there for 30 days and it can be restored until then."


def _in_trash(session: ImapSession, bare: str) -> int | None:
    session.open(TRASH)
    uids = session.search_raw(f'rfc822msgid:"{bare}"')
    return max(uids) if uids else None


def _trash(session: ImapSession, account: Account, bare: str) -> TrashResult:
    all_mail = session.folder(ALL_MAIL)
    trash = session.folder(TRASH)  # both resolved first: names are localised
    session.open(ALL_MAIL, writable=True)
    uids = session.search_raw(f'rfc822msgid:"{bare}"')
    if not uids:
        already = _in_trash(session, bare)
        if already is None:
            raise not_found(
                f'No message with Message-ID <{bare}> in mailbox "{account.name}": it is neither in the mail '
                "itself nor in Trash."
            )
        return TrashResult(
            account=account.name,
            message_id=bare,
            folder=trash,
            moved=False,
            uid_in_trash=already,
            note=f"The message was already in Trash, so nothing was moved. {KEPT}",
        )
    if not session.move([max(uids)], TRASH):
        raise MailError(
            "upstream_error",
            f'Gmail refused to move <{bare}> from "{all_mail}" to "{trash}" in mailbox "{account.name}". '
            "The message has not been touched.",
        )
    landed = _in_trash(session, bare)
    if landed is None:
        raise MailError(
            "upstream_error",
            f'Gmail accepted the move of <{bare}> but the message is not in "{trash}" afterwards. Check the '
            "mailbox in Gmail before doing anything else.",
        )
    return TrashResult(account=account.name, message_id=bare, folder=trash, moved=True, uid_in_trash=landed, note=KEPT)


async def trash_message(runtime: Runtime, account_name: str, message_id: str) -> TrashResult:
    account = runtime.account(account_name)
    bare = inputs.message_id(message_id)
    return await in_session(runtime, account, lambda s: _trash(s, account, bare))
