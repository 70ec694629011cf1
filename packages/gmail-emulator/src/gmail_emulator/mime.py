"""MIME parsing for the emulator: IMAP ENVELOPE, BODYSTRUCTURE, BODY[section] and search helpers.

Everything here is pure (no I/O) and tolerant: a ``ParsedMessage`` can be built from any bytes and
none of its methods raise on malformed MIME.  The MIME tree is split by hand on the CRLF-normalised
raw bytes so that every part keeps its exact byte range (sizes and sections are byte-exact); the
stdlib ``email`` package (policy ``compat32``) is used only for parameter parsing and RFC 2231.

Wire values (``envelope()``, ``bodystructure()``) are ``bytes`` ready to be written into a FETCH
response; strings that cannot be quoted are sent as synchronising literals ``{n}\\r\\n<bytes>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

from .imap_codec import imap_nstring
from .mime_address import Addr, parse_address_list
from .mime_text import (
    bytes_to_text,
    count_lines,
    decode_charset,
    header_text,
    normalize_crlf,
    parse_params,
    strip_html,
    transfer_decode,
)

__all__ = ["HeaderEnd", "ParsedMessage"]

_MAX_DEPTH = 32
_FOLD = re.compile(rb"\r\n(?=[ \t])")
_MSGID = re.compile(r"<[^<>]*>")


# --------------------------------------------------------------------------- header fields


class _Field:
    __slots__ = ("name", "raw", "value")

    def __init__(self, name: str, value: bytes, raw: bytes) -> None:
        self.name = name  # lower-case field name ("" for a garbage line)
        self.value = value  # text after the colon, still folded
        self.raw = raw  # the whole field, folding kept, without its final CRLF

    @property
    def unfolded(self) -> bytes:
        return _FOLD.sub(b"", self.value).strip()


_FIELD_SPLIT = re.compile(rb"\r\n(?![ \t])")


def _parse_fields(block: bytes) -> list[_Field]:
    fields: list[_Field] = []
    if block.endswith(b"\r\n"):
        block = block[:-2]
    if not block:
        return fields
    for raw in _FIELD_SPLIT.split(block):  # one piece per field, folding kept
        name, colon, value = raw.partition(b":")
        if colon and b"\r\n" not in name:
            fields.append(_Field(name.strip().decode("latin-1").lower(), value, raw))
        else:
            fields.append(_Field("", b"", raw))
    return fields


# --------------------------------------------------------------------------- MIME parts


HeaderEnd = Literal["blank_line", "non_field"]
# How BODYSTRUCTURE gives a parameter value with 8-bit bytes (a raw UTF-8 file name): as sent, or
# as UTF-8 with U+FFFD for every sequence that is not (BEHAVIOURS.md, knob `param_8bit`).
EightBit = Literal["as_sent", "utf8_replaced"]
# A header field line (a name, obsolete spaces allowed before the colon) or a folded continuation.
_FIELD_LINE = re.compile(rb"[\x21-\x39\x3b-\x7e]+[ \t]*:|[ \t]")


def _header_span(raw: bytes, start: int, end: int, rule: HeaderEnd) -> tuple[int, int]:
    """(end of the header, start of the body) of the entity at raw[start:end].

    "blank_line": the header runs to the first empty line (RFC 5322 section 2.1), whatever lines
    come before it. "non_field": it also ends at the first line that is neither a field nor a
    folded continuation, and that line starts the body (the two rules of BEHAVIOURS.md, knob
    `header_end`)."""
    if start >= end:
        return start, start
    if raw.startswith(b"\r\n", start):
        return start, start + 2
    blank = raw.find(b"\r\n\r\n", start, end)
    stop = end if blank < 0 else blank + 2
    if rule == "non_field":
        line = start
        while line < stop:
            if not _FIELD_LINE.match(raw, line, end):
                return line, line
            nxt = raw.find(b"\r\n", line, end)
            line = end if nxt < 0 else nxt + 2
    return (end, end) if blank < 0 else (blank + 2, blank + 4)


class _Part:
    """One MIME entity: header at raw[start:body_start], body at raw[body_start:end]."""

    def __init__(
        self, raw: bytes, start: int, end: int, default_type: tuple[str, str], depth: int, rule: HeaderEnd
    ) -> None:
        self.raw = raw
        self.start = start
        self.end = end
        header_end, self.body_start = _header_span(raw, start, end, rule)
        self.fields = _parse_fields(raw[start:header_end])
        self.maintype, self.subtype = default_type
        self.params: list[tuple[str, bytes]] = []
        self.children: list[_Part] = []
        self.message: _Part | None = None

        ct = self.first("content-type")
        if ct is not None:
            m = re.match(rb"\s*([^\s/;]+)\s*/\s*([^\s;]+)", ct)
            if m:
                self.maintype = m.group(1).decode("latin-1").lower()
                self.subtype = m.group(2).decode("latin-1").lower()
            else:
                self.maintype, self.subtype = "text", "plain"
            self.params = parse_params(ct)
        cte = self.first("content-transfer-encoding")
        self.encoding = (cte.decode("latin-1").strip().lower() if cte else "") or "7bit"

        if self.maintype == "multipart":
            # boundary="" is kept: its delimiter lines are a bare "--" (BEHAVIOURS.md, assumed).
            boundary = self.param("boundary")
            if boundary is not None and depth < _MAX_DEPTH:
                child_type = ("message", "rfc822") if self.subtype == "digest" else ("text", "plain")
                for s, e in _split_multipart(raw, self.body_start, end, boundary):
                    self.children.append(_Part(raw, s, e, child_type, depth + 1, rule))
            # A multipart without parts (or whose boundary never comes) stays one: Gmail describes it
            # by its subtype alone (bodystructure below).
        elif self.maintype == "message" and self.subtype == "rfc822" and self.encoding in ("7bit", "8bit", "binary"):
            if depth < _MAX_DEPTH:
                self.message = _Part(raw, self.body_start, end, ("text", "plain"), depth + 1, rule)
            else:
                self.maintype, self.subtype = "application", "octet-stream"

    # -- header access
    def first(self, name: str) -> bytes | None:
        for f in self.fields:
            if f.name == name:
                return f.unfolded
        return None

    def all(self, name: str) -> list[bytes]:
        return [f.unfolded for f in self.fields if f.name == name]

    def param(self, name: str) -> bytes | None:
        for k, v in self.params:
            if k == name:
                return v
        return None

    def disposition(self) -> tuple[str, list[tuple[str, bytes]]] | None:
        value = self.first("content-disposition")
        if value is None:
            return None
        kind = value.split(b";", 1)[0].strip().decode("latin-1").lower()
        if not kind:
            return None
        return kind, parse_params(value)

    @property
    def header_bytes(self) -> bytes:
        return self.raw[self.start : self.body_start]

    @property
    def body(self) -> bytes:
        return self.raw[self.body_start : self.end]

    def walk(self) -> Iterator[_Part]:
        yield self
        for child in self.children:
            yield from child.walk()
        if self.message is not None:
            yield from self.message.walk()

    def filename(self) -> str | None:
        disp = self.disposition()
        value: bytes | None = None
        if disp is not None:
            value = next((v for k, v in disp[1] if k == "filename"), None)
        if value is None:
            value = self.param("name")
        if value is None:
            return None
        return header_text(value).strip() or None

    def is_attachment(self) -> bool:
        if self.children:
            return False
        disp = self.disposition()
        if disp is not None and disp[0] == "attachment":
            return True
        return self.filename() is not None

    # -- wire forms
    def envelope(self) -> bytes:
        def text(name: str) -> bytes:
            return imap_nstring(self.first(name))

        from_ = self.address_list("from")
        sender = self.address_list("sender") or from_
        reply_to = self.address_list("reply-to") or from_
        items = [
            text("date"),
            text("subject"),
            _addr_wire(from_),
            _addr_wire(sender),
            _addr_wire(reply_to),
            _addr_wire(self.address_list("to")),
            _addr_wire(self.address_list("cc")),
            _addr_wire(self.address_list("bcc")),
            text("in-reply-to"),
            text("message-id"),
        ]
        return b"(" + b" ".join(items) + b")"

    def address_list(self, name: str) -> list[Addr]:
        out: list[Addr] = []
        for value in self.all(name):
            out.extend(parse_address_list(value.decode("latin-1")))
        return out

    def bodystructure(self, extended: bool, eight_bit: EightBit = "as_sent") -> bytes:
        if self.maintype == "multipart" and not self.children:
            # Observed: an empty multipart/alternative answered as ("ALTERNATIVE") (BEHAVIOURS.md).
            return b"(" + imap_nstring(self.subtype.upper().encode("latin-1")) + b")"
        if self.children:
            inner = b"".join(c.bodystructure(extended, eight_bit) for c in self.children)
            # Gmail's form (observed): type words in upper case, extension data without a location.
            out = inner + b" " + imap_nstring(self.subtype.upper().encode())
            if extended:
                out += b" " + b" ".join(
                    [_params_wire(self.params, eight_bit), self._disposition_wire(eight_bit), self._language_wire()]
                )
            return b"(" + out + b")"
        body = self.body
        items = [
            imap_nstring(self.maintype.upper().encode("latin-1")),
            imap_nstring(self.subtype.upper().encode("latin-1")),
            _params_wire(self.params, eight_bit),
            imap_nstring(self.first("content-id")),
            imap_nstring(self.first("content-description")),
            imap_nstring(self.encoding.upper().encode("latin-1")),
            b"%d" % len(body),
        ]
        if self.message is not None:
            items += [
                self.message.envelope(),
                self.message.bodystructure(extended, eight_bit),
                b"%d" % count_lines(body),
            ]
        elif self.maintype == "text":
            items.append(b"%d" % count_lines(body))
        if extended:
            items += [
                imap_nstring(self.first("content-md5")),
                self._disposition_wire(eight_bit),
                self._language_wire(),
            ]
        return b"(" + b" ".join(items) + b")"

    def _disposition_wire(self, eight_bit: EightBit) -> bytes:
        disp = self.disposition()
        if disp is None:
            return b"NIL"
        return b"(" + imap_nstring(disp[0].upper().encode("latin-1")) + b" " + _params_wire(disp[1], eight_bit) + b")"

    def _language_wire(self) -> bytes:
        value = self.first("content-language")
        if value is None:
            return b"NIL"
        langs = [x.strip() for x in re.split(rb"[,\s]+", value) if x.strip()]
        if not langs:
            return b"NIL"
        return b"(" + b" ".join(imap_nstring(x) for x in langs) + b")"


def _params_wire(params: list[tuple[str, bytes]], eight_bit: EightBit = "as_sent") -> bytes:
    """Parameters as Gmail lists them (observed): names in upper case, in alphabetical order,
    values as sent; a value with 8-bit bytes as `eight_bit` says (assumed either way)."""
    if not params:
        return b"NIL"
    ordered = sorted(params, key=lambda kv: kv[0].upper())
    return (
        b"("
        + b" ".join(
            imap_nstring(k.upper().encode("latin-1")) + b" " + imap_nstring(_param_value(v, eight_bit))
            for k, v in ordered
        )
        + b")"
    )


def _param_value(value: bytes, eight_bit: EightBit) -> bytes:
    if eight_bit == "as_sent" or value.isascii():
        return value
    return value.decode("utf-8", "replace").encode("utf-8")


def _addr_wire(addrs: list[Addr]) -> bytes:
    if not addrs:
        return b"NIL"
    # A mailbox without a domain has NIL as its host, as Gmail's ENVELOPE gives it (observed).
    wire = [
        (name, route, mailbox, host or None) if mailbox else (name, route, mailbox, host)
        for name, route, mailbox, host in addrs
    ]
    return b"(" + b"".join(b"(" + b" ".join(imap_nstring(_latin(x)) for x in a) + b")" for a in wire) + b")"


def _latin(value: str | None) -> bytes | None:
    return None if value is None else value.encode("latin-1", errors="replace")


def _split_multipart(raw: bytes, start: int, end: int, boundary: bytes) -> list[tuple[int, int]]:
    # RFC 2046 section 5.1.1: a delimiter line need only begin with "--" and the boundary; what
    # follows it is ignored. Only after a space, a tab or the closing "--", though: "--b-1" is the
    # delimiter of a nested boundary "b-1", not of "b" (mime4j's boundary-name-clash sample).
    pattern = re.compile(rb"^--" + re.escape(boundary) + rb"(?:(--)|(?=[ \t\r]|$))[^\r\n]*\r?$", re.M)
    spans: list[tuple[int, int]] = []
    cur: int | None = None
    for m in pattern.finditer(raw, start, end):
        line_start = m.start()
        if cur is not None:
            part_end = line_start
            if line_start - 2 >= cur and raw[line_start - 2 : line_start] == b"\r\n":
                part_end = line_start - 2
            spans.append((cur, max(cur, part_end)))
            cur = None
        if m.group(1):
            break
        nxt = m.end()
        if nxt < end and raw[nxt : nxt + 1] == b"\n":
            nxt += 1
        cur = nxt
    if cur is not None:  # no closing delimiter: the last part runs to the end
        spans.append((cur, end))
    return spans


# --------------------------------------------------------------------------- public class

_SECTION_TEXTS = {"", "HEADER", "HEADER.FIELDS", "HEADER.FIELDS.NOT", "TEXT", "MIME"}
_FIELD_NAME = re.compile(r'"((?:[^"\\]|\\.)*)"|([^\s()"]+)')


def _parse_section(spec: str) -> tuple[list[int], str, list[str] | None] | None:
    """``1.2.HEADER.FIELDS (A B)`` -> part numbers, section text and field names; None when malformed."""
    spec = spec.strip()
    fields: list[str] | None = None
    if "(" in spec:
        idx = spec.index("(")
        rest = spec[idx + 1 :].rstrip()
        if not rest.endswith(")"):
            return None
        fields = [
            (m.group(1) if m.group(1) is not None else m.group(2)).lower() for m in _FIELD_NAME.finditer(rest[:-1])
        ]
        spec = spec[:idx].strip()
    tokens = spec.split(".") if spec else []
    nums: list[int] = []
    while tokens and tokens[0].isascii() and tokens[0].isdigit():
        n = int(tokens.pop(0))
        if n < 1:
            return None
        nums.append(n)
    text = ".".join(tokens).upper()
    if text not in _SECTION_TEXTS or (fields is not None) != text.startswith("HEADER.FIELDS"):
        return None
    return nums, text, fields


class ParsedMessage:
    """A message parsed once from raw RFC 5322 bytes.  Never raises on malformed input."""

    def __init__(self, raw: bytes, header_end: HeaderEnd = "non_field") -> None:
        self.raw: bytes = normalize_crlf(bytes(raw))
        self.size: int = len(self.raw)
        self._root = _Part(self.raw, 0, self.size, ("text", "plain"), 0, header_end)
        self._envelope: bytes | None = None
        self._bodystructure: dict[tuple[bool, EightBit], bytes] = {}
        self._text: str | None = None
        self._decoded: dict[str, list[str]] = {}  # header() per lower-case name: searches ask it per message

    # ------------------------------------------------------------------ IMAP wire forms
    def envelope(self) -> bytes:
        """The ENVELOPE value (a parenthesised list), raw header text, literals where needed."""
        if self._envelope is None:
            self._envelope = self._root.envelope()
        return self._envelope

    def bodystructure(self, extended: bool = True, eight_bit: EightBit = "as_sent") -> bytes:
        """BODYSTRUCTURE (``extended=True``) or BODY (``extended=False``) value."""
        cached = self._bodystructure.get((extended, eight_bit))
        if cached is None:
            cached = self._bodystructure[extended, eight_bit] = self._root.bodystructure(extended, eight_bit)
        return cached

    def section(self, spec: str) -> bytes | None:
        """Bytes of ``BODY[<spec>]`` (no partial range).  None for a nonexistent part or bad spec."""
        parsed = _parse_section(spec)
        if parsed is None:
            return None
        nums, text, fields = parsed
        if not nums:
            if text == "MIME":
                return None
            target: _Part | None = self._root
        else:
            target = self._resolve(nums)
            if target is None:
                return None
        assert target is not None
        if text == "":
            return self.raw if not nums else target.body
        if text == "MIME":
            return target.header_bytes
        msg = target if not nums else target.message
        if msg is None:
            return None
        if text == "TEXT":
            return msg.body
        if text == "HEADER":
            return msg.header_bytes
        wanted = set(fields or [])
        negate = text.endswith(".NOT")
        lines = [f.raw + b"\r\n" for f in msg.fields if f.name and ((f.name in wanted) != negate)]
        return b"".join(lines) + b"\r\n"

    def _resolve(self, nums: list[int]) -> _Part | None:
        root = self._root
        level = root.children if root.children else [root]
        part: _Part | None = None
        for n in nums:
            if part is not None:
                if part.children:
                    level = part.children
                elif part.message is not None:
                    inner = part.message
                    level = inner.children if inner.children else [inner]
                else:
                    return None
            if n > len(level):
                return None
            part = level[n - 1]
        return part

    # ------------------------------------------------------------------ search helpers
    def header(self, name: str) -> list[str]:
        """Decoded (unfolded, RFC 2047) values of every header field called ``name``."""
        key = name.lower()
        values = self._decoded.get(key)
        if values is None:
            values = self._decoded[key] = [header_text(v) for v in self._root.all(key)]
        return list(values)

    def raw_header(self, name: str) -> list[bytes]:
        """Raw unfolded values of every header field called ``name``."""
        return self._root.all(name.lower())

    @property
    def subject(self) -> str:
        value = self._root.first("subject")
        return "" if value is None else header_text(value)

    @property
    def message_id(self) -> str | None:
        value = self._root.first("message-id")
        if value is None:
            return None
        text = re.sub(r"\s+", "", bytes_to_text(value))
        return text or None

    @property
    def in_reply_to(self) -> str | None:
        value = self._root.first("in-reply-to")
        if value is None:
            return None
        text = bytes_to_text(value)
        m = _MSGID.search(text)
        if m:
            return re.sub(r"\s+", "", m.group(0))
        text = re.sub(r"\s+", "", text)
        return text or None

    @property
    def references(self) -> list[str]:
        out: list[str] = []
        for value in self._root.all("references"):
            out.extend(re.sub(r"\s+", "", m) for m in _MSGID.findall(bytes_to_text(value)))
        return out

    @property
    def date(self) -> datetime | None:
        value = self._root.first("date")
        if not value:
            return None
        try:
            dt = parsedate_to_datetime(bytes_to_text(value))
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if dt is None:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt

    def addresses(self, field: str) -> list[tuple[str, str]]:
        """Decoded ``(display name, address)`` pairs of a header (from/to/cc/bcc/...); groups flattened."""
        out: list[tuple[str, str]] = []
        for name, _route, mailbox, host in self._root.address_list(field.lower()):
            if mailbox is None or host is None:
                continue  # group markers
            display = header_text(name.encode("latin-1", errors="replace")) if name else ""
            addr = mailbox + ("@" + host if host else "")
            out.append((display, bytes_to_text(addr.encode("latin-1", errors="replace"))))
        return out

    def text_content(self) -> str:
        """All text/* non-attachment parts, decoded by charset; HTML tags stripped crudely."""
        if self._text is None:
            self._text = self._compute_text()
        return self._text

    def _compute_text(self) -> str:
        chunks: list[str] = []
        for part in self._root.walk():
            if part.children or part.message is not None or part.maintype != "text":
                continue
            disp = part.disposition()
            if disp is not None and disp[0] == "attachment":
                continue
            charset = part.param("charset")
            data = transfer_decode(part.body, part.encoding)
            text = decode_charset(data, charset.decode("latin-1") if charset else None)
            if part.subtype == "html":
                text = strip_html(text)
            chunks.append(text)
        return "\n".join(chunks)

    def attachment_filenames(self) -> list[str]:
        out: list[str] = []
        for part in self._root.walk():
            if part.children:
                continue
            name = part.filename()
            if name is not None:
                out.append(name)
        return out

    def has_attachment(self) -> bool:
        return any(part.is_attachment() for part in self._root.walk())
