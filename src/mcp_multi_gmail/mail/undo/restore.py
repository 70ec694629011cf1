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
from ..core import budget, writes
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
    restored: int = Field(
        description="Changes set back (a message counts once per attribute), also by an earlier call of this "
        "token that was cut off"
    )
    skipped: int = Field(description="Left alone: changed by someone since the write, or gone")
    failed: int = Field(description="Gmail did not take the change back when it was read back")
    messages: list[UndoneMessage] = Field(description=f"Skipped and failed ones, at most {MAX_LISTED}")
    changes: list[writes.AttributeChange] = writes.changes_field()
    cut: list[budget.Cut] = budget.cut_field()


class _Tally:
    def __init__(self) -> None:
        self.restored = 0
        self.listed: list[tuple[int, str, Literal["skipped", "failed"], str]] = []
        self.entries: list[writes.AttributeChange] = []

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


def _attributes(
    runtime: Runtime, session: ImapSession, claimed: undo.Claimed, groups: list[undo.Group], tally: _Tally
) -> None:
    session.open(ALL_MAIL, writable=True)
    wanted = {msgid: uid for g in groups for msgid, uid in g.messages.items() if msgid not in g.failed}
    state = _locate(session, wanted, claimed.uidvalidity)
    before = {item.uid: item for item in state.values()}
    # Labels the write took off go back on first, then the added ones come off: an interrupted undo
    # of a classification leaves a thread with two classifications, never with none.
    wants: list[tuple[undo.Group, writes.Want, int]] = []
    for group in sorted(groups, key=lambda g: g.on):
        revert: list[int] = []
        earlier = left = 0
        for msgid in group.messages:
            if msgid in group.failed:
                continue
            item = state.get(msgid)
            if item is None:
                tally.skip(msgid, group, "no longer in All Mail (moved to Trash or deleted since)")
            elif _has(item, group) is group.on:
                revert.append(item.uid)
                group.undoing.add(msgid)
            elif msgid in group.undoing:
                earlier += 1  # set back by an earlier call of this token that was cut off
            else:
                left += 1
                tally.skip(
                    msgid,
                    group,
                    "not in the state the write left (changed since, or the write never reached it): left as it is",
                )
        attribute: Literal["label", "flag"] = "label" if group.attribute == "label" else "flag"
        wants.append((group, writes.Want(attribute, group.name, not group.on, revert), earlier + left))
        tally.restored += earlier
    if any(want.uids for _g, want, _e in wants):
        undo.progress(runtime, claimed)  # fsync'd before the first STORE
    writes.apply(session, before, [want for _g, want, _e in wants])
    msgid_of = {item.uid: msgid for msgid, item in state.items()}
    for group, want, already in wants:
        tally.restored += len(want.changed) + len(want.already)
        for uid in sorted(want.failed):
            tally.fail(msgid_of[uid], group, "Gmail did not take it back when it was read back")
        entry = want.entry()
        entry.already += already
        tally.entries.append(entry)


def _user_labels(group: undo.Group, msgid: int) -> list[str]:
    """The labels a message had before the trash that a STORE can put back (system labels aside)."""
    return [lb for lb in group.labels.get(msgid, ()) if not lb.startswith("\\")]


def _move_out(session: ImapSession, group: undo.Group, back: list[int], in_trash: dict[int, int]) -> bool:
    """Out of Trash, into the Inbox where a message was there before; True when the rest went through the
    Inbox (Gmail refused a move into All Mail), whose label then comes off again."""
    to_inbox = [in_trash[m] for m in back if carries(group.labels.get(m, ()), INBOX)]
    to_all = [in_trash[m] for m in back if not carries(group.labels.get(m, ()), INBOX)]
    if to_inbox:
        session.move(to_inbox, "INBOX")
    return bool(to_all) and not session.move(to_all, ALL_MAIL) and session.move(to_all, "INBOX")


def _out_of_trash(
    runtime: Runtime, session: ImapSession, claimed: undo.Claimed, group: undo.Group, tally: _Tally
) -> None:
    trash = session.open(TRASH, writable=True)
    wanted = [msgid for msgid in group.messages if msgid not in group.failed]
    in_trash = {
        item.gmail_msgid: uid
        for uid, item in session.fetch(session.search_gmail_msgids(wanted), ["X-GM-MSGID"]).items()
        if item.gmail_msgid is not None
    }
    # Out of Trash already but in `undoing`: an earlier call of this token moved it and was cut off;
    # its labels are checked and finished below.
    resumed = [msgid for msgid in wanted if msgid not in in_trash and msgid in group.undoing]
    for msgid in wanted:
        if msgid in in_trash:
            group.undoing.add(msgid)
        elif msgid not in group.undoing:
            tally.skip(msgid, group, "no longer in Trash (restored or deleted for good since)")
    back = [msgid for msgid in wanted if msgid in in_trash]
    if back:
        undo.progress(runtime, claimed)  # fsync'd before the first MOVE
    via_inbox = _move_out(session, group, back, in_trash)
    if not back and not resumed:
        return
    entry = writes.AttributeChange(attribute="trash", name=trash, action="removed", changed=0, already=0, failed=0)
    tally.entries.append(entry)
    session.open(ALL_MAIL, writable=True)
    if via_inbox:
        archived = [m for m in back if not carries(group.labels.get(m, ()), INBOX)]
        session.change_labels(session.search_gmail_msgids(archived), [INBOX], add=False)
    landed = {
        item.gmail_msgid: item
        for item in session.fetch(session.search_gmail_msgids(back + resumed), ["X-GM-MSGID", "X-GM-LABELS"]).values()
        if item.gmail_msgid is not None
    }
    for msgid in resumed:
        if msgid not in landed:
            tally.skip(msgid, group, "no longer in All Mail (moved to Trash again or deleted since)")
    # The labels each had before, put back where Gmail's Trash dropped them (system labels aside).
    missing: dict[tuple[str, ...], list[int]] = {}
    for msgid, item in landed.items():
        lacking = tuple(lb for lb in _user_labels(group, msgid) if not carries(item.labels or (), lb))
        if lacking:
            missing.setdefault(lacking, []).append(item.uid)
    for labels, uids in missing.items():
        session.change_labels(uids, list(labels), add=True)
    after = session.fetch(sorted(i.uid for i in landed.values()), ["X-GM-MSGID", "X-GM-LABELS"])
    now = {msgid: after.get(item.uid) for msgid, item in landed.items()}
    restored, failed = tally.restored, len(tally.listed)
    _read_back(group, back, now, tally)
    entry.changed, entry.failed = tally.restored - restored, len(tally.listed) - failed
    entry.already = len(resumed)
    _read_back(group, [m for m in resumed if m in landed], now, tally)


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
            _attributes(runtime, session, claimed, attributes, tally)
        for group in claimed.groups:
            if group.attribute == "trash":
                _out_of_trash(runtime, session, claimed, group, tally)
    except BaseException:
        # Not finished: the token stays usable, and a repeat sets back only what is still to do.
        undo.release(runtime, claimed)
        raise
    undo.finish(runtime, claimed)
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
        changes=tally.entries,
        cut=cut,
    )


async def undo_write(runtime: Runtime, account_name: str, token: str) -> UndoResult:
    account = runtime.account(account_name)
    token = token.strip()
    return await in_session(runtime, account, lambda s: _undo(runtime, s, account, token))
