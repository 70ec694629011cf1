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

import contextlib
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from ...config import Account
from ...errors import MailError, invalid_input, not_found
from ...gmail.imap import Fetched, ImapSession
from ...runtime import Runtime
from . import records
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

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "attribute": self.attribute,
            "name": self.name,
            "on": self.on,
            "messages": [[msgid, uid] for msgid, uid in self.messages.items()],
            "failed": sorted(self.failed),
        }
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
    moment = records.now()
    body = {"kind": WHAT, "account": account.name, "tool": tool, "created": stamp(moment), "state": "reserved"}
    _records(runtime).create(token, {**body, "groups": [], "all_mail_uidvalidity": None}, WHAT)
    return token


def plan(
    runtime: Runtime,
    account: Account,
    tool: str,
    groups: list[Group],
    uidvalidity: int | None,
    token: str | None = None,
) -> str | None:
    """Write down what the write will change, fsync'd, before it goes out. Returns the undo token, or None
    (no record) when nothing will change. Raises MailError, with nothing changed, when it cannot be written."""
    groups = [g for g in groups if g.messages]
    if not groups and token is None:
        return None
    body = {
        "kind": WHAT,
        "account": account.name,
        "tool": tool,
        "created": stamp(records.now()),
        "state": "planned",
        "all_mail_uidvalidity": uidvalidity,
        "groups": [g.to_json() for g in groups],
    }
    store = _records(runtime)
    if token is None:
        token = new_token(UNDO_PREFIX)
        store.create(token, body, WHAT)
    else:

        def planned(record: dict[str, Any]) -> None:
            record.update({k: v for k, v in body.items() if k != "created"})

        store.update(token, WHAT, planned)
    return token


def settle(runtime: Runtime, token: str | None, groups: list[Group], *, complete: bool = True) -> None:
    """Complete the record with what the read-back showed (the failed messages of each group)."""
    if token is None:
        return

    def settled(record: dict[str, Any]) -> None:
        record["groups"] = [g.to_json() for g in groups if g.messages]
        if complete:
            record["state"] = "completed"

    # On failure the planned record stands: an undo checks each message's state before touching it.
    with contextlib.suppress(MailError):
        _records(runtime).update(token, WHAT, settled)


@dataclass
class Claimed:
    token: str
    tool: str
    uidvalidity: int | None
    groups: list[Group]
    before: str  # the state to go back to when the undo changes nothing


def claim(runtime: Runtime, account: Account, token: str) -> Claimed:
    """Take a token for one undo: it must exist, be this mailbox's, unused and within its 7 days."""
    if not token.startswith(UNDO_PREFIX):
        raise invalid_input(
            "That is not an undo token (they start with undo_); a sweep's confirm_token applies the sweep instead."
        )
    moment = records.now()
    found: dict[str, Any] = {}

    def take(record: dict[str, Any]) -> None:
        if record.get("kind") != WHAT:
            raise invalid_input("That token is not an undo token. Nothing was changed.")
        if record["account"] != account.name:
            raise invalid_input(
                f'This undo token was issued for another mailbox, not "{account.name}". Nothing was changed. '
                "Call mg_undo with the mailbox of the write it came from."
            )
        created = parse_stamp(record["created"])
        if record.get("state") == "used":
            raise invalid_input(
                f"This undo token was already used at {record.get('used_at', '?')} (UTC); each undoes its write "
                "once. Nothing was changed."
            )
        if moment - created >= KEEP:
            raise invalid_input(
                f"This undo token expired: it is valid 7 days after the write ({stamp(created)} UTC). Nothing was "
                "changed. What is still to be set back can be done with the label and flag tools."
            )
        if record.get("state") == "reserved":
            raise not_found(
                "This undo token belongs to a sweep that was previewed but never applied, so there is nothing to "
                "undo. Nothing was changed."
            )
        found.update(record)
        record["state"] = "used"
        record["used_at"] = stamp(moment)

    _records(runtime).update(token, WHAT, take)
    return Claimed(
        token=token,
        tool=str(found.get("tool", "")),
        uidvalidity=found.get("all_mail_uidvalidity"),
        groups=[Group.from_json(g) for g in found.get("groups", [])],
        before=str(found.get("state")),
    )


def release(runtime: Runtime, claimed: Claimed) -> None:
    """Give the token back after an undo that changed nothing (it failed before its first write)."""

    def back(record: dict[str, Any]) -> None:
        record["state"] = claimed.before
        record.pop("used_at", None)

    with contextlib.suppress(MailError):
        _records(runtime).update(claimed.token, WHAT, back)


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
    """The undo record of one write: planned (fsync'd) just before its first change goes out, settled after."""

    def __init__(self, runtime: Runtime, account: Account, tool: str, session: ImapSession) -> None:
        self.runtime, self.account, self.tool, self.session = runtime, account, tool, session
        self.groups: list[Group] = []
        self.token: str | None = None

    def plan(self, groups: list[Group]) -> None:
        self.groups = groups
        self.token = plan(self.runtime, self.account, self.tool, groups, uidvalidity(self.session))

    def settle(self, failed_uids: set[int]) -> None:
        for group in self.groups:
            group.failed = {msgid for msgid, uid in group.messages.items() if uid in failed_uids}
        settle(self.runtime, self.token, self.groups)
