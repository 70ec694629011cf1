"""MIME parsing for the emulator: IMAP ENVELOPE, BODYSTRUCTURE, BODY[section] and search helpers.

Everything here is pure (no I/O) and tolerant: a ``ParsedMessage`` can be built from any bytes and
none of its methods raise on malformed MIME.  The MIME tree is split by hand on the CRLF-normalised
raw bytes so that every part keeps its exact byte range (sizes and sections are byte-exact); the
stdlib ``email`` package (policy ``compat32``) is used only for parameter parsing and RFC 2231.

Wire values (``envelope()``, ``bodystructure()``) are ``bytes`` ready to be written into a FETCH
response; strings that cannot be quoted are sent as synchronising literals ``{n}\\r\\n<bytes>``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import quopri
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import Message
from email.policy import compat32
from email.utils import collapse_rfc2231_value, parsedate_to_datetime

__all__ = ["ParsedMessage", "decode_words", "imap_nstring", "normalize_crlf"]

_MAX_DEPTH = 32
_LITERAL_OVER = 1000
_NEEDS_LITERAL = re.compile(rb"[\x00\r\n\x80-\xff]")
_FOLD = re.compile(rb"\r\n(?=[ \t])")
_LONE_LF = re.compile(rb"(?<!\r)\n")
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=")
_MSGID = re.compile(r"<[^<>]*>")


# --------------------------------------------------------------------------- small helpers


def normalize_crlf(raw: bytes) -> bytes:
    """Turn every bare LF into CRLF (bare CRs are left alone)."""
    if b"\n" not in raw or raw.count(b"\n") == raw.count(b"\r\n"):
        return raw
    return _LONE_LF.sub(b"\r\n", raw)


def imap_nstring(value: bytes | None) -> bytes:
    """IMAP nstring: NIL, a quoted string, or a literal when quoting is impossible or unwise."""
    if value is None:
        return b"NIL"
    if len(value) > _LITERAL_OVER or _NEEDS_LITERAL.search(value):
        return b"{%d}\r\n" % len(value) + value
    return b'"' + value.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def _bytes_to_text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("cp1252", errors="replace")


def _decode_charset(data: bytes, charset: str | None) -> str:
    name = (charset or "").strip().strip('"').split("*", 1)[0].strip()
    if not name or name.lower() in ("us-ascii", "ascii", "unknown-8bit", "x-unknown"):
        name = "utf-8"
    try:
        codecs.lookup(name)
    except (LookupError, ValueError):
        name = "utf-8"
    try:
        return data.decode(name, errors="replace")
    except (LookupError, ValueError, TypeError):  # a non-text codec, or one that chokes on garbage
        return data.decode("utf-8", errors="replace")


def _decode_ew_payload(enc: str, payload: str) -> bytes | None:
    try:
        if enc in "bB":
            clean = re.sub(r"[^A-Za-z0-9+/]", "", payload)
            rem = len(clean) % 4
            if rem == 1:
                clean = clean[:-1]
            elif rem:
                clean += "=" * (4 - rem)
            return base64.b64decode(clean)
        data = payload.replace("_", " ").encode("latin-1", errors="replace")
        return binascii.a2b_qp(data)
    except (binascii.Error, ValueError):
        return None


def decode_words(text: str) -> str:
    """Decode RFC 2047 encoded-words anywhere in ``text`` (tolerantly; bad words stay as they are)."""
    if "=?" not in text:
        return text
    # segments: str for plain text, (charset, bytes) for decoded encoded-words
    segments: list[str | tuple[str, bytes]] = []
    pos = 0
    for m in _ENCODED_WORD.finditer(text):
        between = text[pos : m.start()]
        decoded = _decode_ew_payload(m.group(2), m.group(3))
        if decoded is None:
            segments.append(between + m.group(0))
            pos = m.end()
            continue
        prev_is_word = bool(segments) and isinstance(segments[-1], tuple)
        if between and not (prev_is_word and not between.strip()):
            segments.append(between)
        charset = m.group(1).split("*", 1)[0].lower()
        last = segments[-1] if segments else None
        if isinstance(last, tuple) and last[0] == charset:
            segments[-1] = (charset, last[1] + decoded)
        else:
            segments.append((charset, decoded))
        pos = m.end()
    segments.append(text[pos:])
    return "".join(s if isinstance(s, str) else _decode_charset(s[1], s[0]) for s in segments)


def _header_text(value: bytes) -> str:
    return decode_words(_bytes_to_text(value))


def _count_lines(body: bytes) -> int:
    # Gmail counts line ends: a last line without CRLF (the CRLF before a boundary belongs to the
    # boundary) is not counted (observed: BEHAVIOURS.md, "Real Gmail bytes").
    return body.count(b"\n")


def _parse_params(value: bytes) -> list[tuple[str, bytes]]:
    """Parameters of a Content-Type / Content-Disposition value; RFC 2231 values decoded to UTF-8."""
    if b";" not in value:
        return []
    try:
        msg = Message(policy=compat32)
        msg["X-P"] = value.decode("latin-1")
        raw_params = msg.get_params(header="x-p", unquote=True) or []
    except Exception:  # noqa: BLE001 - a stranger's header fed to the stdlib parser: garbage means no parameters
        return []
    out: list[tuple[str, bytes]] = []
    for name, val in raw_params[1:]:
        key = name.strip().lower()
        if not key:
            continue
        try:
            if isinstance(val, tuple):
                out.append((key, collapse_rfc2231_value(val).encode("utf-8", errors="replace")))
            else:
                out.append((key, val.encode("latin-1", errors="replace")))
        except (LookupError, ValueError, TypeError):  # an RFC 2231 value in an unknown or broken charset
            continue
    return out


def _transfer_decode(body: bytes, encoding: str) -> bytes:
    try:
        if encoding == "base64":
            clean = re.sub(rb"[^A-Za-z0-9+/]", b"", body)
            rem = len(clean) % 4
            if rem == 1:
                clean = clean[:-1]
            elif rem:
                clean += b"=" * (4 - rem)
            return base64.b64decode(clean)
        if encoding == "quoted-printable":
            return quopri.decodestring(body)
    except (binascii.Error, ValueError):
        return body
    return body


_SCRIPT_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


def _strip_html(text: str) -> str:
    text = _SCRIPT_STYLE.sub(" ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = _TAG.sub(" ", text)
    return html.unescape(text)


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


# --------------------------------------------------------------------------- addresses

_Addr = tuple[str | None, str | None, str | None, str | None]  # name, route, mailbox, host (latin-1 text)
_ADDR_SPECIALS = "<>,:;@."
_TOKEN_END = set(' \t\r\n()<>,:;@."[')


class _Tok:
    __slots__ = ("end", "kind", "raw", "start", "text")

    def __init__(self, kind: str, text: str, raw: str, start: int, end: int) -> None:
        self.kind = kind  # "atom" | "qs" | "lit" (domain literal) | "sp" (special)
        self.text = text  # quoted strings unquoted
        self.raw = raw
        self.start = start
        self.end = end


def _comment_end(s: str, i: int) -> int:
    """The index after the (possibly nested) comment starting at `s[i]` == "("."""
    depth, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        i += 1
        if depth == 0:
            break
    return i


def _quoted(s: str, start: int) -> _Tok:
    """The quoted string starting at `s[start]` == '"', unquoted (an unclosed one runs to the end)."""
    i, n = start + 1, len(s)
    buf: list[str] = []
    while i < n and s[i] != '"':
        if s[i] == "\\" and i + 1 < n:
            i += 1
        buf.append(s[i])
        i += 1
    i = min(i + 1, n)
    return _Tok("qs", "".join(buf), s[start:i], start, i)


def _addr_tokens(s: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in " \t\r\n":
            i += 1
        elif c == "(":
            i = _comment_end(s, i)
        elif c == '"':
            toks.append(_quoted(s, i))
            i = toks[-1].end
        elif c == "[":
            start = i
            j = s.find("]", i)
            i = n if j < 0 else j + 1
            toks.append(_Tok("lit", s[start:i], s[start:i], start, i))
        elif c in _ADDR_SPECIALS:
            toks.append(_Tok("sp", c, c, i, i + 1))
            i += 1
        elif c == ")":
            i += 1
        else:
            start = i
            while i < n and s[i] not in _TOKEN_END:
                i += 1
            toks.append(_Tok("atom", s[start:i], s[start:i], start, i))
    return toks


def _phrase(toks: list[_Tok]) -> str | None:
    parts: list[str] = []
    prev_end = -1
    for t in toks:
        if parts and t.start > prev_end:
            parts.append(" ")
        parts.append(t.text)
        prev_end = t.end
    text = "".join(parts).strip()
    return text or None


def _addr_spec(toks: list[_Tok]) -> tuple[str | None, str | None]:
    at = max((i for i, t in enumerate(toks) if t.kind == "sp" and t.text == "@"), default=-1)
    if at < 0:
        local = "".join(t.raw for t in toks)
        return (local or None, "")
    local = "".join(t.raw for t in toks[:at])
    host = "".join(t.raw for t in toks[at + 1 :])
    return (local, host)


def _flush_mailbox(chunk: list[_Tok]) -> _Addr | None:
    if not chunk:
        return None
    lt = next((i for i, t in enumerate(chunk) if t.kind == "sp" and t.text == "<"), -1)
    if lt < 0:
        local, host = _addr_spec(chunk)
        if local is None and not host:
            return None
        return (None, None, local or "", host)
    name = _phrase(chunk[:lt])
    inner: list[_Tok] = []
    for t in chunk[lt + 1 :]:
        if t.kind == "sp" and t.text == ">":
            break
        inner.append(t)
    route: str | None = None
    if inner and inner[0].kind == "sp" and inner[0].text == "@":
        colon = next((i for i, t in enumerate(inner) if t.kind == "sp" and t.text == ":"), -1)
        if colon >= 0:
            route = "".join(t.raw for t in inner[:colon]) or None
            inner = inner[colon + 1 :]
    local, host = _addr_spec(inner)
    return (name, route, local or "", host or "")


def _parse_address_list(s: str) -> list[_Addr]:
    """RFC 5322 address list -> IMAP address tuples, group start/end markers included."""
    out: list[_Addr] = []
    chunk: list[_Tok] = []
    in_angle = False
    in_group = False

    def flush() -> None:
        addr = _flush_mailbox(chunk)
        if addr is not None:
            out.append(addr)
        chunk.clear()

    for tok in _addr_tokens(s):
        is_sp = tok.kind == "sp"
        if in_angle:
            chunk.append(tok)
            if is_sp and tok.text == ">":
                in_angle = False
            continue
        if is_sp and tok.text == "<":
            in_angle = True
            chunk.append(tok)
        elif is_sp and tok.text == ":" and not in_group and not any(t.kind == "sp" and t.text != "." for t in chunk):
            out.append((None, None, _phrase(chunk) or "", None))
            chunk.clear()
            in_group = True
        elif is_sp and tok.text == ",":
            flush()
        elif is_sp and tok.text == ";":
            flush()
            if in_group:
                out.append((None, None, None, None))
                in_group = False
        else:
            chunk.append(tok)
    flush()
    if in_group:
        out.append((None, None, None, None))
    return out


def _latin(value: str | None) -> bytes | None:
    return None if value is None else value.encode("latin-1", errors="replace")


# --------------------------------------------------------------------------- MIME parts


class _Part:
    """One MIME entity: header at raw[start:body_start], body at raw[body_start:end]."""

    def __init__(self, raw: bytes, start: int, end: int, default_type: tuple[str, str], depth: int) -> None:
        self.raw = raw
        self.start = start
        self.end = end
        if start >= end:
            self.body_start = start
            header_end = start
        elif raw.startswith(b"\r\n", start):
            header_end = start
            self.body_start = start + 2
        else:
            idx = raw.find(b"\r\n\r\n", start, end)
            if idx < 0:
                header_end = self.body_start = end
            else:
                header_end = idx + 2
                self.body_start = idx + 4
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
            self.params = _parse_params(ct)
        cte = self.first("content-transfer-encoding")
        self.encoding = (cte.decode("latin-1").strip().lower() if cte else "") or "7bit"

        if self.maintype == "multipart":
            boundary = self.param("boundary")
            if boundary and depth < _MAX_DEPTH:
                child_type = ("message", "rfc822") if self.subtype == "digest" else ("text", "plain")
                for s, e in _split_multipart(raw, self.body_start, end, boundary):
                    self.children.append(_Part(raw, s, e, child_type, depth + 1))
            if not self.children:  # unusable multipart: treat the body as plain text
                self.maintype, self.subtype, self.params = "text", "plain", []
        elif self.maintype == "message" and self.subtype == "rfc822" and self.encoding in ("7bit", "8bit", "binary"):
            if depth < _MAX_DEPTH:
                self.message = _Part(raw, self.body_start, end, ("text", "plain"), depth + 1)
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
        return kind, _parse_params(value)

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
        return _header_text(value).strip() or None

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

    def address_list(self, name: str) -> list[_Addr]:
        out: list[_Addr] = []
        for value in self.all(name):
            out.extend(_parse_address_list(value.decode("latin-1")))
        return out

    def bodystructure(self, extended: bool) -> bytes:
        if self.children:
            inner = b"".join(c.bodystructure(extended) for c in self.children)
            # Gmail's form (observed): type words in upper case, extension data without a location.
            out = inner + b" " + imap_nstring(self.subtype.upper().encode())
            if extended:
                out += b" " + b" ".join([_params_wire(self.params), self._disposition_wire(), self._language_wire()])
            return b"(" + out + b")"
        body = self.body
        items = [
            imap_nstring(self.maintype.upper().encode("latin-1")),
            imap_nstring(self.subtype.upper().encode("latin-1")),
            _params_wire(self.params),
            imap_nstring(self.first("content-id")),
            imap_nstring(self.first("content-description")),
            imap_nstring(self.encoding.upper().encode("latin-1")),
            b"%d" % len(body),
        ]
        if self.message is not None:
            items += [
                self.message.envelope(),
                self.message.bodystructure(extended),
                b"%d" % _count_lines(body),
            ]
        elif self.maintype == "text":
            items.append(b"%d" % _count_lines(body))
        if extended:
            items += [imap_nstring(self.first("content-md5")), self._disposition_wire(), self._language_wire()]
        return b"(" + b" ".join(items) + b")"

    def _disposition_wire(self) -> bytes:
        disp = self.disposition()
        if disp is None:
            return b"NIL"
        return b"(" + imap_nstring(disp[0].upper().encode("latin-1")) + b" " + _params_wire(disp[1]) + b")"

    def _language_wire(self) -> bytes:
        value = self.first("content-language")
        if value is None:
            return b"NIL"
        langs = [x.strip() for x in re.split(rb"[,\s]+", value) if x.strip()]
        if not langs:
            return b"NIL"
        return b"(" + b" ".join(imap_nstring(x) for x in langs) + b")"


def _params_wire(params: list[tuple[str, bytes]]) -> bytes:
    """Parameters as Gmail lists them (observed): names in upper case, in alphabetical order,
    values as sent."""
    if not params:
        return b"NIL"
    ordered = sorted(params, key=lambda kv: kv[0].upper())
    return (
        b"(" + b" ".join(imap_nstring(k.upper().encode("latin-1")) + b" " + imap_nstring(v) for k, v in ordered) + b")"
    )


def _addr_wire(addrs: list[_Addr]) -> bytes:
    if not addrs:
        return b"NIL"
    return b"(" + b"".join(b"(" + b" ".join(imap_nstring(_latin(x)) for x in a) + b")" for a in addrs) + b")"


def _split_multipart(raw: bytes, start: int, end: int, boundary: bytes) -> list[tuple[int, int]]:
    pattern = re.compile(rb"^--" + re.escape(boundary) + rb"(--)?[ \t]*\r?$", re.M)
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

    def __init__(self, raw: bytes) -> None:
        self.raw: bytes = normalize_crlf(bytes(raw))
        self.size: int = len(self.raw)
        self._root = _Part(self.raw, 0, self.size, ("text", "plain"), 0)
        self._envelope: bytes | None = None
        self._bodystructure: dict[bool, bytes] = {}
        self._text: str | None = None

    # ------------------------------------------------------------------ IMAP wire forms
    def envelope(self) -> bytes:
        """The ENVELOPE value (a parenthesised list), raw header text, literals where needed."""
        if self._envelope is None:
            self._envelope = self._root.envelope()
        return self._envelope

    def bodystructure(self, extended: bool = True) -> bytes:
        """BODYSTRUCTURE (``extended=True``) or BODY (``extended=False``) value."""
        cached = self._bodystructure.get(extended)
        if cached is None:
            cached = self._bodystructure[extended] = self._root.bodystructure(extended)
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
        return [_header_text(v) for v in self._root.all(name.lower())]

    def raw_header(self, name: str) -> list[bytes]:
        """Raw unfolded values of every header field called ``name``."""
        return self._root.all(name.lower())

    @property
    def subject(self) -> str:
        value = self._root.first("subject")
        return "" if value is None else _header_text(value)

    @property
    def message_id(self) -> str | None:
        value = self._root.first("message-id")
        if value is None:
            return None
        text = re.sub(r"\s+", "", _bytes_to_text(value))
        return text or None

    @property
    def in_reply_to(self) -> str | None:
        value = self._root.first("in-reply-to")
        if value is None:
            return None
        text = _bytes_to_text(value)
        m = _MSGID.search(text)
        if m:
            return re.sub(r"\s+", "", m.group(0))
        text = re.sub(r"\s+", "", text)
        return text or None

    @property
    def references(self) -> list[str]:
        out: list[str] = []
        for value in self._root.all("references"):
            out.extend(re.sub(r"\s+", "", m) for m in _MSGID.findall(_bytes_to_text(value)))
        return out

    @property
    def date(self) -> datetime | None:
        value = self._root.first("date")
        if not value:
            return None
        try:
            dt = parsedate_to_datetime(_bytes_to_text(value))
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
            display = _header_text(name.encode("latin-1", errors="replace")) if name else ""
            addr = mailbox + ("@" + host if host else "")
            out.append((display, _bytes_to_text(addr.encode("latin-1", errors="replace"))))
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
            data = _transfer_decode(part.body, part.encoding)
            text = _decode_charset(data, charset.decode("latin-1") if charset else None)
            if part.subtype == "html":
                text = _strip_html(text)
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
