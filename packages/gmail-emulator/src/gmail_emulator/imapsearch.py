"""IMAP SEARCH keys (RFC 3501 §6.4.4) plus Gmail's X-GM-RAW / X-GM-THRID / X-GM-MSGID / X-GM-LABELS.

The command parser hands over already-tokenised arguments (``SearchToken``): atoms as ``str`` in
their original case, quoted strings and literals as ``bytes`` (already unquoted), parenthesised
groups as nested lists.  ``CHARSET`` has already been consumed; ``bytes`` are decoded as UTF-8.
Anything malformed raises ``SearchParseError`` (the server answers ``BAD Could not parse command``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Protocol, TypeAlias

from gmail_emulator.mime import ParsedMessage
from gmail_emulator.mime_text import decode_words
from gmail_emulator.rawquery import parse_raw
from gmail_emulator.rawsearch import (
    RawContext,
    RawNode,
    RawQueryError,
    SearchView,
    mentions_trash_or_spam,
)

__all__ = [
    "SearchContext",
    "SearchItem",
    "SearchNode",
    "SearchParseError",
    "SearchToken",
    "parse_search",
    "parse_sequence_set",
]

SearchToken: TypeAlias = str | bytes | list["SearchToken"]


class SearchParseError(ValueError):
    """Malformed SEARCH arguments."""


class SearchItem(Protocol):
    """One message as seen in the selected folder (read-only members: frozen dataclasses fit too)."""

    @property
    def uid(self) -> int: ...
    @property
    def seq(self) -> int: ...
    @property
    def msgid(self) -> int: ...
    @property
    def thrid(self) -> int: ...
    @property
    def labels(self) -> frozenset[str]: ...
    @property
    def flags(self) -> frozenset[str]: ...
    @property
    def location(self) -> str: ...
    @property
    def internaldate(self) -> datetime: ...
    @property
    def size(self) -> int: ...
    @property
    def parsed(self) -> ParsedMessage: ...
    @property
    def indexed(self) -> SearchView | None:
        """The search index's view of the message (None = not indexed yet); X-GM-RAW and X-GM-LABELS use it."""
        ...


@dataclass
class SearchContext:
    account_address: str
    now: datetime
    max_uid: int
    max_seq: int
    # Whether X-GM-LABELS is answered from the lagging search index, like X-GM-RAW (unverified).
    labels_from_index: bool = True
    # Whether X-GM-RAW inside the Trash folder finds its messages without naming in:trash (unverified).
    raw_finds_trash: bool = True
    # The zone whose calendar days SINCE/BEFORE/ON mean (knob `date_search_timezone`).
    date_zone: tzinfo = UTC


# --------------------------------------------------------------------------- helpers

_MONTHS = {
    m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)
}
_DATE = re.compile(r"(\d{1,2})-([A-Za-z]{3})-(\d{4})")
_SEQ_ITEM = re.compile(r"(\d+|\*)(?::(\d+|\*))?")
_NUMBER = re.compile(r"\d{1,20}")

SeqRange = tuple[int | None, int | None]  # None stands for "*"


def parse_sequence_set(text: str) -> tuple[SeqRange, ...]:
    """``1:3,7,9:*`` -> ((1, 3), (7, 7), (9, None)); raise SearchParseError when malformed."""
    out: list[SeqRange] = []
    for item in text.split(","):
        m = _SEQ_ITEM.fullmatch(item)
        if m is None:
            raise SearchParseError(f"bad sequence set {text!r}")
        lo_s, hi_s = m.group(1), m.group(2) if m.group(2) is not None else m.group(1)
        bounds: list[int | None] = []
        for s in (lo_s, hi_s):
            if s == "*":
                bounds.append(None)
            else:
                n = int(s)
                if n < 1 or n > 0xFFFFFFFF:
                    raise SearchParseError(f"bad sequence number {s!r}")
                bounds.append(n)
        out.append((bounds[0], bounds[1]))
    return tuple(out)


def _in_set(value: int, ranges: tuple[SeqRange, ...], star: int) -> bool:
    for lo, hi in ranges:
        a = star if lo is None else lo
        b = star if hi is None else hi
        if a > b:
            a, b = b, a
        if a <= value <= b:
            return True
    return False


def _text(tok: SearchToken) -> str:
    if isinstance(tok, list):
        raise SearchParseError("string expected, got a list")
    if isinstance(tok, bytes):
        return tok.decode("utf-8", errors="replace")
    return tok


def _parse_date(tok: SearchToken) -> date:
    m = _DATE.fullmatch(_text(tok))
    if m is None:
        raise SearchParseError(f"bad date {tok!r}")
    month = _MONTHS.get(m.group(2).lower())
    if month is None:
        raise SearchParseError(f"bad month {tok!r}")
    try:
        return date(int(m.group(3)), month, int(m.group(1)))
    except ValueError as exc:
        raise SearchParseError(f"bad date {tok!r}") from exc


def _parse_number(tok: SearchToken) -> int:
    if not isinstance(tok, str) or not _NUMBER.fullmatch(tok):
        raise SearchParseError(f"number expected, got {tok!r}")
    return int(tok)


def _unfold(text: str) -> str:
    return re.sub(r"\r\n(?=[ \t])", "", text)


def _decoded_header_block(parsed: ParsedMessage) -> str:
    raw = parsed.section("HEADER") or b""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    return decode_words(_unfold(text))


def _date_cmp(actual: date, op: str, wanted: date) -> bool:
    if op == "SINCE":
        return actual >= wanted
    if op == "BEFORE":
        return actual < wanted
    return actual == wanted


# --------------------------------------------------------------------------- AST


class SearchNode(ABC):
    """One parsed SEARCH key (or a combination of keys)."""

    @abstractmethod
    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        """Whether the message satisfies this node."""


@dataclass(frozen=True)
class AllKey(SearchNode):
    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return True


@dataclass(frozen=True)
class NoneKey(SearchNode):
    """Keys that can never match in Gmail (RECENT, NEW)."""

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return False


@dataclass(frozen=True)
class AndKey(SearchNode):
    children: tuple[SearchNode, ...]

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return all(c.matches(item, ctx) for c in self.children)


@dataclass(frozen=True)
class OrKey(SearchNode):
    left: SearchNode
    right: SearchNode

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return self.left.matches(item, ctx) or self.right.matches(item, ctx)


@dataclass(frozen=True)
class NotKey(SearchNode):
    child: SearchNode

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return not self.child.matches(item, ctx)


@dataclass(frozen=True)
class FlagKey(SearchNode):
    flag: str  # compared case-insensitively
    present: bool

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        wanted = self.flag.lower()
        return any(f.lower() == wanted for f in item.flags) is self.present


@dataclass(frozen=True)
class SeqSetKey(SearchNode):
    ranges: tuple[SeqRange, ...]
    uid: bool

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        if self.uid:
            return _in_set(item.uid, self.ranges, ctx.max_uid)
        return _in_set(item.seq, self.ranges, ctx.max_seq)


@dataclass(frozen=True)
class InternalDateKey(SearchNode):
    op: str  # SINCE | BEFORE | ON
    day: date

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        dt = item.internaldate
        dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt
        return _date_cmp(dt.astimezone(ctx.date_zone).date(), self.op, self.day)


@dataclass(frozen=True)
class SentDateKey(SearchNode):
    op: str  # SINCE | BEFORE | ON
    day: date

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        sent = item.parsed.date
        return sent is not None and _date_cmp(sent.date(), self.op, self.day)


@dataclass(frozen=True)
class TextKey(SearchNode):
    """FROM/TO/CC/BCC/SUBJECT/BODY/TEXT: case-insensitive substring of the decoded text."""

    field: str  # from | to | cc | bcc | subject | body | text
    needle: str

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        needle = self.needle.casefold()
        parsed = item.parsed
        if self.field == "body":
            haystacks = [parsed.text_content()]
        elif self.field == "text":
            haystacks = [_decoded_header_block(parsed), parsed.text_content()]
        else:
            haystacks = parsed.header(self.field)
        return any(needle in h.casefold() for h in haystacks)


@dataclass(frozen=True)
class HeaderKey(SearchNode):
    name: str
    needle: str

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        values = item.parsed.header(self.name)
        needle = self.needle.casefold()
        return any(needle in v.casefold() for v in values)


@dataclass(frozen=True)
class SizeKey(SearchNode):
    larger: bool
    octets: int

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return item.size > self.octets if self.larger else item.size < self.octets


@dataclass(frozen=True)
class GmIdKey(SearchNode):
    attr: str  # msgid | thrid
    value: int

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        return (item.msgid if self.attr == "msgid" else item.thrid) == self.value


_LABEL_ALIASES = {"\\drafts": "\\draft"}


@dataclass(frozen=True)
class LabelKey(SearchNode):
    label: str

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        wanted = self.label.casefold()
        wanted = _LABEL_ALIASES.get(wanted, wanted)
        # Assumed, not verified: Gmail answers X-GM-LABELS from the same lagging index as X-GM-RAW,
        # so a label written a moment ago may not be searchable yet (FETCH always sees it).
        view = item.indexed if ctx.labels_from_index else None
        labels = view.labels if view is not None else item.labels
        return any(label.casefold() == wanted for label in labels)


@dataclass(frozen=True)
class RawKey(SearchNode):
    """X-GM-RAW: evaluated against the search index's view of the message."""

    query: str
    node: RawNode

    def matches(self, item: SearchItem, ctx: SearchContext) -> bool:
        view = item.indexed
        if view is None:
            return False
        # the index files Trash/Spam messages away from ordinary searches unless the query names
        # them or they are being searched in their own folder
        if (
            view.location in ("trash", "spam")
            and view.location != item.location
            and not mentions_trash_or_spam(self.node)
        ):
            return False
        if item.location == "trash" and not ctx.raw_finds_trash and not mentions_trash_or_spam(self.node):
            return False  # the web search's rule, "Trash only when asked for", applied inside Trash too
        return self.node.matches(view, RawContext(account_address=ctx.account_address, now=ctx.now))


# --------------------------------------------------------------------------- parser

_FLAG_KEYS: dict[str, tuple[str, bool]] = {
    "SEEN": ("\\Seen", True),
    "UNSEEN": ("\\Seen", False),
    "FLAGGED": ("\\Flagged", True),
    "UNFLAGGED": ("\\Flagged", False),
    "ANSWERED": ("\\Answered", True),
    "UNANSWERED": ("\\Answered", False),
    "DELETED": ("\\Deleted", True),
    "UNDELETED": ("\\Deleted", False),
    "DRAFT": ("\\Draft", True),
    "UNDRAFT": ("\\Draft", False),
}
_TEXT_KEYS = {"FROM", "TO", "CC", "BCC", "SUBJECT", "BODY", "TEXT"}
_DATE_KEYS = {"SINCE", "BEFORE", "ON"}
_SENT_KEYS = {"SENTSINCE": "SINCE", "SENTBEFORE": "BEFORE", "SENTON": "ON"}
_ATOM_FLAG = re.compile(r"[^\s(){%*\"\\\]]+")


class _Stream:
    def __init__(self, tokens: list[SearchToken]) -> None:
        self.tokens = tokens
        self.pos = 0

    def more(self) -> bool:
        return self.pos < len(self.tokens)

    def next(self, what: str) -> SearchToken:
        if self.pos >= len(self.tokens):
            raise SearchParseError(f"missing {what}")
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok


def _parse_keys(tokens: list[SearchToken]) -> SearchNode:
    stream = _Stream(tokens)
    keys: list[SearchNode] = []
    while stream.more():
        keys.append(_parse_key(stream))
    if not keys:
        raise SearchParseError("empty search key list")
    return keys[0] if len(keys) == 1 else AndKey(tuple(keys))


def _parse_key(stream: _Stream) -> SearchNode:
    tok = stream.next("search key")
    if isinstance(tok, list):
        return _parse_keys(tok)
    if isinstance(tok, bytes):
        raise SearchParseError("a quoted string is not a search key")
    key = tok.upper()
    handler = _KEY_PARSERS.get(key)
    if handler is not None:
        return handler(key, stream)
    if tok and tok[0] in "0123456789*":
        return SeqSetKey(parse_sequence_set(tok), uid=False)
    raise SearchParseError(f"unknown search key {tok!r}")


def _k_all(key: str, stream: _Stream) -> SearchNode:
    return AllKey()


def _k_flag(key: str, stream: _Stream) -> SearchNode:
    flag, present = _FLAG_KEYS[key]
    return FlagKey(flag, present)


def _k_keyword(key: str, stream: _Stream) -> SearchNode:
    tok = stream.next("keyword")
    if not isinstance(tok, str) or not _ATOM_FLAG.fullmatch(tok):
        raise SearchParseError(f"bad keyword {tok!r}")
    return FlagKey(tok, key == "KEYWORD")


def _k_date(key: str, stream: _Stream) -> SearchNode:
    return InternalDateKey(key, _parse_date(stream.next("date")))


def _k_sent(key: str, stream: _Stream) -> SearchNode:
    return SentDateKey(_SENT_KEYS[key], _parse_date(stream.next("date")))


def _k_text(key: str, stream: _Stream) -> SearchNode:
    return TextKey(key.lower(), _text(stream.next("string")))


def _k_header(key: str, stream: _Stream) -> SearchNode:
    name = _text(stream.next("header name")).strip()
    if not name or ":" in name:
        raise SearchParseError(f"bad header name {name!r}")
    return HeaderKey(name, _text(stream.next("header value")))


def _k_size(key: str, stream: _Stream) -> SearchNode:
    return SizeKey(key == "LARGER", _parse_number(stream.next("size")))


def _k_uid(key: str, stream: _Stream) -> SearchNode:
    tok = stream.next("sequence set")
    if not isinstance(tok, str):
        raise SearchParseError("UID needs a sequence set")
    return SeqSetKey(parse_sequence_set(tok), uid=True)


def _k_or(key: str, stream: _Stream) -> SearchNode:
    return OrKey(_parse_key(stream), _parse_key(stream))


def _k_not(key: str, stream: _Stream) -> SearchNode:
    return NotKey(_parse_key(stream))


def _k_never(key: str, stream: _Stream) -> SearchNode:
    return NoneKey()


def _k_raw(key: str, stream: _Stream) -> SearchNode:
    tok = stream.next("X-GM-RAW query")
    query = _text(tok)
    try:
        node = parse_raw(query)
    except RawQueryError as exc:
        raise SearchParseError(str(exc)) from exc
    return RawKey(query, node)


def _k_gmid(key: str, stream: _Stream) -> SearchNode:
    value = _parse_number(stream.next("id"))
    if value >= 2**64:
        raise SearchParseError("id out of range")
    return GmIdKey("msgid" if key == "X-GM-MSGID" else "thrid", value)


def _k_labels(key: str, stream: _Stream) -> SearchNode:
    tok = stream.next("label")
    if isinstance(tok, str) and tok.startswith("\\"):
        raise SearchParseError("system labels must be quoted")  # Gmail answers BAD
    label = _text(tok)
    if not label:
        raise SearchParseError("empty label")
    return LabelKey(label)


_KEY_PARSERS: dict[str, Callable[[str, _Stream], SearchNode]] = {
    "ALL": _k_all,
    **{k: _k_flag for k in _FLAG_KEYS},
    "KEYWORD": _k_keyword,
    "UNKEYWORD": _k_keyword,
    **{k: _k_date for k in _DATE_KEYS},
    **{k: _k_sent for k in _SENT_KEYS},
    **{k: _k_text for k in _TEXT_KEYS},
    "HEADER": _k_header,
    "LARGER": _k_size,
    "SMALLER": _k_size,
    "UID": _k_uid,
    "OR": _k_or,
    "NOT": _k_not,
    "RECENT": _k_never,
    "NEW": _k_never,
    "OLD": _k_all,
    "X-GM-RAW": _k_raw,
    "X-GM-THRID": _k_gmid,
    "X-GM-MSGID": _k_gmid,
    "X-GM-LABELS": _k_labels,
}


def parse_search(tokens: list[SearchToken]) -> SearchNode:
    """Parse SEARCH criteria (after CHARSET); raise ``SearchParseError`` when malformed."""
    return _parse_keys(tokens)
