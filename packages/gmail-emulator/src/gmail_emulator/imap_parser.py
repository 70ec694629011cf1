"""IMAP command reading and parsing: literals, tokens, sequence sets, FETCH items.

Tokens are `str` for atoms (including `NIL` and bracketed FETCH items such as
`BODY.PEEK[HEADER.FIELDS (A B)]<0.2048>`), `bytes` for quoted strings and literals (already
unquoted) and `list` for parenthesised groups -- the shape `imapsearch.parse_search` expects.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "PARSE_ERROR",
    "Command",
    "FetchItem",
    "ParseError",
    "RawCommand",
    "SeqSet",
    "Token",
    "login_name",
    "merged_ranges",
    "parse_command",
    "parse_fetch_items",
    "parse_sequence_set",
    "parse_tag",
    "read_command",
    "seq_contains",
]

Token: TypeAlias = "str | bytes | list[Token]"
SeqSet: TypeAlias = list[tuple[int, int]]  # inclusive ranges; 0 stands for "*"

PARSE_ERROR = "Could not parse command"
_LITERAL_AT_END = re.compile(rb"\{(\d{1,12})(\+?)\}\r?\n$")
_TAG = re.compile(rb"^([!#$&',\-./0-9:;<=>?@A-Z\[\]^_`a-z|}~]+) ")
_LITERAL = re.compile(rb"\{(\d{1,12})\+?\}\r?\n")
_ATOM_STOP = frozenset(b' ()"{\r\n')


class ParseError(Exception):
    """A malformed command; the session answers `BAD Could not parse command`."""

    def __init__(self, text: str = PARSE_ERROR) -> None:
        super().__init__(text)
        self.text = text


# --------------------------------------------------------------------------- reading


@dataclass
class RawCommand:
    data: bytes  # the whole command, literals included
    error: str | None = None  # "<status> <text>" when the command must be refused (literal too big)
    fatal: bool = False  # the connection cannot continue (line or literal far too long)


async def read_command(
    reader: asyncio.StreamReader,
    continuation: Callable[[], Awaitable[None]],
    *,
    literal_minus_max: int,
    max_literal: int,
    on_chunk: Callable[[bytes], None] | None = None,
    max_line: int | None = None,
) -> RawCommand | None:
    """Read one command with its literals; None at end of stream.

    A synchronising literal `{n}` is acknowledged through `continuation()` (the session writes
    `+ go ahead`); a non-synchronising `{n+}` larger than `literal_minus_max` is read and
    discarded, and the command comes back with `error` set (LITERAL-, RFC 7888). A line longer
    than `max_line` bytes (literal data not counted) makes the command come back with BAD.
    """
    parts: list[bytes] = []
    error: str | None = None
    record = on_chunk or _ignore
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError:
            return RawCommand(b"".join(parts), "BAD [TOOBIG] Line too long", fatal=True)
        record(line)
        parts.append(line)
        m = _LITERAL_AT_END.search(line)
        if max_line is not None and len(line.rstrip(b"\r\n")) > max_line and error is None:
            error = "BAD Command line too long (Failure)"
            if m is not None and not m.group(2):
                return RawCommand(b"".join(parts), error)  # no "+ go ahead" for a refused command
        if m is None:
            return RawCommand(b"".join(parts), error)
        size, non_sync = int(m.group(1)), bool(m.group(2))
        if size > max_literal:
            return _literal_too_big(b"".join(parts), non_sync)
        if not non_sync:
            await continuation()
        elif size > literal_minus_max:
            error = "BAD [TOOBIG] Non-synchronizing literal too big"
        try:
            data = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            return None
        record(data)
        parts.append(data)


def _ignore(_chunk: bytes) -> None:
    pass


def _literal_too_big(data: bytes, non_sync: bool) -> RawCommand:
    """A literal above the APPEND limit: refused without reading it (the link ends if it is already coming)."""
    if non_sync:
        return RawCommand(data, "BAD [TOOBIG] Literal too big", fatal=True)
    return RawCommand(data, "NO [TOOBIG] Message too large. (Failure)")


# --------------------------------------------------------------------------- tokens


@dataclass
class Command:
    tag: str
    name: str  # upper case, "UID " prefix included: "UID FETCH"
    args: list[Token]


def parse_tag(data: bytes) -> str | None:
    m = _TAG.match(data)
    return m.group(1).decode("ascii") if m else None


class _Scanner:
    def __init__(self, data: bytes, pos: int, utf8: bool) -> None:
        self.data = data
        self.pos = pos
        self.utf8 = utf8

    def at_end(self) -> bool:
        return self.data[self.pos :] in (b"", b"\r\n", b"\n")

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def tokens(self, closing: bool) -> list[Token]:
        out: list[Token] = []
        while True:
            while self.peek() == 0x20:
                self.pos += 1
            ch = self.peek()
            if ch is None or ch in (0x0D, 0x0A):
                if closing:
                    raise ParseError()
                return out
            if ch == 0x29:  # ")"
                if not closing:
                    raise ParseError()
                self.pos += 1
                return out
            out.append(self.token())

    def token(self) -> Token:
        ch = self.peek()
        if ch == 0x28:  # "("
            self.pos += 1
            return self.tokens(closing=True)
        if ch == 0x22:  # '"'
            return self.quoted()
        if ch == 0x7B:  # "{"
            return self.literal()
        return self.atom()

    def quoted(self) -> bytes:
        data = self.data
        i = self.pos + 1
        out = bytearray()
        while i < len(data):
            c = data[i]
            if c == 0x5C:  # backslash
                if i + 1 >= len(data) or data[i + 1] not in (0x5C, 0x22):
                    raise ParseError()
                out.append(data[i + 1])
                i += 2
                continue
            if c == 0x22:
                self.pos = i + 1
                if not self.utf8 and any(b >= 0x80 for b in out):
                    raise ParseError()  # Gmail refuses raw 8-bit in a quoted string
                return bytes(out)
            if c in (0x0D, 0x0A, 0x00):
                break
            out.append(c)
            i += 1
        raise ParseError()

    def literal(self) -> bytes:
        m = _LITERAL.match(self.data, self.pos)
        if m is None:
            raise ParseError()
        size = int(m.group(1))
        start = m.end()
        if start + size > len(self.data):
            raise ParseError()
        self.pos = start + size
        return self.data[start : self.pos]

    def atom(self) -> str:
        data = self.data
        start = i = self.pos
        while i < len(data):
            c = data[i]
            if c == 0x5B:  # "[": a section spec may hold spaces and parentheses
                end = data.find(b"]", i)
                if end < 0 or b"\r" in data[i:end] or b"\n" in data[i:end]:
                    raise ParseError()
                i = end + 1
                continue
            if c in _ATOM_STOP or c < 0x20 or c == 0x7F:
                break
            i += 1
        if i == start:
            raise ParseError()
        self.pos = i
        raw = data[start:i]
        try:
            return raw.decode("utf-8" if self.utf8 else "ascii")
        except UnicodeDecodeError:
            raise ParseError() from None


def parse_command(data: bytes, *, utf8: bool = False) -> Command:
    """Split a complete command (as `read_command` returned it) into tag, name and arguments."""
    tag = parse_tag(data)
    if tag is None or tag.startswith("+"):
        raise ParseError()
    scanner = _Scanner(data, len(tag) + 1, utf8)
    name_token = scanner.token()
    if not isinstance(name_token, str):
        raise ParseError()
    name = name_token.upper()
    if name == "UID":
        if scanner.peek() != 0x20:
            raise ParseError()
        scanner.pos += 1
        sub = scanner.token()
        if not isinstance(sub, str):
            raise ParseError()
        name = "UID " + sub.upper()
    if not scanner.at_end() and scanner.peek() != 0x20:
        raise ParseError()
    args = scanner.tokens(closing=False)
    return Command(tag, name, args)


def login_name(cmd: Command) -> str | None:
    """The account a LOGIN (or a SASL-IR AUTHENTICATE PLAIN) is for, so faults can target it."""
    args = cmd.args
    if cmd.name == "LOGIN" and args and isinstance(args[0], str | bytes):
        user = args[0]
        return user.decode("utf-8", errors="replace") if isinstance(user, bytes) else user
    if cmd.name == "AUTHENTICATE" and len(args) == 2 and isinstance(args[1], str):
        with contextlib.suppress(ValueError):
            parts = base64.b64decode(args[1], validate=True).split(b"\0")
            if len(parts) == 3:
                return parts[1].decode("utf-8", errors="replace")
    return None


# --------------------------------------------------------------------------- sequence sets

_SEQ_NUMBER = re.compile(r"^(\*|[1-9]\d{0,9})(?::(\*|[1-9]\d{0,9}))?$")


def parse_sequence_set(token: Token) -> SeqSet:
    if not isinstance(token, str) or not token:
        raise ParseError()
    out: SeqSet = []
    for piece in token.split(","):
        m = _SEQ_NUMBER.match(piece)
        if m is None:
            raise ParseError()
        lo = 0 if m.group(1) == "*" else int(m.group(1))
        hi_text = m.group(2) if m.group(2) is not None else m.group(1)
        hi = 0 if hi_text == "*" else int(hi_text)
        out.append((lo, hi))
    return out


def seq_contains(seqset: SeqSet, value: int, star: int) -> bool:
    """Whether `value` lies in the set, `*` meaning `star` (the largest number in use)."""
    for lo, hi in seqset:
        a = star if lo == 0 else lo
        b = star if hi == 0 else hi
        if min(a, b) <= value <= max(a, b):
            return True
    return False


def merged_ranges(seqset: SeqSet, star: int) -> tuple[list[int], list[int]]:
    """Starts and ends of the set's inclusive ranges, `*` resolved, sorted and merged (the same
    membership as `seq_contains`)."""
    spans = sorted(
        (min(a, b), max(a, b)) for a, b in ((star if lo == 0 else lo, star if hi == 0 else hi) for lo, hi in seqset)
    )
    starts: list[int] = []
    ends: list[int] = []
    for lo, hi in spans:
        if ends and lo <= ends[-1] + 1:
            ends[-1] = max(ends[-1], hi)
        else:
            starts.append(lo)
            ends.append(hi)
    return starts, ends


# --------------------------------------------------------------------------- FETCH items

_SIMPLE_ITEMS = frozenset(
    {
        "UID",
        "FLAGS",
        "INTERNALDATE",
        "RFC822.SIZE",
        "ENVELOPE",
        "BODYSTRUCTURE",
        "BODY",
        "RFC822",
        "RFC822.HEADER",
        "RFC822.TEXT",
        "X-GM-THRID",
        "X-GM-MSGID",
        "X-GM-LABELS",
        "MODSEQ",
    }
)
_MACROS = {
    "ALL": ("FLAGS", "INTERNALDATE", "RFC822.SIZE", "ENVELOPE"),
    "FAST": ("FLAGS", "INTERNALDATE", "RFC822.SIZE"),
    "FULL": ("FLAGS", "INTERNALDATE", "RFC822.SIZE", "ENVELOPE", "BODY"),
}
_BODY_ITEM = re.compile(r"^(BODY(?:\.PEEK)?)\[([^\]]*)\](?:<(\d{1,10})(?:\.(\d{1,10}))?>)?$", re.I)
_SECTION = re.compile(
    r"^(?:(?P<part>[1-9]\d*(?:\.[1-9]\d*)*)(?:\.(?P<ptext>HEADER\.FIELDS\.NOT|HEADER\.FIELDS|HEADER|TEXT|MIME))?"
    r"|(?P<text>HEADER\.FIELDS\.NOT|HEADER\.FIELDS|HEADER|TEXT))?"
    r"(?:\s*\((?P<fields>[^()]*)\))?$",
    re.I,
)
_FIELD = re.compile(r'"((?:[^"\\]|\\.)*)"|([!#-\'*+\-.0-9A-Z^_`a-z|~]+)')


@dataclass(frozen=True)
class FetchItem:
    name: str  # one of _SIMPLE_ITEMS, or "BODY[]" for a section fetch
    section: str | None = None  # normalised section spec, e.g. "1.2.HEADER.FIELDS (A B)"
    peek: bool = False
    partial: tuple[int, int | None] | None = None  # origin, length

    @property
    def response_key(self) -> bytes:
        """The key of this item in the FETCH response: the partial echoes only its origin."""
        if self.name != "BODY[]":
            return self.name.encode()
        key = b"BODY[" + (self.section or "").encode() + b"]"
        if self.partial is not None:
            key += b"<%d>" % self.partial[0]
        return key


def _normalise_section(text: str) -> str:
    m = _SECTION.match(text.strip())
    if m is None:
        raise ParseError()
    part, sub = m.group("part"), (m.group("ptext") or m.group("text") or "").upper()
    fields_text = m.group("fields")
    if (fields_text is not None) != sub.startswith("HEADER.FIELDS"):
        raise ParseError()
    out = ".".join(x for x in (part, sub) if x)
    if fields_text is not None:
        names: list[str] = []
        pos = 0
        for fm in _FIELD.finditer(fields_text):
            if fields_text[pos : fm.start()].strip():
                raise ParseError()
            names.append((fm.group(1) if fm.group(1) is not None else fm.group(2)).upper())
            pos = fm.end()
        if fields_text[pos:].strip() or not names:
            raise ParseError()
        out += " (" + " ".join(names) + ")"
    return out


def _fetch_item(atom: str) -> FetchItem:
    upper = atom.upper()
    if upper in _SIMPLE_ITEMS:
        return FetchItem(upper)
    m = _BODY_ITEM.match(atom)
    if m is None:
        raise ParseError()
    peek = m.group(1).upper() == "BODY.PEEK"
    section = _normalise_section(m.group(2))
    partial: tuple[int, int | None] | None = None
    if m.group(3) is not None:
        partial = (int(m.group(3)), int(m.group(4)) if m.group(4) is not None else None)
    return FetchItem("BODY[]", section, peek, partial)


def parse_fetch_items(token: Token) -> list[FetchItem]:
    """FETCH's item argument: a macro (ALL/FAST/FULL), one item, or a parenthesised list."""
    if isinstance(token, str):
        macro = _MACROS.get(token.upper())
        if macro is not None:
            return [FetchItem(name) for name in macro]
        return [_fetch_item(token)]
    if isinstance(token, list) and token:
        items: list[FetchItem] = []
        for sub in token:
            if not isinstance(sub, str):
                raise ParseError()
            items.append(_fetch_item(sub))
        return items
    raise ParseError()
