"""A small model of one mailbox for the model-based write tests (test_write_model.py).

Each message is its labels, its flags and whether it is in Trash. The model says what every write
tool should do to it, following docs/en/tools.md and SPEC §12: which messages change, which were
already so, which fail (a STORE Gmail accepts but does not apply), what an undo sets back and what
it skips. The tests compare it with the emulator's store after every step, and the counts a tool
reports with the model's own diff.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sweep_box import ACCOUNTING, BANK, PROCESSED

from gmail_emulator import GmailEmulator

INBOX = "\\Inbox"
SEEN = "\\Seen"
FLAGGED = "\\Flagged"
CLASSES = (ACCOUNTING, BANK)
LABELS = (INBOX, PROCESSED, *CLASSES)  # the labels the model follows
FLAGS = (SEEN, FLAGGED)
FLAG_NAMES = {"seen": SEEN, "flagged": FLAGGED}

# A message as the snapshot shows it: (labels, flags, location).
View = tuple[frozenset[str], frozenset[str], str]
# One attribute change: (attribute, name, "added" | "removed"), counted over messages.
Key = tuple[str, str, str]
# One entry of a result's `changes`: (attribute, name, action, replaced_by) -> (changed, already, failed).
Entries = dict[tuple[str, str, str, str | None], tuple[int, int, int]]


@dataclass
class Msg:
    sender: str
    thread: str  # the tag of the thread's first message
    labels: set[str] = field(default_factory=set)
    flags: set[str] = field(default_factory=set)
    trash: bool = False

    def view(self) -> View:
        return frozenset(self.labels), frozenset(self.flags), "trash" if self.trash else "normal"

    def has(self, attribute: str, name: str) -> bool:
        return name in (self.labels if attribute == "label" else self.flags)

    def put(self, attribute: str, name: str, on: bool) -> None:
        values = self.labels if attribute == "label" else self.flags
        if on:
            values.add(name)
        else:
            values.discard(name)


@dataclass(frozen=True)
class Change:
    """One attribute of one message a write really changed: what its undo may set back."""

    tag: str
    attribute: str  # "label" or "flag"
    name: str
    on: bool  # the state the write left


@dataclass
class UndoRecord:
    tool: str
    changes: list[Change] = field(default_factory=list)
    trashed: dict[str, set[str]] = field(default_factory=dict)  # tag -> its labels before the trash
    reserved: bool = False  # a sweep previewed, not applied yet
    used: bool = False


@dataclass
class Preview:
    confirm_token: str
    undo_token: str
    query: str
    change: dict[str, object]
    covered: frozenset[str]
    used: bool = False


def snapshot(emulator: GmailEmulator, box: str) -> dict[str, View]:
    """Message-ID -> what the model follows of it (the \\Starred label follows \\Flagged and is left out)."""
    return {
        m.header_id or "": (
            frozenset(lb for lb in m.labels if lb in LABELS),
            frozenset(f for f in m.flags if f in FLAGS),
            m.location,
        )
        for m in emulator.messages(box)
    }


def diff(before: dict[str, View], after: dict[str, View]) -> Counter[Key]:
    """How many messages got or lost each label and flag, and went into or out of Trash (the labels a
    move into or out of Trash takes along belong to the move)."""
    counts: Counter[Key] = Counter()
    for tag, (labels, flags, place) in after.items():
        old_labels, old_flags, old_place = before[tag]
        if place != old_place:
            counts["trash", "", "added" if place == "trash" else "removed"] += 1
            continue
        for attribute, old, new in (("label", old_labels, labels), ("flag", old_flags, flags)):
            counts.update((attribute, name, "added") for name in new - old)
            counts.update((attribute, name, "removed") for name in old - new)
    return counts


def reported(result: dict[str, Any]) -> Counter[Key]:
    """What a result's `changes` say changed, keyed as `diff` keys the snapshots' difference."""
    counts: Counter[Key] = Counter()
    for entry in result["changes"]:
        if entry["changed"]:
            name = "" if entry["attribute"] == "trash" else entry["name"]
            counts[entry["attribute"], name, entry["action"]] += entry["changed"]
    return counts


def entries(result: dict[str, Any]) -> Entries:
    """A result's `changes` that count anything (an entry of all zeros says nothing a test can check)."""
    out: Entries = {}
    for e in result["changes"]:
        counts = (e["changed"], e["already"], e["failed"])
        if any(counts):
            name = "" if e["attribute"] == "trash" else e["name"]
            key = (e["attribute"], name, e["action"], e.get("replaced_by"))
            assert key not in out, result["changes"]
            out[key] = counts
    return out


def entry(attribute: str, name: str, on: bool, counts: tuple[int, int, int], by: str | None = None) -> Entries:
    return {(attribute, name, "added" if on else "removed", by): counts} if any(counts) else {}


class Mailbox:
    """The model: the messages by tag, the undo records by token, the sweep previews."""

    def __init__(self, messages: dict[str, Msg]) -> None:
        self.messages = messages
        self.records: dict[str, UndoRecord] = {}

    def view(self) -> dict[str, View]:
        return {tag: m.view() for tag, m in self.messages.items()}

    def live(self, tags: Iterable[str]) -> list[str]:
        """Those not in Trash: the ones All Mail shows, which every write but mg_undo sees."""
        return [t for t in tags if not self.messages[t].trash]

    def thread(self, thread: str) -> list[str]:
        return [t for t, m in self.messages.items() if m.thread == thread and not m.trash]

    # --- what a sweep covers ------------------------------------------------------------------

    def covered(self, sender_domain: str, on_threads: bool) -> list[str]:
        matched = [t for t, m in self.messages.items() if not m.trash and m.sender.endswith("@" + sender_domain)]
        if not on_threads:
            return matched
        threads = {self.messages[t].thread for t in matched}
        return [t for t, m in self.messages.items() if not m.trash and m.thread in threads]

    # --- the label routine: set one attribute, then take replaced classifications off ------------

    def change(
        self,
        tags: list[str],
        attribute: str,
        name: str,
        on: bool,
        *,
        replaces: tuple[str, ...] = (),
        stubborn: str | None = None,
    ) -> tuple[list[str], list[str], list[str], list[Change], Entries]:
        """(changed, already, failed, changes, entries) of setting `name` to `on` on `tags`. A stubborn
        message's first STORE is accepted and not applied; a replaced classification comes off only
        where the new one is on after the change (elsewhere it is kept, and counted nowhere)."""
        changed: list[str] = []
        already: list[str] = []
        failed: list[str] = []
        changes: list[Change] = []
        for tag in tags:
            msg = self.messages[tag]
            if msg.has(attribute, name) is on:
                already.append(tag)
            elif tag == stubborn:
                failed.append(tag)
            else:
                msg.put(attribute, name, on)
                changed.append(tag)
                changes.append(Change(tag, attribute, name, on))
        found = entry(attribute, name, on, (len(changed), len(already), len(failed)))
        for other in replaces:
            off = 0
            for tag in tags:
                msg = self.messages[tag]
                if tag not in failed and other in msg.labels:
                    msg.labels.discard(other)
                    changes.append(Change(tag, "label", other, False))
                    off += 1
            found |= entry("label", other, False, (off, 0, 0), by=name)
        return changed, already, failed, changes, found

    def trash(self, tag: str) -> set[str]:
        """Into Trash; returns the labels it had (Gmail's Trash keeps neither user labels nor the Inbox)."""
        msg = self.messages[tag]
        before = set(msg.labels)
        msg.trash = True
        msg.labels = set()
        return before

    # --- undo --------------------------------------------------------------------------------

    def undo(self, record: UndoRecord) -> tuple[int, int, Entries]:
        """(restored, skipped, entries): each change set back only where it is still as the write left
        it; one that is not is skipped, and counted as already where the message is in All Mail."""
        restored = skipped = 0
        counts: dict[tuple[str, str, bool], list[int]] = {}
        for change in record.changes:
            msg = self.messages[change.tag]
            count = counts.setdefault((change.attribute, change.name, not change.on), [0, 0, 0])
            if msg.trash:
                skipped += 1
            elif msg.has(change.attribute, change.name) is not change.on:
                skipped += 1
                count[1] += 1
            else:
                msg.put(change.attribute, change.name, not change.on)
                restored += 1
                count[0] += 1
        back = 0
        for tag, labels in record.trashed.items():
            msg = self.messages[tag]
            if not msg.trash:
                skipped += 1
                continue
            msg.trash = False
            msg.labels |= labels
            back += 1
        found: Entries = {}
        for (attribute, name, on), (changed, already, failed) in counts.items():
            found |= entry(attribute, name, on, (changed, already, failed))
        found |= entry("trash", "", False, (back, 0, 0))
        return restored + back, skipped, found
