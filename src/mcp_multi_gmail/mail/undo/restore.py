"""mg_undo: set back exactly what one write changed, per message and per attribute, and read it back.

A message is found by its X-GM-MSGID (the recorded All Mail UID first, checked by a FETCH of
its X-GM-MSGID; a search by X-GM-MSGID for any that moved). Each attribute of each message is
set back only when it is still in the state the write left; otherwise someone changed it since,
and it is left alone and reported in `skipped`. A trashed message goes back to the Inbox if it
was there, else to All Mail, and gets back the labels it had. Commands come in batches, never
one per message.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ...config import Account
from ...gmail.imap import ALL_MAIL, TRASH, Fetched, ImapSession
from ...gmail.parse.envelope import gmail_id
from ...runtime import Runtime
from ..core import budget
from ..core.session import in_session
from ..core.summary import INBOX, carries
from . import record as undo

MAX_LISTED = 50  # skipped and failed messages listed; the counts are always whole


class UndoneMessage(BaseModel):
    message_id: str = Field(description="Message-ID, or the id shown for a message without one")
    change: str = Field(description='What the write did to it, e.g. label "Asistent" added')
    outcome: Literal["skipped", "failed"]
    reason: str


class UndoResult(BaseModel):
    account: str
    undone: str = Field(description="The tool whose write this was")
    restored: int = Field(description="Changes set back (a message counts once per attribute)")
    skipped: int = Field(description="Left alone: changed by someone since the write, or gone")
    failed: int = Field(description="Gmail did not take the change back when it was read back")
    messages: list[UndoneMessage] = Field(description=f"Skipped and failed ones, at most {MAX_LISTED}")
    cut: list[budget.Cut] = budget.cut_field()


class _Tally:
    def __init__(self) -> None:
        self.restored = 0
        self.listed: list[tuple[int, str, Literal["skipped", "failed"], str]] = []

    def skip(self, msgid: int, group: undo.Group, reason: str) -> None:
        self.listed.append((msgid, group.describe(), "skipped", reason))

    def fail(self, msgid: int, group: undo.Group, reason: str) -> None:
        self.listed.append((msgid, group.describe(), "failed", reason))


def _has(item: Fetched, group: undo.Group) -> bool:
    values = item.labels if group.attribute == "label" else item.flags
    return carries(values or (), group.name)


def _locate(session: ImapSession, wanted: dict[int, int], uidvalidity: int | None) -> dict[int, Fetched]:
    """X-GM-MSGID -> the message's state in the open folder: the recorded UIDs first, then a search."""
    items = ["X-GM-MSGID", "X-GM-LABELS", "FLAGS"]
    found: dict[int, Fetched] = {}
    if uidvalidity is not None and uidvalidity == undo.uidvalidity(session):
        for item in session.fetch(sorted(wanted.values()), items).values():
            if item.gmail_msgid in wanted and wanted[item.gmail_msgid] == item.uid:
                found[item.gmail_msgid] = item
    missing = [msgid for msgid in wanted if msgid not in found]
    if missing:
        for item in session.fetch(session.search_gmail_msgids(missing), items).values():
            if item.gmail_msgid is not None:
                found[item.gmail_msgid] = item
    return found


def _attributes(session: ImapSession, claimed: undo.Claimed, groups: list[undo.Group], tally: _Tally) -> None:
    session.open(ALL_MAIL, writable=True)
    wanted = {msgid: uid for g in groups for msgid, uid in g.messages.items() if msgid not in g.failed}
    state = _locate(session, wanted, claimed.uidvalidity)
    # Labels the write took off go back on first, then the added ones come off: an interrupted undo
    # of a classification leaves a thread with two classifications, never with none.
    plans: list[tuple[undo.Group, list[int]]] = []
    for group in sorted(groups, key=lambda g: g.on):
        revert: list[int] = []
        for msgid in group.messages:
            if msgid in group.failed:
                continue
            item = state.get(msgid)
            if item is None:
                tally.skip(msgid, group, "no longer in All Mail (moved to Trash or deleted since)")
            elif _has(item, group) is not group.on:
                tally.skip(
                    msgid,
                    group,
                    "not in the state the write left (changed since, or the write never reached it): left as it is",
                )
            else:
                revert.append(item.uid)
        if revert:
            if group.attribute == "label":
                session.change_labels(revert, [group.name], add=not group.on)
            else:
                session.change_flags(revert, [group.name], add=not group.on)
        plans.append((group, revert))
    touched = sorted({uid for _g, uids in plans for uid in uids})
    after = session.fetch(touched, ["X-GM-LABELS", "FLAGS", "X-GM-MSGID"]) if touched else {}
    msgid_of = {item.uid: msgid for msgid, item in state.items()}
    for group, uids in plans:
        for uid in uids:
            item = after.get(uid)
            if item is not None and _has(item, group) is not group.on:
                tally.restored += 1
            else:
                tally.fail(msgid_of[uid], group, "Gmail did not take it back when it was read back")


def _user_labels(group: undo.Group, msgid: int) -> list[str]:
    """The labels a message had before the trash that a STORE can put back (system labels aside)."""
    return [lb for lb in group.labels.get(msgid, ()) if not lb.startswith("\\")]


def _out_of_trash(session: ImapSession, group: undo.Group, tally: _Tally) -> None:
    session.open(TRASH, writable=True)
    wanted = [msgid for msgid in group.messages if msgid not in group.failed]
    in_trash = {
        item.gmail_msgid: uid
        for uid, item in session.fetch(session.search_gmail_msgids(wanted), ["X-GM-MSGID"]).items()
        if item.gmail_msgid is not None
    }
    for msgid in wanted:
        if msgid not in in_trash:
            tally.skip(msgid, group, "no longer in Trash (restored or deleted for good since)")
    back = [msgid for msgid in wanted if msgid in in_trash]
    to_inbox = [in_trash[m] for m in back if carries(group.labels.get(m, ()), INBOX)]
    to_all = [in_trash[m] for m in back if not carries(group.labels.get(m, ()), INBOX)]
    if to_inbox:
        session.move(to_inbox, "INBOX")
    # Out of Trash into All Mail; should Gmail refuse a move into All Mail, through the Inbox, whose
    # label then comes off again.
    via_inbox = bool(to_all) and not session.move(to_all, ALL_MAIL) and session.move(to_all, "INBOX")
    if not back:
        return
    session.open(ALL_MAIL, writable=True)
    if via_inbox:
        archived = [m for m in back if not carries(group.labels.get(m, ()), INBOX)]
        session.change_labels(session.search_gmail_msgids(archived), [INBOX], add=False)
    landed = {
        item.gmail_msgid: item
        for item in session.fetch(session.search_gmail_msgids(back), ["X-GM-MSGID", "X-GM-LABELS"]).values()
        if item.gmail_msgid is not None
    }
    # The labels each had before, put back where Gmail's Trash dropped them (system labels aside).
    missing: dict[tuple[str, ...], list[int]] = {}
    for msgid, item in landed.items():
        lacking = tuple(lb for lb in _user_labels(group, msgid) if not carries(item.labels or (), lb))
        if lacking:
            missing.setdefault(lacking, []).append(item.uid)
    for labels, uids in missing.items():
        session.change_labels(uids, list(labels), add=True)
    after = session.fetch(sorted(i.uid for i in landed.values()), ["X-GM-MSGID", "X-GM-LABELS"])
    _read_back(group, back, {msgid: after.get(item.uid) for msgid, item in landed.items()}, tally)


def _read_back(group: undo.Group, back: list[int], now: dict[int, Fetched | None], tally: _Tally) -> None:
    """Each message out of Trash: in All Mail, with its labels, in the Inbox exactly when it was before."""
    for msgid in back:
        item = now.get(msgid)
        before = group.labels.get(msgid, [])
        if item is None:
            tally.fail(msgid, group, "Gmail accepted the move out of Trash but the message is not in All Mail")
        elif any(not carries(item.labels or (), lb) for lb in _user_labels(group, msgid)):
            tally.fail(msgid, group, "back from Trash, but Gmail did not put all of its labels back")
        elif carries(item.labels or (), INBOX) is not carries(before, INBOX):
            tally.fail(
                msgid, group, "back from Trash, but not in the Inbox as it was before (or in it when it was not)"
            )
        else:
            tally.restored += 1


def _listed(session: ImapSession, tally: _Tally) -> list[UndoneMessage]:
    """The skipped and failed ones by their Message-ID where the mailbox still has them (one FETCH)."""
    shown = tally.listed[:MAX_LISTED]
    ids = {msgid: gmail_id(msgid) for msgid, *_ in shown}
    if shown:
        session.open(ALL_MAIL)
        for item in session.fetch(session.search_gmail_msgids(list(ids)), ["ENVELOPE"]).values():
            if item.gmail_msgid in ids and item.envelope is not None and item.envelope.message_id:
                ids[item.gmail_msgid] = item.envelope.message_id
    return [UndoneMessage(message_id=ids[m], change=c, outcome=o, reason=r) for m, c, o, r in shown]


def _undo(runtime: Runtime, session: ImapSession, account: Account, token: str) -> UndoResult:
    claimed = undo.claim(runtime, account, token)
    tally = _Tally()
    try:
        attributes = [g for g in claimed.groups if g.attribute in ("label", "flag")]
        if attributes:
            _attributes(session, claimed, attributes, tally)
        for group in claimed.groups:
            if group.attribute == "trash":
                _out_of_trash(session, group, tally)
    except BaseException:
        if not session.changes_sent:
            undo.release(runtime, claimed)  # nothing went out: the token can be used again
        raise
    messages = _listed(session, tally)
    total = len(tally.listed)
    skipped = sum(1 for entry in tally.listed if entry[2] == "skipped")
    cut = []
    if total > len(messages):
        cut.append(
            budget.Cut(
                field="messages",
                shown=len(messages),
                total=total,
                how_to_get_the_rest="No call lists the rest; skipped and failed give the true counts.",
            )
        )
    return UndoResult(
        account=account.name,
        undone=claimed.tool,
        restored=tally.restored,
        skipped=skipped,
        failed=total - skipped,
        messages=messages,
        cut=cut,
    )


async def undo_write(runtime: Runtime, account_name: str, token: str) -> UndoResult:
    account = runtime.account(account_name)
    token = token.strip()
    return await in_session(runtime, account, lambda s: _undo(runtime, s, account, token))
