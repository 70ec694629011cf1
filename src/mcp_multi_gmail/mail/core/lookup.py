"""Looking things up in the open folder, for every tool family: a message by its Message-ID (and
the error when it went away while being read), threads by their ids, a label (made when missing)."""

from __future__ import annotations

from typing import Any

from ...config import Account
from ...errors import MailError, not_found
from ...gmail.imap import ImapSession


def find_message(session: ImapSession, account: Account, bare: str) -> tuple[int, int]:
    """(newest UID, number of copies) of a Message-ID in the open folder.

    The search is `ImapSession.search_message_id`: X-GM-RAW, then the header itself (the index
    lags behind new mail), then the header's words for an id written with spaces or comments.
    """
    uids = session.search_message_id(bare)
    if not uids:
        raise not_found(
            f'No message with Message-ID <{bare}> in mailbox "{account.name}". Message-IDs belong to the '
            "mailbox they were found in; check the mailbox name."
        )
    return max(uids), len(uids)


def disappeared(bare: str, account: Account) -> MailError:
    return not_found(f'The message <{bare}> disappeared from mailbox "{account.name}" while being read.')


def or_tree(thread_ids: list[int]) -> list[Any]:
    """X-GM-THRID a OR-ed with b ... as a balanced prefix tree (shallow even for 100 threads)."""
    if len(thread_ids) == 1:
        return ["X-GM-THRID", thread_ids[0]]
    middle = len(thread_ids) // 2
    return ["OR", or_tree(thread_ids[:middle]), or_tree(thread_ids[middle:])]


def ensure_label(session: ImapSession, label: str) -> bool:
    """Create the label when the mailbox does not have it (Gmail may ignore a STORE of an unknown one)."""
    existing = {name.casefold() for name, _special, _sel in session.all_folders()}
    if label.casefold() in existing:
        return False
    return session.create_label(label)
