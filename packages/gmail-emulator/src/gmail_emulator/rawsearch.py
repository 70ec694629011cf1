"""Gmail's X-GM-RAW query language, evaluated: the nodes a parsed query is made of (`rawquery` reads
the query text into them) and the matchers behind each operator, for the subset listed in
BEHAVIOURS.md, with the operators of https://support.google.com/mail/answer/7190.

Matching is word-based (words are runs of Unicode letters/digits, compared case-insensitively);
a multi-word value matches consecutive words.
"""

from __future__ import annotations

import functools
import re
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Protocol

from gmail_emulator.mime import ParsedMessage

__all__ = [
    "And",
    "MatchAll",
    "Not",
    "Or",
    "RawContext",
    "RawNode",
    "RawQueryError",
    "SearchView",
    "Term",
    "mentions_trash_or_spam",
]

try:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        _PACIFIC: tzinfo = ZoneInfo("America/Los_Angeles")
    except ZoneInfoNotFoundError:  # no tzdata on this machine
        _PACIFIC = timezone(timedelta(hours=-8))
except ImportError:  # pragma: no cover
    _PACIFIC = timezone(timedelta(hours=-8))


class RawQueryError(ValueError):
    """The query cannot be parsed (unbalanced quote, parenthesis or brace)."""


class SearchView(Protocol):
    """The search index's view of one message.

    Members are read-only properties so that plain attributes and frozen dataclasses both satisfy it.
    """

    @property
    def parsed(self) -> ParsedMessage: ...

    @property
    def labels(self) -> frozenset[str]:
        """System labels "\\Inbox" "\\Sent" "\\Draft" "\\Important" "\\Starred"; user label names decoded."""
        ...

    @property
    def flags(self) -> frozenset[str]:
        """ "\\Seen", "\\Flagged", ..."""
        ...

    @property
    def location(self) -> str:
        """ "normal" | "spam" | "trash"."""
        ...

    @property
    def internaldate(self) -> datetime:
        """Aware UTC."""
        ...


@dataclass
class RawContext:
    account_address: str
    now: datetime  # aware UTC


# --------------------------------------------------------------------------- word matching

_WORD = re.compile(r"[^\W_]+")


def _wordstr(text: str) -> str:
    """`` w1 w2 w3 `` (casefolded words with sentinel spaces) for phrase containment tests."""
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


def _contains_phrase(haystack: str, needle: str) -> bool:
    q = _wordstr(needle)
    if q == "  ":  # nothing word-like in the query term: ignore it
        return True
    return q in haystack


@dataclass
class _AddrInfo:
    address: str  # lower-case
    domain: str
    words: str  # _wordstr of display name
    addr_words: str  # _wordstr of the address


@dataclass
class _Index:
    text: str
    subject: str
    addresses: dict[str, list[_AddrInfo]]
    filenames: list[str]
    message_id: str | None


_INDEX_CACHE: weakref.WeakKeyDictionary[ParsedMessage, _Index] = weakref.WeakKeyDictionary()
_ADDR_FIELDS = ("from", "to", "cc", "bcc")


@functools.lru_cache(maxsize=4096)  # a query's rfc822msgid: value is stripped again for every message
def _strip_msgid(value: str) -> str:
    value = re.sub(r"\s+", "", value)
    if value.startswith("<") and value.endswith(">"):
        value = value[1:-1]
    return value


def _index(parsed: ParsedMessage) -> _Index:
    cached = _INDEX_CACHE.get(parsed)
    if cached is not None:
        return cached
    addresses: dict[str, list[_AddrInfo]] = {}
    pieces: list[str] = [parsed.subject]
    for field in _ADDR_FIELDS:
        infos: list[_AddrInfo] = []
        for name, addr in parsed.addresses(field):
            lower = addr.lower()
            infos.append(_AddrInfo(lower, lower.rpartition("@")[2], _wordstr(name), _wordstr(addr)))
            if field != "bcc":
                pieces += [name, addr]
        addresses[field] = infos
    filenames = parsed.attachment_filenames()
    pieces.append(parsed.text_content())
    pieces += filenames
    text = " " + " | ".join(" ".join(_WORD.findall(p.casefold())) for p in pieces) + " "
    msgid = parsed.message_id
    index = _Index(
        text=text,
        subject=_wordstr(parsed.subject),
        addresses=addresses,
        filenames=[f.casefold() for f in filenames],
        message_id=None if msgid is None else _strip_msgid(msgid),
    )
    _INDEX_CACHE[parsed] = index
    return index


def _norm_label(name: str) -> str:
    return name.strip().casefold().replace(" ", "-").replace("/", "-")


_SYSTEM_LABEL_NAMES: dict[str, tuple[str, ...]] = {
    "\\Inbox": ("inbox",),
    "\\Sent": ("sent",),
    "\\Draft": ("draft", "drafts"),
    "\\Important": ("important",),
    "\\Starred": ("starred",),
}


def _has_label(msg: SearchView, wanted: str) -> bool:
    target = _norm_label(wanted)
    if not target:
        return False
    for label in msg.labels:
        names = _SYSTEM_LABEL_NAMES.get(label)
        if names is not None:
            if target in names:
                return True
        elif _norm_label(label) == target:
            return True
    return False


# --------------------------------------------------------------------------- dates


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def _parse_date(value: str) -> datetime | None:
    value = value.strip()
    if re.fullmatch(r"\d{5,}", value):
        try:
            return datetime.fromtimestamp(int(value), UTC)
        except (OverflowError, OSError, ValueError):
            return None
    m = re.fullmatch(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})", value)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", value)
        if not m:
            return None
        mo, d, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        return datetime(y, mo, d, tzinfo=_PACIFIC)
    except ValueError:
        return None


_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "m": timedelta(days=30), "y": timedelta(days=365)}


def _parse_age(value: str) -> timedelta | None:
    m = re.fullmatch(r"(\d{1,6})([hdmy])", value.strip().lower())
    if not m:
        return None
    return int(m.group(1)) * _UNITS[m.group(2)]


def _parse_size(value: str) -> int | None:
    m = re.fullmatch(r"(\d{1,12})([kmg]?)b?", value.strip().lower())
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2)]


# --------------------------------------------------------------------------- AST


class RawNode(ABC):
    """A node of a parsed X-GM-RAW query."""

    @abstractmethod
    def matches(self, msg: SearchView, ctx: RawContext) -> bool:
        """Whether the message satisfies this node."""

    def walk(self) -> list[RawNode]:
        return [self]


@dataclass(frozen=True)
class MatchAll(RawNode):
    def matches(self, msg: SearchView, ctx: RawContext) -> bool:
        return True


@dataclass(frozen=True)
class And(RawNode):
    children: tuple[RawNode, ...]

    def matches(self, msg: SearchView, ctx: RawContext) -> bool:
        return all(c.matches(msg, ctx) for c in self.children)

    def walk(self) -> list[RawNode]:
        return [self, *(n for c in self.children for n in c.walk())]


@dataclass(frozen=True)
class Or(RawNode):
    children: tuple[RawNode, ...]

    def matches(self, msg: SearchView, ctx: RawContext) -> bool:
        return any(c.matches(msg, ctx) for c in self.children)

    def walk(self) -> list[RawNode]:
        return [self, *(n for c in self.children for n in c.walk())]


@dataclass(frozen=True)
class Not(RawNode):
    child: RawNode

    def matches(self, msg: SearchView, ctx: RawContext) -> bool:
        return not self.child.matches(msg, ctx)

    def walk(self) -> list[RawNode]:
        return [self, *self.child.walk()]


@dataclass(frozen=True)
class Term(RawNode):
    """``field:value`` (field lower-case) or a plain word / phrase (``field is None``)."""

    field: str | None
    value: str

    def matches(self, msg: SearchView, ctx: RawContext) -> bool:
        field = self.field
        value = self.value
        if field is None:
            return _contains_phrase(_index(msg.parsed).text, value)
        handler = _FIELDS.get(field)
        if handler is None:
            return False  # unknown operator (category:, list:, ...) matches nothing
        return handler(msg, ctx, value)


# --------------------------------------------------------------------------- field handlers


def _match_address(fields: tuple[str, ...]) -> _Handler:
    def handler(msg: SearchView, ctx: RawContext, value: str) -> bool:
        wanted = value.strip().casefold()
        if not wanted:
            return False
        if wanted == "me":
            wanted = ctx.account_address.strip().casefold()
        index = _index(msg.parsed)
        for field in fields:
            for info in index.addresses.get(field, []):
                if wanted in (info.address, info.domain):
                    return True
                if _wordstr(wanted) != "  " and (
                    _contains_phrase(info.words, wanted) or _contains_phrase(info.addr_words, wanted)
                ):
                    return True
        return False

    return handler


def _match_subject(msg: SearchView, ctx: RawContext, value: str) -> bool:
    return _contains_phrase(_index(msg.parsed).subject, value)


def _match_label(msg: SearchView, ctx: RawContext, value: str) -> bool:
    return _has_label(msg, value)


def _match_in(msg: SearchView, ctx: RawContext, value: str) -> bool:
    where = value.strip().casefold()
    if where == "anywhere":
        return True
    if where == "trash":
        return msg.location == "trash"
    if where == "spam":
        return msg.location == "spam"
    if where == "inbox":
        return "\\Inbox" in msg.labels and msg.location == "normal"
    if where == "starred":
        return "\\Starred" in msg.labels or "\\Flagged" in msg.flags
    return _has_label(msg, where)


def _match_is(msg: SearchView, ctx: RawContext, value: str) -> bool:
    what = value.strip().casefold()
    if what == "unread":
        return "\\Seen" not in msg.flags
    if what == "read":
        return "\\Seen" in msg.flags
    if what == "starred":
        return "\\Starred" in msg.labels or "\\Flagged" in msg.flags
    if what == "important":
        return "\\Important" in msg.labels
    return False


def _match_has(msg: SearchView, ctx: RawContext, value: str) -> bool:
    what = value.strip().casefold()
    if what == "attachment":
        return msg.parsed.has_attachment()
    if what == "userlabels":
        return any(not label.startswith("\\") for label in msg.labels)
    if what == "nouserlabels":
        return all(label.startswith("\\") for label in msg.labels)
    return False


def _match_filename(msg: SearchView, ctx: RawContext, value: str) -> bool:
    wanted = value.strip().casefold()
    if not wanted:
        return False
    return any(wanted in name for name in _index(msg.parsed).filenames)


def _match_after(msg: SearchView, ctx: RawContext, value: str) -> bool:
    when = _parse_date(value)
    return when is not None and _utc(msg.internaldate) >= when


def _match_before(msg: SearchView, ctx: RawContext, value: str) -> bool:
    when = _parse_date(value)
    return when is not None and _utc(msg.internaldate) < when


def _match_newer_than(msg: SearchView, ctx: RawContext, value: str) -> bool:
    age = _parse_age(value)
    return age is not None and _utc(msg.internaldate) >= _utc(ctx.now) - age


def _match_older_than(msg: SearchView, ctx: RawContext, value: str) -> bool:
    age = _parse_age(value)
    return age is not None and _utc(msg.internaldate) < _utc(ctx.now) - age


def _match_msgid(msg: SearchView, ctx: RawContext, value: str) -> bool:
    # Only the Message-ID: the word index of the whole message is not built for it.
    wanted = _strip_msgid(value)
    found = msg.parsed.message_id
    return bool(wanted) and found is not None and _strip_msgid(found) == wanted


def _match_larger(msg: SearchView, ctx: RawContext, value: str) -> bool:
    size = _parse_size(value)
    return size is not None and msg.parsed.size > size


def _match_smaller(msg: SearchView, ctx: RawContext, value: str) -> bool:
    size = _parse_size(value)
    return size is not None and msg.parsed.size < size


class _Handler(Protocol):
    def __call__(self, msg: SearchView, ctx: RawContext, value: str, /) -> bool: ...


_FIELDS: dict[str, _Handler] = {
    "from": _match_address(("from",)),
    "to": _match_address(("to", "cc", "bcc")),
    "cc": _match_address(("cc",)),
    "bcc": _match_address(("bcc",)),
    "subject": _match_subject,
    "label": _match_label,
    "in": _match_in,
    "is": _match_is,
    "has": _match_has,
    "filename": _match_filename,
    "after": _match_after,
    "newer": _match_after,
    "before": _match_before,
    "older": _match_before,
    "newer_than": _match_newer_than,
    "older_than": _match_older_than,
    "rfc822msgid": _match_msgid,
    "larger": _match_larger,
    "size": _match_larger,
    "smaller": _match_smaller,
}


def mentions_trash_or_spam(node: RawNode) -> bool:
    """True when the query names ``in:trash``, ``in:spam`` or ``in:anywhere`` (negated or not)."""
    return any(
        isinstance(n, Term) and n.field == "in" and n.value.strip().casefold() in ("trash", "spam", "anywhere")
        for n in node.walk()
    )
