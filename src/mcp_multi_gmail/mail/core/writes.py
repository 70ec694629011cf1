"""One way to change labels and flags: every write tool (the label and flag tools, mg_sweep, mg_undo)
changes messages through `apply`, and reports the outcome as `AttributeChange` entries.

A change is a list of `Want`s: one attribute set one way on a set of messages. A Want with
`replaced_by` is a classification that comes off because another replaces it: it comes off a
message only where the replacing label was read back on it, so an interruption or a message
Gmail would not change leaves a thread double-classified, never unclassified. Messages go in
batches of UIDs; each batch is written (the wants in their order) and read back by FETCH (never by
search: the index lags) before the next goes out. The undo record, when there is one, is written
before the first STORE and completed after each batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from ...gmail.imap import Fetched, ImapSession, uid_batches
from .summary import carries

READ_BACK = ["X-GM-LABELS", "FLAGS", "X-GM-MSGID"]


class AttributeChange(BaseModel):
    """One label or flag (or Trash) set one way: on how many messages it took, and how many it did not."""

    attribute: Literal["label", "flag", "trash"]
    name: str = Field(description="The label, the flag (\\Seen, \\Flagged, \\Answered), or the Trash folder")
    action: Literal["added", "removed"]
    changed: int = Field(description="Messages that got it (added) or lost it (removed), read back")
    already: int = Field(description="Messages that already had it (added) or lacked it (removed): untouched")
    failed: int = Field(description="Messages it did not take on when read back")
    replaced_by: str | None = Field(
        default=None, description="Set when a classification came off because this other one replaced it"
    )


def changes_field(preview: bool = False) -> Any:
    """The `changes` of every write tool's result."""
    if preview:
        return Field(
            default_factory=list,
            description="Per label and flag, what the call changed; in a preview, what the apply would change",
        )
    return Field(default_factory=list, description="Per label and flag: what the call changed, read back")


@dataclass
class Want:
    """One attribute set one way on the messages `uids` (those already so are counted as already)."""

    attribute: Literal["label", "flag"]
    name: str
    on: bool
    uids: list[int]
    replaced_by: str | None = None  # comes off only where this label was read back on
    changed: set[int] = field(default_factory=set)
    already: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)
    kept: set[int] = field(default_factory=set)  # replaced_by did not arrive there: left as it was
    refused: bool = False  # Gmail answered NO to a STORE of it

    def carried(self, item: Fetched | None) -> bool | None:
        if item is None:
            return None
        values = item.labels if self.attribute == "label" else item.flags
        return None if values is None else carries(values, self.name)

    def covers(self, before: dict[int, Fetched]) -> list[int]:
        """The messages this want counts: all of `uids`; a replaced classification only where it is."""
        if self.replaced_by is None:
            return self.uids
        return [uid for uid in self.uids if self.carried(before.get(uid)) is True]

    def todo(self, before: dict[int, Fetched]) -> list[int]:
        return [uid for uid in self.covers(before) if self.carried(before.get(uid)) is not self.on]

    def entry(self) -> AttributeChange:
        return AttributeChange(
            attribute=self.attribute,
            name=self.name,
            action="added" if self.on else "removed",
            changed=len(self.changed),
            already=len(self.already),
            failed=len(self.failed),
            replaced_by=self.replaced_by,
        )


class Recorder(Protocol):
    """What writes the change down before it goes out (the undo record, mail/undo): told the plan before
    the first STORE, each batch once it was read back, and the end; `let_go` when the write is cut off."""

    def planned(self, wants: list[Want], before: dict[int, Fetched]) -> None: ...

    def batch_done(self, wants: list[Want], before: dict[int, Fetched]) -> None: ...

    def done(self, wants: list[Want], before: dict[int, Fetched]) -> None: ...

    def let_go(self) -> None: ...


def would(before: dict[int, Fetched], wants: list[Want]) -> list[AttributeChange]:
    """A preview's entries: what `apply` would change should every message take the change."""
    entries = []
    for want in wants:
        covered = want.covers(before)
        todo = set(want.todo(before))
        entry = want.entry()
        entry.changed, entry.already = len(todo), len(covered) - len(todo)
        entries.append(entry)
    return entries


def _store(session: ImapSession, want: Want, uids: list[int]) -> None:
    if not uids:
        return
    change = session.change_labels if want.attribute == "label" else session.change_flags
    if not change(uids, [want.name], add=want.on):
        want.refused = True


def _sort(want: Want, uids: list[int], before: dict[int, Fetched], after: dict[int, Fetched]) -> None:
    for uid in uids:
        now_ok = want.carried(after.get(uid)) is want.on
        if not now_ok:
            want.failed.add(uid)
        elif want.carried(before.get(uid)) is want.on:
            want.already.add(uid)
        else:
            want.changed.add(uid)


def apply(
    session: ImapSession,
    before: dict[int, Fetched],
    wants: list[Want],
    *,
    recorder: Recorder | None = None,
) -> dict[int, Fetched]:
    """Write `wants` on the messages of `before` (the open folder, writable), batch by batch, each read
    back; every want's changed/already/failed is filled in. Returns each message's state after."""
    after: dict[int, Fetched] = {}
    covered = [want.covers(before) for want in wants]
    todos = [set(want.todo(before)) for want in wants]
    touched = sorted({uid for uids in covered for uid in uids})
    try:
        if recorder is not None:
            recorder.planned(wants, before)
        for batch in uid_batches(touched):
            _batch(session, before, wants, covered, todos, batch, after)
            if recorder is not None:
                recorder.batch_done(wants, before)
    except BaseException:
        if recorder is not None:
            recorder.let_go()  # cut off: the planned record stands, and an undo may take it at once
        raise
    if recorder is not None:
        recorder.done(wants, before)
    return after


def _batch(
    session: ImapSession,
    before: dict[int, Fetched],
    wants: list[Want],
    covered: list[list[int]],
    todos: list[set[int]],
    batch: list[int],
    after: dict[int, Fetched],
) -> None:
    """One batch: the wants written, read back; then the replaced classifications off where the new one
    arrived, read back."""
    inside = set(batch)
    firsts = [(w, uids, todo) for w, uids, todo in zip(wants, covered, todos, strict=True) if w.replaced_by is None]
    seconds = [(w, uids, todo) for w, uids, todo in zip(wants, covered, todos, strict=True) if w.replaced_by]
    for want, _uids, todo in firsts:
        _store(session, want, [uid for uid in batch if uid in todo])
    after.update(session.fetch(batch, READ_BACK))
    for want, uids, _todo in firsts:
        _sort(want, [uid for uid in uids if uid in inside], before, after)
    gates = {w.name.casefold(): w.changed | w.already for w, _u, _t in firsts if w.attribute == "label" and w.on}
    reread: set[int] = set()
    for want, uids, todo in seconds:
        arrived = gates.get((want.replaced_by or "").casefold(), inside)
        mine = [uid for uid in uids if uid in inside]
        want.kept |= {uid for uid in mine if uid not in arrived}
        stored = [uid for uid in mine if uid in arrived and uid in todo]
        _store(session, want, stored)
        reread.update(stored)
    if reread:
        after.update(session.fetch(sorted(reread), READ_BACK))
    for want, uids, _todo in seconds:
        _sort(want, [uid for uid in uids if uid in inside and uid not in want.kept], before, after)
