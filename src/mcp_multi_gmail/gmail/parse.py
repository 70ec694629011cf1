"""Pure parsing of what Gmail's IMAP hands back: headers, ENVELOPE, BODYSTRUCTURE, bodies.

No sockets here. Every function is tolerant: mail is written by strangers, so malformed input
degrades to None / empty / replacement characters instead of raising. Every string that comes
out of a mail passes `clean` (SPEC §4) so hidden or direction-reversing characters never reach
the assistant.
"""

from __future__ import annotations

import binascii
import codecs
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_to_bytes

from ..domain import Address, Authentication
from ..text import clean, html_to_text, is_hidden

__all__ = [
    "AUTH_RESULTS",
    "EnvelopeInfo",
    "Part",
    "addresses",
    "attachment_parts",
    "authentication",
    "bare_id",
    "body_part",
    "clean",
    "decode_body",
    "decode_bytes",
    "decode_words",
    "envelope_info",
    "html_to_text",
    "parts",
    "safe_filename",
]

# ---------------------------------------------------------------------------------------------
# Hidden characters (`clean` and `html_to_text` live in ..text and are re-exported here)


def _visible(text: str) -> str:
    """Like `clean`, but marks hidden characters with U+FFFD instead of deleting them.

    Used for addresses: deleting a zero-width space from "ceo\u200b@example.com" would make a
    look-alike indistinguishable from the real address, and it would then match allow-lists.
    """
    if text.isascii():
        return text
    return "".join("\ufffd" if is_hidden(ch) else ch for ch in text)


# ---------------------------------------------------------------------------------------------
# Charsets

# Names Python lacks, or declared charsets whose superset decodes real-world mail better.
_CHARSET_ALIASES = {
    "iso-8859-8-i": "iso-8859-8",
    "iso-8859-6-i": "iso-8859-6",
    "windows-874": "cp874",
    "x-sjis": "shift_jis",
    "unicode-1-1-utf-7": "utf-7",
}
_CODEC_SUPERSETS = {"ascii": "utf-8", "gb2312": "gb18030", "gbk": "gb18030"}
# Python text codecs that are not mail charsets and either always fail or interpret escapes.
_REFUSED_CODECS = frozenset({"undefined", "punycode", "idna", "unicode-escape", "raw-unicode-escape"})


@lru_cache(maxsize=128)
def _codec(charset: str | None) -> str:
    """The Python codec for a declared charset; anything unknown or unusable reads as UTF-8."""
    if not charset:
        return "utf-8"
    name = charset.strip().strip("\"'").split("*", 1)[0].lower()  # "utf-8*cs": RFC 2231 language
    name = _CHARSET_ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        return "utf-8"
    # bytes.decode refuses binary-to-binary codecs (base64, zlib…) only when it is already
    # decoding; ask first so "charset=base64" cannot reach them.
    if not getattr(info, "_is_text_encoding", True) or info.name in _REFUSED_CODECS:
        return "utf-8"
    return _CODEC_SUPERSETS.get(info.name, info.name)


def _decode_text(data: bytes, charset: str | None) -> str:
    try:
        return data.decode(_codec(charset), "replace")
    except (UnicodeError, LookupError):  # a codec that fails even with errors="replace"
        return data.decode("utf-8", "replace")


def _undeclared(raw: bytes) -> tuple[str, str]:
    """Header bytes with no declared charset: UTF-8 if valid, else Latin-1 (keeps every byte).

    Returns the text and the codec used, so encoded-word payloads can be turned back into the
    exact bytes they were.
    """
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def _text(value: object) -> str | None:
    """An IMAP atom (bytes, int from the lexer, str) as text; anything else is None."""
    if isinstance(value, bytes):
        return _undeclared(value)[0]
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # imapclient turns all-digit atoms into ints
    return None


# ---------------------------------------------------------------------------------------------
# Header words (RFC 2047)

_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=")
_FOLD = re.compile(r"\r?\n[ \t]")
_NEWLINES = re.compile(r"[\r\n]")


@dataclass
class _Encoded:
    charset: str
    data: bytearray  # grows in place while adjacent words share the charset


def _word_bytes(kind: str, payload: str, source_codec: str) -> bytes:
    if kind in "bB":
        return _b64(payload.encode("ascii", "ignore"))
    # Q: "_" is a space; =XX an octet. Stray 8-bit characters go back to their original bytes.
    return binascii.a2b_qp(payload.encode(source_codec, "replace"), header=True)


def decode_words(raw: bytes | str | None) -> str | None:
    """Decode RFC 2047 encoded words of a header value; unfolded, trimmed and cleaned.

    Adjacent encoded words in one charset are joined as bytes before decoding (senders split
    multi-byte characters across words); whitespace between encoded words is dropped.
    """
    if raw is None:
        return None
    if isinstance(raw, bytes):
        text, source_codec = _undeclared(raw)
    else:
        text, source_codec = str(raw), "utf-8"
    text = _NEWLINES.sub("", _FOLD.sub(" ", text))
    pieces: list[str | _Encoded] = []
    pos = 0
    for match in _ENCODED_WORD.finditer(text):
        gap = text[pos : match.start()]
        after_word = bool(pieces) and isinstance(pieces[-1], _Encoded)
        if gap and not (after_word and gap.isspace()):
            pieces.append(gap)
        charset = match.group(1).split("*", 1)[0].lower()
        data = _word_bytes(match.group(2), match.group(3), source_codec)
        last = pieces[-1] if pieces else None
        if isinstance(last, _Encoded) and last.charset == charset:
            last.data += data
        else:
            pieces.append(_Encoded(charset, bytearray(data)))
        pos = match.end()
    pieces.append(text[pos:])
    decoded = "".join(p if isinstance(p, str) else _decode_text(bytes(p.data), p.charset) for p in pieces)
    return clean(decoded.strip())


# ---------------------------------------------------------------------------------------------
# Message-IDs, addresses, ENVELOPE

_ANGLE_ID = re.compile(r"<[^<>]*>")


def bare_id(value: str | bytes | None) -> str | None:
    """A Message-ID without surrounding whitespace and one pair of angle brackets; "" → None.

    Not cleaned: the id is a lookup key and must stay byte-for-byte what the header says.
    """
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    text = text.strip()
    if text.startswith("<"):
        text = text[1:]
    if text.endswith(">"):
        text = text[:-1]
    return text.strip() or None


def _first_id(value: object) -> str | None:
    """The first id of an In-Reply-To / References value (which may list several)."""
    text = _text(value)
    if text is None:
        return None
    match = _ANGLE_ID.search(text)
    if match:
        return bare_id(match.group(0))
    words = text.split()
    return bare_id(words[0]) if words else None


def _member(item: object, name: str, index: int) -> object:
    if hasattr(item, name):
        return getattr(item, name)
    if isinstance(item, (tuple, list)) and len(item) > index:
        return item[index]
    return None


def addresses(items: Iterable[Any] | None) -> list[Address]:
    """Addresses of one ENVELOPE address list; group start/end markers (no host) are skipped."""
    if items is None or isinstance(items, (bytes, str)):
        return []
    try:
        entries = list(items)
    except TypeError:
        return []
    found: list[Address] = []
    for item in entries:
        host = _text(_member(item, "host", 3))
        if host is None:
            continue  # RFC 3501 group syntax: "undisclosed-recipients:;" etc.
        mailbox = _text(_member(item, "mailbox", 2))
        name = decode_words(_member_bytes(_member(item, "name", 0)))
        domain = host.strip().lower()
        address = _visible(f"{mailbox.strip()}@{domain}") if mailbox and domain else None
        found.append(Address(name=name or None, address=address))
    return found


def _member_bytes(value: object) -> bytes | str | None:
    if isinstance(value, (bytes, str)):
        return value
    return _text(value)


@dataclass(frozen=True)
class EnvelopeInfo:
    """The parts of ENVELOPE the service layer uses, decoded and cleaned."""

    date: datetime | None = None  # Date header, aware UTC
    subject: str | None = None
    from_: Address | None = None  # first From address
    to: list[Address] = field(default_factory=list)
    cc: list[Address] = field(default_factory=list)
    bcc: list[Address] = field(default_factory=list)
    message_id: str | None = None  # bare (no angle brackets)
    in_reply_to: str | None = None  # bare, first id only


def _utc(value: object) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    # The session sets normalise_times=False, so a naive value is a Date header without a zone:
    # read it as UTC, like INTERNALDATE.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def envelope_info(env: Any | None) -> EnvelopeInfo:
    """Decode imapclient's `Envelope` (or None) into an `EnvelopeInfo`."""
    if env is None:
        return EnvelopeInfo()
    senders = addresses(getattr(env, "from_", None))
    subject = getattr(env, "subject", None)
    return EnvelopeInfo(
        date=_utc(getattr(env, "date", None)),
        subject=decode_words(_member_bytes(subject)),
        from_=senders[0] if senders else None,
        to=addresses(getattr(env, "to", None)),
        cc=addresses(getattr(env, "cc", None)),
        bcc=addresses(getattr(env, "bcc", None)),
        message_id=bare_id(_text(getattr(env, "message_id", None))),
        in_reply_to=_first_id(getattr(env, "in_reply_to", None)),
    )


# ---------------------------------------------------------------------------------------------
# BODYSTRUCTURE


@dataclass(frozen=True)
class Part:
    """One leaf of BODYSTRUCTURE. `part_id` is the RFC 3501 section number for BODY.PEEK[...]."""

    part_id: str
    mime_type: str  # lower case, "text/plain"
    charset: str | None = None  # lower case, as declared
    encoding: str = "7bit"  # Content-Transfer-Encoding, lower case
    size: int | None = None  # encoded size in octets
    disposition: str | None = None  # "attachment", "inline", … lower case
    filename: str | None = None  # disposition filename, else Content-Type name; decoded, cleaned
    content_id: str | None = None  # Content-ID without angle brackets (what "cid:" URLs use)


_MAX_DEPTH = 64  # deeper nesting is junk (and would exhaust the recursion limit)
_EXTENDED_PARAM = re.compile(r"^(?P<name>[^*]+)\*(?:(?P<section>[0-9]{1,3})(?P<encoded>\*)?)?$")
# Up to 20 digits: every size or count IMAP sends fits, and int() never meets a huge string.
_ASCII_NUMBER = re.compile(r"[0-9]{1,20}")


def _token(value: object) -> str | None:
    text = _text(value)
    if text is None:
        return None
    return text.strip().lower() or None


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    text = _text(value)
    # ASCII digits only: str.isdigit() is also true for "²", which int() refuses.
    if text is not None and _ASCII_NUMBER.fullmatch(text.strip()):
        return int(text.strip())
    return None


def _at(node: Sequence[object], index: int) -> object:
    return node[index] if len(node) > index else None


def _pairs(raw: object) -> list[tuple[str, object]]:
    """Parameter list as (lower-case key, raw value) pairs from a flat tuple (or pairs, or NIL)."""
    if not isinstance(raw, (tuple, list)):
        return []
    items: list[object] = []
    for item in raw:
        if isinstance(item, (tuple, list)):  # non-standard: ((k, v), (k, v))
            items.extend(item[:2])
        else:
            items.append(item)
    pairs: list[tuple[str, object]] = []
    for i in range(0, len(items) - 1, 2):
        key = _token(items[i])
        if key:
            pairs.append((key, items[i + 1]))
    return pairs


def _params(raw: object) -> dict[str, str]:
    """Content-Type / Content-Disposition parameters, RFC 2231 and RFC 2047 decoded, cleaned."""
    plain: dict[str, str] = {}
    extended: dict[str, dict[int, tuple[bool, str]]] = {}
    for key, value in _pairs(raw):
        text = _text(value)
        if text is None:
            continue
        match = _EXTENDED_PARAM.match(key)
        if match is None:
            decoded = decode_words(_member_bytes(value))
            if decoded is not None:
                plain.setdefault(key, decoded)
            continue
        section = int(match.group("section") or 0)
        encoded = match.group("section") is None or match.group("encoded") is not None
        extended.setdefault(match.group("name"), {})[section] = (encoded, text)
    for name, sections in extended.items():
        plain[name] = _rfc2231(sections)
    return plain


def _rfc2231(sections: dict[int, tuple[bool, str]]) -> str:
    charset: str | None = None
    data = bytearray()
    for index in sorted(sections):
        encoded, text = sections[index]
        if encoded:
            if index == 0 and text.count("'") >= 2:  # charset'language'value
                charset, _language, text = text.split("'", 2)
            data += unquote_to_bytes(text)
        else:
            data += text.encode("utf-8")
    value = _decode_text(bytes(data), charset) if charset else _undeclared(bytes(data))[0]
    return clean(value.strip())


def _disposition(node: Sequence[object], index: int) -> tuple[str | None, dict[str, str]]:
    """(disposition, params) from the expected extension slot, else from wherever a shifted
    field left it (servers that omit `lines` or send NIL for it). Nothing else in a leaf has the
    shape (string, list-or-NIL); a bare atom counts only in the expected slot."""
    for i in [index, *(i for i in range(7, len(node)) if i != index)]:
        value = _at(node, i)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            kind, params = value
            if isinstance(kind, (bytes, str)) and (params is None or isinstance(params, (tuple, list))):
                return _token(kind), _params(params)
        if i == index and isinstance(value, (bytes, str)):
            return _token(value), {}
    return None, {}


def _leaf(node: object, part_id: str) -> Part | None:
    if not isinstance(node, (tuple, list)) or not node:
        return None
    main = _token(_at(node, 0))
    sub = _token(_at(node, 1))
    if main is None or "/" in main:
        main, sub = "application", "octet-stream"
    elif sub is None or "/" in sub:
        sub = "plain" if main == "text" else "octet-stream"
    params = _params(_at(node, 2))
    # Extension data starts after the type-specific fields: text/* has `lines`; message/rfc822
    # has envelope, body and lines.
    if main == "text":
        extension = 8 if isinstance(_at(node, 7), int) else 7
    elif main == "message" and isinstance(_at(node, 7), (tuple, list)):
        extension = 10
    else:
        extension = 7
    disposition, disposition_params = _disposition(node, extension + 1)
    filename = disposition_params.get("filename") or params.get("name") or None
    return Part(
        part_id=part_id,
        mime_type=f"{main}/{sub}",
        charset=(params.get("charset") or "").strip().lower() or None,
        encoding=_token(_at(node, 5)) or "7bit",
        size=_int(_at(node, 6)),
        disposition=disposition,
        filename=filename,
        content_id=bare_id(_text(_at(node, 3))),
    )


def _children(node: object) -> list[object] | None:
    """Child structures of a multipart node, or None for a leaf."""
    if not isinstance(node, (tuple, list)) or not node:
        return None
    first = node[0]
    if isinstance(first, list):  # imapclient's BodyData gathers the children into a list
        return list(first)
    if isinstance(first, tuple):  # raw parser shape: child tuples up to the subtype
        kids: list[object] = []
        for item in node:
            if not isinstance(item, (tuple, list)):
                break
            kids.append(item)
        return kids
    return None


def _walk(node: object, part_id: str, found: list[Part], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    children = _children(node)
    if children is None:
        leaf = _leaf(node, part_id or "1")  # a non-multipart message's only part is "1"
        if leaf is not None:
            found.append(leaf)
        return
    for number, child in enumerate(children, 1):
        _walk(child, f"{part_id}.{number}" if part_id else str(number), found, depth + 1)


def parts(bodystructure: Any) -> list[Part]:
    """Leaf parts of a BODYSTRUCTURE in depth-first order, numbered as RFC 3501 sections.

    A message/rfc822 part is a leaf: what it contains belongs to the inner message.
    """
    found: list[Part] = []
    _walk(bodystructure, "", found, 0)
    return found


_BODY_TYPES = ("text/plain", "text/html")


def body_part(parts: Sequence[Part] | None) -> Part | None:
    """The first text/plain part that is not an attachment; failing that the first such text/html."""
    for mime_type in _BODY_TYPES:
        for part in parts or ():
            if part.mime_type == mime_type and part.disposition != "attachment":
                return part
    return None


def attachment_parts(parts: Sequence[Part] | None) -> list[Part]:
    """Leaves listed as attachments: disposition attachment/inline or a filename, except bodies
    (text/plain, text/html without a filename). An attached message/rfc822 is listed even
    without a disposition, because its content is reachable no other way."""
    listed: list[Part] = []
    for part in parts or ():
        if part.mime_type in _BODY_TYPES and not part.filename:
            continue
        attached = part.disposition in ("attachment", "inline") or part.filename is not None
        if attached or part.mime_type in ("message/rfc822", "message/global"):
            listed.append(part)
    return listed


# ---------------------------------------------------------------------------------------------
# Transfer encodings and bodies

_B64_JUNK = re.compile(rb"[^A-Za-z0-9+/=\-_]")
_B64_RUN = re.compile(rb"[A-Za-z0-9+/]+")
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def _b64(data: bytes) -> bytes:
    """Base64 that never raises: junk skipped, padding repaired, and a run restarted after
    internal padding (binascii would silently stop there)."""
    out = bytearray()
    for run in _B64_RUN.findall(_B64_JUNK.sub(b"", data).translate(_URLSAFE)):
        if len(run) % 4 == 1:  # one stray sextet carries no whole byte
            run = run[:-1]
        if not run:
            continue
        try:
            out += binascii.a2b_base64(run + b"=" * (-len(run) % 4))
        except binascii.Error:
            continue
    return bytes(out)


# The same rules, for the slice-by-slice body reader (bodystream.py).
b64_lenient = _b64
codec_for = _codec


def b64_noise(data: bytes) -> bytes:
    """Base64 text without line breaks and other characters no alphabet uses."""
    return _B64_JUNK.sub(b"", data)


def decode_bytes(data: bytes, encoding: str | None) -> bytes:
    """Undo the Content-Transfer-Encoding (base64, quoted-printable); others pass unchanged."""
    raw = bytes(data or b"")
    kind = (encoding or "").strip().lower()
    if kind == "base64":
        return _b64(raw)
    if kind == "quoted-printable":
        return binascii.a2b_qp(raw)
    return raw


def decode_body(data: bytes, encoding: str | None, charset: str | None) -> str:
    """A text part as text: transfer-decoded, charset-decoded (unknown → UTF-8), LF newlines, cleaned."""
    text = _decode_text(decode_bytes(data, encoding), charset)
    return clean(text.replace("\r\n", "\n").replace("\r", "\n"))


# ---------------------------------------------------------------------------------------------
# Authentication-Results (RFC 8601)

GMAIL_AUTHSERV_ID = "mx.google.com"
AUTH_RESULTS = frozenset(
    {"pass", "fail", "softfail", "none", "neutral", "temperror", "permerror", "policy", "bestguesspass"}
)
# key=value pairs. The lookbehind and possessive quantifiers keep this linear: without them a
# long run of token characters with no "=" is rescanned from every position (quadratic).
_RESULT_PAIR = re.compile(
    r'(?<![A-Za-z0-9_.\-/])([A-Za-z0-9][A-Za-z0-9_.\-/]*+)\s*+=\s*+("(?:[^"\\]|\\.)*+"|[^\s";]++)'
)
_DOMAIN = re.compile(r"^[a-z0-9](?:[a-z0-9.\-]*[a-z0-9])?$")


def _ordered_headers(block: bytes | str) -> list[tuple[str, str]]:
    """(lower-case name, unfolded value) of every header in a raw header block, topmost first."""
    text = block.decode("utf-8", "replace") if isinstance(block, bytes) else str(block)
    found: list[tuple[str, str]] = []
    current: tuple[str, list[str]] | None = None
    for line in re.split(r"\r\n|\n|\r", text):
        if not line.strip():
            if found or current is not None:
                break  # the blank line that ends the header block
            continue
        if line[0] in " \t":
            if current is not None:
                current[1].append(line)
            continue
        if current is not None:
            found.append((current[0], "".join(current[1])))
        header, colon, value = line.partition(":")
        current = (header.strip().lower(), [value]) if colon else None
    if current is not None:
        found.append((current[0], "".join(current[1])))
    return found


def _header_values(block: bytes | str, name: str) -> list[str]:
    """Unfolded values of every `name:` header in a raw header block, in order (topmost first)."""
    return [value for key, value in _ordered_headers(block) if key == name]


def _strip_comments(text: str) -> str:
    """Remove (nested) RFC 5322 comments, which may contain ";" and "=", keeping quoted strings."""
    out: list[str] = []
    depth = 0
    quoted = False
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
            if depth == 0:
                out.append(ch)
        elif ch == "\\":
            escaped = True
            if depth == 0:
                out.append(ch)
        elif quoted:
            out.append(ch)
            quoted = ch != '"'
        elif depth == 0 and ch == '"':
            quoted = True
            out.append(ch)
        elif ch == "(":
            depth += 1
        elif ch == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(" ")  # a comment separates tokens
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _authserv_id(value: str) -> str | None:
    words = value.split(";", 1)[0].split()
    if len(words) == 1 or (len(words) == 2 and words[1].isascii() and words[1].isdigit()):  # optional version number
        return words[0].strip('"').lower()
    return None


@dataclass(frozen=True)
class _Result:
    method: str
    result: str | None
    props: dict[str, str]


def _results(value: str) -> list[_Result]:
    found: list[_Result] = []
    for segment in value.split(";")[1:]:
        pairs = _RESULT_PAIR.findall(segment)
        if not pairs:
            continue  # "none" (no results) or junk
        method, result = pairs[0]
        token = result.strip('"').lower()
        props = {key.lower(): val.strip('"') for key, val in pairs[1:]}
        found.append(_Result(method.split("/", 1)[0].lower(), token if token in AUTH_RESULTS else None, props))
    return found


def _dkim_domain(result: _Result) -> str | None:
    raw = result.props.get("header.d") or result.props.get("header.i") or ""
    domain = raw.rpartition("@")[2].strip().strip(".").lower()
    return domain if _DOMAIN.match(domain) else None


def _aligned(dkim_domain: str, from_address: str | None) -> bool:
    """Relaxed alignment approximated without a public-suffix list: same domain, or one is a
    parent of the other (a single-label signer such as "com" never counts)."""
    if not from_address or "." not in dkim_domain:
        return False
    from_domain = from_address.rpartition("@")[2].strip().strip(".").lower()
    if not from_domain:
        return False
    return (
        dkim_domain == from_domain or from_domain.endswith("." + dkim_domain) or dkim_domain.endswith("." + from_domain)
    )


_GMAIL_HOP = re.compile(r"\bby\s+mx\.google\.com\b", re.IGNORECASE)
_GMAIL_ARC = re.compile(r"^\s*i\s*=\s*\d+\s*;\s*mx\.google\.com\s*;", re.IGNORECASE)


def _gmail_verdict(block: bytes) -> tuple[str | None, int]:
    """Gmail's own Authentication-Results (comments stripped) and how many others there are.

    On delivery Gmail writes, from the top down: its internal Received lines, ARC headers with
    its ARC-Authentication-Results, Return-Path, the Received line of the final hop ("by
    mx.google.com"), Received-SPF, and then its Authentication-Results; the sender's headers
    follow below. A header that claims to be mx.google.com's verdict counts only with that trace
    above it: without it (mail imported over IMAP, or written by the sender) it is a claim like
    any other. The topmost mx.google.com header is the one Gmail added last.
    """
    final_hop = False
    spf_or_arc = False
    reports = 0
    chosen: str | None = None
    for name, value in _ordered_headers(block or b""):
        if name == "received" and _GMAIL_HOP.search(value):
            final_hop = True
        elif name == "received-spf" or (name == "arc-authentication-results" and _GMAIL_ARC.match(value)):
            spf_or_arc = True
        elif name == "authentication-results":
            reports += 1
            plain = _strip_comments(value)
            if chosen is None and final_hop and spf_or_arc and _authserv_id(plain) == GMAIL_AUTHSERV_ID:
                chosen = plain
    return chosen, reports - (1 if chosen is not None else 0)


def authentication(header_block: bytes, from_address: str | None) -> Authentication:
    """Gmail's verdict from the Authentication-Results and trace headers of a message.

    Only an mx.google.com verdict below Gmail's own delivery trace counts (`_gmail_verdict`);
    every other Authentication-Results header is counted in `other_reports` and never read.
    """
    chosen, others = _gmail_verdict(header_block)
    if chosen is None:
        return Authentication(unchecked=True, other_reports=others)
    results = _results(chosen)

    def first(method: str) -> str | None:
        return next((r.result for r in results if r.method == method and r.result), None)

    dkim = [r for r in results if r.method == "dkim"]
    passes = [(r, _dkim_domain(r)) for r in dkim if r.result == "pass"]
    dkim_domain: str | None = None
    dkim_aligned: bool | None = None
    if passes:
        # Several signatures: report the one that speaks for the From domain, if any does.
        aligned = [(r, d) for r, d in passes if d and _aligned(d, from_address)]
        _chosen, dkim_domain = (aligned or passes)[0]
        dkim_aligned = bool(aligned)
    return Authentication(
        spf=first("spf"),
        dkim="pass" if passes else first("dkim"),
        dmarc=first("dmarc"),
        dkim_domain=dkim_domain,
        dkim_aligned=dkim_aligned,
        other_reports=others,
        unchecked=False,
    )


# ---------------------------------------------------------------------------------------------
# Filenames

MAX_FILENAME_CHARS = 200
# ext4, APFS and NTFS allow 255 bytes/units per name; Czech names take two bytes a letter.
MAX_FILENAME_BYTES = 240
_UNSAFE_FILENAME_CHARS = re.compile(r'[\x00-\x1f\x7f-\x9f\\/:*?"<>|\ud800-\udfff]')
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{prefix}{n}" for prefix in ("COM", "LPT") for n in [*"123456789", "¹", "²", "³"]}
)
_MAX_EXTENSION = 16
MAX_NAME_SHOWN = 100  # longer attachment names are saved under a neutral one
_PLAIN_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")


def _strip_end(name: str) -> str:
    # A loop, not a regex: "[\s.]+$" is quadratic on a long run of dots that does not end the name.
    end = len(name)
    while end and (name[end - 1] == "." or name[end - 1].isspace()):
        end -= 1
    return name[:end]


def _fits(name: str) -> bool:
    return len(name) <= MAX_FILENAME_CHARS and len(name.encode("utf-8")) <= MAX_FILENAME_BYTES


def _cap(name: str) -> str:
    if _fits(name):
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or not extension or len(extension) > _MAX_EXTENSION:
        stem, extension = name, ""
    else:
        extension = "." + extension
    stem = stem[: MAX_FILENAME_CHARS - len(extension)]
    while stem and not _fits(stem + extension):
        stem = stem[:-1]
    return _strip_end(stem) if not extension else stem + extension


def safe_filename(name: str | None, attachment_id: str) -> str:
    """A name that is safe to create inside the download directory on any OS (digest §2.6)."""
    digits = re.sub(r"[^0-9.]", "", attachment_id or "")
    fallback = f"part-{digits}.bin" if digits else "part.bin"
    if name is None:
        return fallback
    text = re.split(r"[/\\]", clean(name))[-1]  # both separators on every OS: last segment only
    text = _UNSAFE_FILENAME_CHARS.sub("_", text)
    text = _strip_end(text.strip())  # Windows drops trailing dots and spaces itself
    if text in ("", ".", ".."):
        return fallback
    if text.split(".", 1)[0].rstrip(" ").upper() in _WINDOWS_DEVICES:  # CON, con.txt, LPT1.tar.gz
        text = "_" + text
    if len(text) > MAX_NAME_SHOWN:
        # A name this long is a sentence, and a sentence in a file name can be written to steer
        # whoever reads it: keep only a plain extension.
        extension = _PLAIN_EXTENSION.search(text)
        return f"attachment-{digits or '0'}{extension.group(0).lower() if extension else ''}"
    return _cap(text) or fallback
