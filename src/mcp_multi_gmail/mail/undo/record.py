"""What a write changes, written down before it goes out, so that mg_undo can take exactly that back.

A write is one or more groups: one attribute (a label, a flag, or the message's place for a
trash) set one way on a set of messages, each by its X-GM-MSGID (which stays the same when a
message moves) and its All Mail UID at the time (a hint that saves a search). Only messages the
write really changes are listed: a message that already had the label is not in the record, so
an undo never takes off a label it had before. After the read-back, messages the change did not
take on are marked failed: an undo leaves them alone.

The record file and its lock are `records`'; restoring is `restore`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from ...config import Account
from ...errors import invalid_input, not_found
from ...gmail.imap import Fetched, ImapSession
from ...runtime import Runtime
from ..core import writes
from . import records, tokens
from .records import KEEP, UNDO_PREFIX, Records, new_token, parse_stamp, stamp

WHAT = "undo"


@dataclass
class Group:
    """One attribute of many messages, set one way by the write."""

    attribute: str  # "label", "flag" or "trash"
    name: str  # the label, the IMAP flag; "" for trash
    on: bool  # the state the write leaves (trash: True, in Trash)
    messages: dict[int, int] = field(default_factory=dict)  # X-GM-MSGID -> All Mail UID before the write
    failed: set[int] = field(default_factory=set)  # read back not changed: the undo leaves them alone
    labels: dict[int, list[str]] = field(default_factory=dict)  # trash: each message's labels before
    undoing: set[int] = field(default_factory=set)  # an undo is setting these back (or has)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "attribute": self.attribute,
            "name": self.name,
            "on": self.on,
            "messages": [[msgid, uid] for msgid, uid in self.messages.items()],
            "failed": sorted(self.failed),
        }
        if self.undoing:
            body["undoing"] = sorted(self.undoing)
        if self.labels:
            body["labels"] = {str(msgid): names for msgid, names in self.labels.items()}
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Group:
        return cls(
            attribute=str(body["attribute"]),
            name=str(body["name"]),
            on=bool(body["on"]),
            messages={int(msgid): int(uid) for msgid, uid in body["messages"]},
            failed={int(m) for m in body.get("failed", [])},
            labels={int(k): [str(n) for n in v] for k, v in body.get("labels", {}).items()},
            undoing={int(m) for m in body.get("undoing", [])},
        )

    def describe(self) -> str:
        if self.attribute == "trash":
            return "moved to Trash"
        verb = ("added" if self.on else "removed") if self.attribute == "label" else ("set" if self.on else "cleared")
        return f'{self.attribute} "{self.name}" {verb}'


def _records(runtime: Runtime) -> Records:
    return Records(runtime.state_folder())


def reserve(runtime: Runtime, account: Account, tool: str) -> str:
    """A token for a write that has not been planned yet (a sweep's preview); an undo of it finds nothing."""
    token = new_token(UNDO_PREFIX)
    body: dict[str, Any] = {"kind": WHAT, "account": account.name, "tool": tool, "created": stamp(records.now())}
    body |= {"state": tokens.PLANNED, "reserved": True, "groups": [], "all_mail_uidvalidity": None}
    _records(runtime).create(token, body, WHAT)
    return token


BUSY = (
    "This undo token's write is still being applied, or another mg_undo of it is still going on. Nothing was "
    "changed. Try again when that call has finished."
)


def _used(record: dict[str, Any]) -> str:
    return (
        f"This undo token was already used at {record.get('used_at', '?')} (UTC); each undoes its write once. "
        "Nothing was changed."
    )


def plan(
    runtime: Runtime,
    account: Account,
    tool: str,
    groups: list[Group],
    uidvalidity: int | None,
    token: str | None = None,
) -> tuple[str | None, str | None]:
    """Write down what the write will change, fsync'd, before it goes out, held by this call. Returns the
    undo token (None, and no record, when nothing will change) and this call's hold on it. Raises
    MailError, with nothing changed, when it cannot be written."""
    groups = [g for g in groups if g.messages]
    if not groups and token is None:
        return None, None
    body = {
        "kind": WHAT,
        "account": account.name,
        "tool": tool,
        "created": stamp(records.now()),
        "state": tokens.PLANNED,
        "all_mail_uidvalidity": uidvalidity,
        "groups": [g.to_json() for g in groups],
    }
    store = _records(runtime)
    holder: list[str] = []
    if token is None:
        token = new_token(UNDO_PREFIX)
        fresh: dict[str, Any] = dict(body)
        holder.append(tokens.hold(fresh, busy=BUSY, used=""))
        store.create(token, fresh, WHAT)
    else:

        def planned(record: dict[str, Any]) -> None:
            if tokens.state(record) != tokens.PLANNED:
                raise invalid_input(_used(record))
            holder.append(tokens.hold(record, busy=BUSY, used=_used(record)))
            record.pop("reserved", None)
            record.update({k: v for k, v in body.items() if k != "created"})

        store.update(token, WHAT, planned)
    return token, holder[0]


def settle(
    runtime: Runtime, token: str | None, holder: str | None, groups: list[Group], *, complete: bool = True
) -> None:
    """Complete the record with what the read-back showed (the failed messages of each group); with
    `complete`, planned -> applied. Only the call holding the record writes it."""
    if token is None or holder is None:
        return

    def settled(record: dict[str, Any]) -> None:
        if not tokens.holds(record, holder):
            return  # its lease ran out and another call took it: that call's state stands
        record["groups"] = [g.to_json() for g in groups if g.messages]
        if complete:
            tokens.settle(record)

    # On failure the planned record stands: an undo checks each message's state before touching it.
    records.after_error(lambda: _records(runtime).update(token, WHAT, settled), "záznam pro vrácení změn")


@dataclass
class Claimed:
    token: str
    tool: str
    uidvalidity: int | None
    groups: list[Group]
    holder: str


def hold_token(
    runtime: Runtime,
    token: str,
    kind: str,
    account: Account,
    check: Callable[[dict[str, Any]], str],
    *,
    not_this_kind: str,
    other_mailbox: str,
) -> dict[str, Any]:
    """A token's record under its lock: of this kind, this mailbox's, then `check` (which holds it); with its holder."""
    found: dict[str, Any] = {}

    def take(record: dict[str, Any]) -> None:
        if record.get("kind") != kind:
            raise invalid_input(not_this_kind)
        if record["account"] != account.name:
            raise invalid_input(other_mailbox)
        holder = check(record)
        found.update(record)
        found["holder"] = holder

    _records(runtime).update(token, kind, take)
    return found


def claim(runtime: Runtime, account: Account, token: str) -> Claimed:
    """Take a token for one undo: it must exist, be this mailbox's, not used, within its 7 days, and held by
    no other call. It is used for good only when the undo has finished (`finish`)."""
    if not token.startswith(UNDO_PREFIX):
        raise invalid_input(
            "That is not an undo token (they start with undo_); a sweep's confirm_token applies the sweep instead."
        )
    moment = records.now()

    def check(record: dict[str, Any]) -> str:
        created = parse_stamp(record["created"])
        if tokens.state(record) == tokens.USED:
            raise invalid_input(_used(record))
        if moment - created >= KEEP:
            raise invalid_input(
                f"This undo token expired: it is valid 7 days after the write ({stamp(created)} UTC). Nothing was "
                "changed. What is still to be set back can be done with the label and flag tools."
            )
        if record.get("reserved") or record.get("state") == "reserved":
            raise not_found(
                "This undo token belongs to a sweep that was previewed but never applied, so there is nothing to "
                "undo. Nothing was changed."
            )
        return tokens.hold(record, busy=BUSY, used=_used(record))

    found = hold_token(
        runtime,
        token,
        WHAT,
        account,
        check,
        not_this_kind="That token is not an undo token. Nothing was changed.",
        other_mailbox=f'This undo token was issued for another mailbox, not "{account.name}". Nothing was changed. '
        "Call mg_undo with the mailbox of the write it came from.",
    )
    return Claimed(
        token=token,
        tool=str(found.get("tool", "")),
        uidvalidity=found.get("all_mail_uidvalidity"),
        groups=[Group.from_json(g) for g in found.get("groups", [])],
        holder=str(found["holder"]),
    )


def progress(runtime: Runtime, claimed: Claimed) -> None:
    """Write down, fsync'd, which messages the undo is about to set back (each group's `undoing`), before
    its first change goes out: a call that repeats an interrupted undo counts them as set back."""

    def noted(record: dict[str, Any]) -> None:
        if tokens.holds(record, claimed.holder):
            record["groups"] = [g.to_json() for g in claimed.groups]

    _records(runtime).update(claimed.token, WHAT, noted)


def finish(runtime: Runtime, claimed: Claimed) -> None:
    """The undo has finished: the token is used, for good."""

    def used(record: dict[str, Any]) -> None:
        if tokens.holds(record, claimed.holder):
            tokens.use(record)

    # Not written: the token stays usable, and a repeat finds every message set back already.
    records.after_error(lambda: _records(runtime).update(claimed.token, WHAT, used), "záznam pro vrácení změn")


def release(runtime: Runtime, claimed: Claimed) -> None:
    """Give the token back after an undo that did not finish: a repeat finishes the rest."""
    records.after_error(
        lambda: _records(runtime).update(claimed.token, WHAT, lambda r: tokens.let_go(r, claimed.holder)),
        "záznam pro vrácení změn",
    )


def msgids(items: dict[int, Fetched], uids: list[int]) -> dict[int, int]:
    """X-GM-MSGID -> UID of these messages (the undo record's key, which stays when a message moves)."""
    return {item.gmail_msgid: uid for uid in uids if (item := items.get(uid)) and item.gmail_msgid is not None}


def undo_token_field() -> Any:
    """The `undo_token` of every write tool's result."""
    return Field(
        default=None,
        description="mg_undo takes this write back exactly (valid 7 days, once); null when nothing was changed",
    )


def uidvalidity(session: ImapSession) -> int | None:
    """UIDVALIDITY of the open folder (All Mail here): while it stays, recorded UIDs name the same messages."""
    stamp = session.view_stamp
    return stamp[1] if stamp is not None else None


class Recorder:
    """The undo record of one write: planned (fsync'd) just before its first change goes out, completed
    after each batch, settled (applied) at the end. `token`: a sweep's, reserved at its preview."""

    def __init__(
        self, runtime: Runtime, account: Account, tool: str, session: ImapSession, token: str | None = None
    ) -> None:
        self.runtime, self.account, self.tool, self.session = runtime, account, tool, session
        self.groups: list[Group] = []
        self.token: str | None = token
        self.holder: str | None = None

    def plan(self, groups: list[Group]) -> None:
        self.groups = groups
        self.token, self.holder = plan(
            self.runtime, self.account, self.tool, groups, uidvalidity(self.session), token=self.token
        )

    def settle_batch(self) -> None:
        settle(self.runtime, self.token, self.holder, self.groups, complete=False)

    def finish(self) -> None:
        settle(self.runtime, self.token, self.holder, self.groups)

    # What core/writes' one routine tells the record (writes.Recorder).

    def planned(self, wants: list[writes.Want], before: dict[int, Fetched]) -> None:
        self.plan([Group(w.attribute, w.name, w.on, msgids(before, w.todo(before))) for w in wants])

    def _failed(self, wants: list[writes.Want], before: dict[int, Fetched]) -> None:
        """What the undo must leave alone: messages a want did not take on, or was not written to."""
        for group, want in zip(self.groups, wants, strict=True):
            group.failed = set(msgids(before, sorted(want.failed | want.kept)))

    def batch_done(self, wants: list[writes.Want], before: dict[int, Fetched]) -> None:
        self._failed(wants, before)
        self.settle_batch()

    def done(self, wants: list[writes.Want], before: dict[int, Fetched]) -> None:
        self._failed(wants, before)
        self.finish()

    def let_go(self) -> None:
        """The write was cut off: the record stays planned, free for an undo (its failure is logged)."""
        token, holder = self.token, self.holder
        if token is None or holder is None:
            return
        records.after_error(
            lambda: _records(self.runtime).update(token, WHAT, lambda r: tokens.let_go(r, holder)),
            "záznam pro vrácení změn",
        )
