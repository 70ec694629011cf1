"""Reminder labels: their own label family, and every permission decided on them.

A reminder is a label under one parent per mailbox (`reminder_label`, default `Připomínky`), its
date and kind readable from the name alone (docs/pripominky.md, docs/en/follow-ups.md):

- `Připomínky/2026-12-07 odpověď`: the user expects an answer by that day (kind "reply");
- `Připomínky/2026-12-07 14.30 znovu`: come back to the thread then (kind "revisit");
- `Připomínky/nic nečekám`: the user expects nothing; the thread never waits.

Any other label under the parent is the user's own and is never touched. The functions are pure and
raise `MailError` with an English message; nothing here talks to a mailbox.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from mcp_multi_gmail.config.zone import UserZone
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.headers import is_header_breaking, show

KINDS = {"reply": "odpověď", "revisit": "znovu"}
_WORDS = {word: kind for kind, word in KINDS.items()}
EXPECT_NOTHING = "nic nečekám"
MAX_AHEAD = timedelta(days=2 * 366)
_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?: (\d{2})\.(\d{2}))? (odpověď|znovu)$")
_ON = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::00)?)?\s*$")
# Subjects Google, Outlook and others put on a calendar answer (iTIP REPLY, RFC 5546 section 3.2.3).
_CALENDAR_ANSWER = re.compile(
    r"^\s*(accepted|declined|tentatively accepted|tentative|přijato|odmítnuto|předběžně přijato"
    r"|zusage|absage|updated invitation with note)\s*:",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reminder:
    kind: str  # "reply" or "revisit"
    day: date
    at: time | None = None  # a time of day in the user's zone, or the whole day

    @property
    def shown(self) -> str:
        return self.day.isoformat() + (f"T{self.at.hour:02d}:{self.at.minute:02d}" if self.at else "")

    @property
    def sort_key(self) -> tuple[date, time]:
        return self.day, self.at or time(0, 0)

    def due_at(self, zone: UserZone) -> datetime:
        """The aware UTC moment it falls due: the time given, else the start of the user's day."""
        return zone.moment(datetime.combine(self.day, self.at or time(0, 0)))


def _key(label: str) -> str:
    return label.strip().casefold()


def label_name(parent: str, reminder: Reminder) -> str:
    when = reminder.day.isoformat() + (f" {reminder.at.hour:02d}.{reminder.at.minute:02d}" if reminder.at else "")
    return f"{parent}/{when} {KINDS[reminder.kind]}"


def expect_nothing_label(parent: str) -> str:
    return f"{parent}/{EXPECT_NOTHING}"


def _child(parent: str, label: str) -> str | None:
    prefix = _key(parent) + "/"
    return label[len(prefix) :] if _key(label).startswith(prefix) else None


def parse_label(parent: str, label: str) -> Reminder | None:
    """The reminder a label names, or None: another label, or a sublabel of the user's own."""
    child = _child(parent, label)
    match = _NAME.match(child) if child is not None else None
    if match is None:
        return None
    year, month, day, hour, minute, word = match.groups()
    try:
        at = time(int(hour), int(minute)) if hour is not None else None
        return Reminder(_WORDS[word], date(int(year), int(month), int(day)), at)
    except ValueError:
        return None  # "2026-02-30 odpověď": not a name this server writes, so the user's own


def is_expect_nothing(parent: str, label: str) -> bool:
    child = _child(parent, label)
    return child is not None and child.casefold() == EXPECT_NOTHING


def is_family(parent: str, label: str) -> bool:
    """Whether this server may add or remove the label: a reminder or the expect-nothing mark."""
    return parse_label(parent, label) is not None or is_expect_nothing(parent, label)


def is_calendar_answer(subject: str | None) -> bool:
    return bool(subject and _CALENDAR_ANSWER.match(subject))


# --- refusals ---------------------------------------------------------------------------------


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise MailError("invalid_input", f'kind is "{show(kind)}"; it takes "reply" or "revisit". Nothing was changed.')
    return kind


def check_parent(account: str, parent: str, processed_label: str | None, classifications: Mapping[str, str]) -> None:
    """The parent must be a label of its own: a clash would mix reminders with work labels."""
    key = _key(parent)
    if not key or any(is_header_breaking(ch) for ch in parent) or parent.startswith("\\"):
        raise MailError(
            "label_forbidden",
            f'Mailbox "{account}" has the reminder parent "{show(parent)}", which cannot be a label. '
            "The user changes reminder_label in the configuration. Nothing was changed.",
        )
    taken = [processed_label or "", *classifications]
    for name in taken:
        other = _key(name)
        if other and (other == key or other.startswith(key + "/") or key.startswith(other + "/")):
            raise MailError(
                "label_forbidden",
                f'Mailbox "{account}" has the reminder parent "{show(parent)}", which clashes with its '
                f'label "{show(name)}" (the processed label or a classification). Reminders need a parent '
                "of their own: the user changes reminder_label in the configuration. Nothing was changed.",
            )


def check_on(text: str, kind: str, zone: UserZone, now: datetime) -> Reminder:
    """The reminder for `on` (YYYY-MM-DD, or YYYY-MM-DDTHH:MM in the user's zone)."""
    match = _ON.match(text)
    reminder: Reminder | None = None
    if match is not None:
        year, month, day, hour, minute = match.groups()
        try:
            at = time(int(hour), int(minute)) if hour is not None else None
            reminder = Reminder(kind, date(int(year), int(month), int(day)), at)
        except ValueError:
            reminder = None
    if reminder is None:
        raise MailError(
            "invalid_input",
            f'on is "{show(text[:60])}", not a date: give YYYY-MM-DD or YYYY-MM-DDTHH:MM (the user\'s '
            "own time zone), e.g. 2026-12-07 or 2026-12-07T09:30. Nothing was changed.",
        )
    today = zone.today(now)
    past = reminder.day < today if reminder.at is None else reminder.due_at(zone) <= now
    if past:
        raise MailError(
            "invalid_input",
            f"on is {reminder.shown}, which is already past (today is {today.isoformat()} in the user's "
            "time zone). Give today or a later date. Nothing was changed.",
        )
    if reminder.day > today + MAX_AHEAD:
        raise MailError(
            "invalid_input",
            f"on is {reminder.shown}, more than two years ahead. Give a date on or before "
            f"{(today + MAX_AHEAD).isoformat()}. Nothing was changed.",
        )
    return reminder
