"""The conditions of a Gmail search query that ask for a message's state: read, starred, in the
inbox, labelled. Gmail's search index can answer them from a stale copy of that state, so each hit
is checked against the FLAGS and X-GM-LABELS fetched with it (docs/en/tools.md, `index_stale_hits`).

Only a plain conjunction is read: terms joined by spaces or AND, each perhaps negated by a leading
`-` or an upper-case NOT. Every hit must then satisfy every term, so one whose live state fails a
state term no longer matches. Any other shape gives no conditions and nothing is checked: OR,
braces, parentheses, `|`, a comma outside quotes, AROUND, lower-case `or`/`not` (Gmail may read them
as words or as operators), an unbalanced quote, a backslash, a doubled negation.

Operator names and the values of `is:` and `in:` are compared case-insensitively, as Gmail's search
box does (https://support.google.com/mail/answer/7190). Where Gmail's rule is not known for sure, a
condition errs towards keeping the hit: `label:` names are matched loosely (see `_may_carry`), and
system names given to `label:` (`label:unread`, `label:inbox`…) and quoted values are not checked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

StateKind = Literal["unread", "read", "starred", "inbox", "label"]

# Outside quotes these make a query more than a conjunction, or its reading uncertain.
_NOT_A_CONJUNCTION = frozenset("(){}|,")
_OPERATOR_WORDS = frozenset({"or", "not", "and", "around"})
_FIELD_TERM = re.compile(r"([A-Za-z]+):(.+)", re.S)
_IS_VALUES: dict[str, StateKind] = {"unread": "unread", "read": "read", "starred": "starred"}
# Names `label:` may take for Gmail's own labels, states and categories (`label:`, `is:` and `in:`
# are largely interchangeable there): left to the index, never checked as a user label.
_SYSTEM_NAMES = frozenset(
    {
        "inbox", "unread", "read", "starred", "star", "important", "sent", "draft", "drafts", "chat",
        "chats", "spam", "trash", "bin", "snoozed", "muted", "mute", "scheduled", "all", "anywhere",
        "voicemail", "voicemails", "primary", "social", "promotions", "updates", "forums", "personal",
        "reservations", "purchases", "category", "archive", "archived", "userlabels", "nouserlabels",
    }
)  # fmt: skip


def _key(name: str) -> str:
    return name.lstrip("\\").casefold()


def _has(names: Iterable[str], wanted: str) -> bool:
    return any(_key(name) == wanted for name in names)


def _loose(name: str) -> str:
    """Letters and digits only, case and accents folded: what every plausible label-name rule keeps."""
    return "".join(c for c in unicodedata.normalize("NFKD", name.casefold()) if c.isalnum())


def _spelled(name: str) -> str:
    """A label name as `label:` spells it: case folded, spaces and `/` written as `-`."""
    return re.sub(r"[\s/]", "-", name.casefold())


def _surely_carries(labels: Iterable[str], wanted: str) -> bool:
    return any(_spelled(label) == _spelled(wanted) for label in labels if not label.startswith("\\"))


def _may_carry(labels: Iterable[str], wanted: str) -> bool:
    """Whether some user label could be what `label:wanted` found: its letters and digits contain the
    query's. That covers every rule Gmail might use (case, accents, `-` `_` `/` space and other
    punctuation as equals, a parent finding its nested labels, a word of a longer name)."""
    key = _loose(wanted)
    return any(key in _loose(label) for label in labels if not label.startswith("\\"))


@dataclass(frozen=True)
class StateCondition:
    kind: StateKind
    negated: bool = False
    label: str | None = None  # kind "label": the name as the query wrote it

    def holds(self, flags: Iterable[str] | None, labels: Iterable[str] | None) -> bool | None:
        """Whether a message's live FLAGS and X-GM-LABELS satisfy this term; None when they cannot say."""
        fact = self._positive(None if flags is None else tuple(flags), None if labels is None else tuple(labels))
        if fact is None:
            return None
        return not fact if self.negated else fact

    def _positive(self, flags: tuple[str, ...] | None, labels: tuple[str, ...] | None) -> bool | None:
        if self.kind in ("unread", "read"):
            if flags is None:
                return None
            return _has(flags, "seen") is (self.kind == "read")
        if self.kind == "starred":
            # the star is both the \Flagged flag and the \Starred label; either one is enough
            if (flags is not None and _has(flags, "flagged")) or (labels is not None and _has(labels, "starred")):
                return True
            return None if flags is None or labels is None else False
        if labels is None:
            return None
        if self.kind == "inbox":
            return _has(labels, "inbox")
        wanted = self.label or ""
        if _surely_carries(labels, wanted):
            return True
        return None if _may_carry(labels, wanted) else False


def _terms(query: str) -> list[str] | None:
    """The query's terms, split at whitespace outside quotes; None for a shape not read here."""
    terms: list[str] = []
    current: list[str] = []
    quoted = False
    for char in query:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in _NOT_A_CONJUNCTION:
            return None
        elif not quoted and char.isspace():
            if current:
                terms.append("".join(current))
                current = []
            continue
        current.append(char)
    if quoted:
        return None
    if current:
        terms.append("".join(current))
    return terms


def _condition(term: str, negated: bool) -> StateCondition | None:
    """The state condition of one term, or None when the term asks for something else."""
    match = _FIELD_TERM.fullmatch(term)
    if match is None:
        return None
    field, value = match.group(1).casefold(), match.group(2)
    if '"' in value or ":" in value:
        return None  # a quoted or odd value: how Gmail splits it is not known
    if field == "is" and value.casefold() in _IS_VALUES:
        return StateCondition(_IS_VALUES[value.casefold()], negated)
    if field == "in" and value.casefold() == "inbox":
        return StateCondition("inbox", negated)
    if field == "label" and value.casefold() not in _SYSTEM_NAMES and not value.startswith("^") and _loose(value):
        return StateCondition("label", negated, value)
    return None


def state_conditions(query: str) -> tuple[StateCondition, ...]:
    """The state terms every hit of `query` must satisfy; empty when there are none, or when the
    query is not a plain conjunction (then nothing can be checked)."""
    terms = None if "\\" in query else _terms(query)  # a backslash may escape a quote: where phrases end is unsure
    if terms is None:
        return ()
    conditions: list[StateCondition] = []
    pending_not = False
    for term in terms:
        if term == "NOT":
            if pending_not:
                return ()
            pending_not = True
            continue
        if term.casefold() == "and" and not pending_not:
            continue  # an operator or a word: a conjunction either way
        if term.casefold() in _OPERATOR_WORDS:
            return ()  # OR, AROUND, and operator words in a case Gmail may read either way
        negated, body = pending_not, term
        pending_not = False
        if body.startswith("-"):
            body = body[1:]
            if negated or not body or body[0] in "-+":
                return ()
            negated = True
        if body.startswith("+"):
            return ()
        condition = _condition(body, negated)
        if condition is not None:
            conditions.append(condition)
    if pending_not:
        return ()  # a NOT with nothing after it
    return tuple(conditions)


def contradicted(
    conditions: Iterable[StateCondition], flags: Iterable[str] | None, labels: Iterable[str] | None
) -> bool:
    """Whether a hit's live state surely fails one of the conditions (so it no longer matches)."""
    flag_list = tuple(flags) if flags is not None else None
    label_list = tuple(labels) if labels is not None else None
    return any(condition.holds(flag_list, label_list) is False for condition in conditions)
