"""Content-Transfer-Encoding undone (base64, quoted-printable, x-uuencode), and text parts decoded.

A part labelled base64 or quoted-printable whose content cannot have that encoding (ordinary words
under a base64 label, raw HTML under a quoted-printable one) is read as it came, and the reader is
told which label was ignored (`judge`); decoding it would only make junk of the text.

Uuencoded files also hide inside plain text with no transfer encoding at all: a `begin 644 name`
line, encoded lines, `end` (the form mail used before MIME). `uu_blocks` finds them so they can
be listed and saved as the files they are.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ...text import clean
from .charsets import decode_checked, undeclared
from .richtext import is_rich, rich_to_text

_B64_JUNK = re.compile(rb"[^A-Za-z0-9+/=\-_]")
_B64_RUN = re.compile(rb"[A-Za-z0-9+/]+")
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def b64_lenient(data: bytes) -> bytes:
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


def b64_noise(data: bytes) -> bytes:
    """Base64 text without line breaks and other characters no alphabet uses."""
    return _B64_JUNK.sub(b"", data)


# No transformation (RFC 2045 section 6.2); "" is a part without the header.
_IDENTITY = frozenset({"", "7bit", "8bit", "binary"})
# Not in RFC 2045, but what real mail carries (Netscape, Eudora, Pine and others wrote all three).
UU_ENCODINGS = frozenset({"x-uuencode", "uuencode", "x-uue", "uue"})
_UU_BEGIN = re.compile(rb"^begin(?:-base64)? +([0-7]{3,4}) *(.*?)[ \t]*\r?$", re.M)
_UU_END = re.compile(rb"^end[ \t]*\r?$", re.M)


def decodable(encoding: str | None) -> bool:
    """Whether `decode_bytes` knows this Content-Transfer-Encoding; an unknown one passes unchanged."""
    kind = (encoding or "").strip().lower()
    return kind in _IDENTITY or kind in UU_ENCODINGS or kind in ("base64", "quoted-printable")


def _uu_line(line: bytes) -> bytes:
    """One uuencoded line; a line some encoder padded or cut is read for the bytes it announces."""
    try:
        return binascii.a2b_uu(line)
    except binascii.Error:
        count = (line[0] - 32) & 63 if line else 0
        try:
            # The length character announces `count` bytes: 4 characters per 3 bytes after it.
            return binascii.a2b_uu(line[: 1 + (count * 4 + 2) // 3].ljust(1 + (count * 4 + 2) // 3, b" "))
        except binascii.Error:
            return b""


def uu_lenient(data: bytes) -> bytes:
    """Uudecoding that never raises: the lines between `begin` and `end` (all lines when there is
    no `begin`), each read for the bytes its length character announces."""
    begin = _UU_BEGIN.search(data)
    body = data[begin.end() :] if begin else data
    end = _UU_END.search(body)
    body = body[: end.start()] if end else body
    out = bytearray()
    for line in body.splitlines():
        line = line.rstrip(b"\r")
        if line and line[0] not in (0x60, 0x20) and len(line) > 1:  # "`" and " " are empty lines
            out += _uu_line(line)
    return bytes(out)


@dataclass(frozen=True)
class UuBlock:
    """A uuencoded file inside a text part: its name (from the `begin` line) and where it lies."""

    name: str | None
    start: int  # offset of the `begin` line
    end: int  # offset after the `end` line (or the end of the text)

    def data(self, text: bytes) -> bytes:
        return uu_lenient(text[self.start : self.end])


def uu_blocks(text: bytes) -> list[UuBlock]:
    """The uuencoded files inside a text part's bytes, in order. A block needs its `begin` line and
    at least one encoded line after it ("M" starts a full line), so prose that happens to begin
    with "begin 644" is left alone."""
    found: list[UuBlock] = []
    position = 0
    while (begin := _UU_BEGIN.search(text, position)) is not None:
        rest = begin.end() + 1
        end = _UU_END.search(text, rest)
        stop = end.end() if end else len(text)
        lines = text[rest : end.start() if end else stop].split(b"\n", 1)
        if not lines[0].strip() or lines[0][:1] not in b"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLM`":
            position = begin.end()
            continue
        name = undeclared(begin.group(2), cut_short=True)[0].strip() or None  # as a header's name
        found.append(UuBlock(clean(name) if name else None, begin.start(), stop))
        position = stop
    return found


# A header field line (obsolete spaces allowed before the colon) or a folded continuation.
_FIELD_LINE = re.compile(rb"[\x21-\x39\x3b-\x7e]+[ \t]*:|[ \t]")


def text_in_header(block: bytes) -> bytes:
    """What a header block holds after its fields: from the first line that is neither a field
    nor a continuation to the block's end, without the empty line that ends it.

    A server that lets a header run to the first empty line ("Content-Transfer-Encoding: base64"
    followed at once by the data, or a separator line holding a space) serves a part of 0 octets
    whose content sits in its header; this is that content (the emulator's BEHAVIOURS.md,
    "Broken MIME", knob `header_end`)."""
    position = 0
    while position < len(block):
        end = block.find(b"\n", position)
        end = len(block) if end < 0 else end + 1
        line = block[position:end]
        if line.strip(b"\r\n") and not _FIELD_LINE.match(line):
            rest = block[position:]
            return rest[:-2] if rest.endswith(b"\r\n\r\n") else rest
        position = end
    return b""


_B64_LINE = 76 + 2  # RFC 2045 section 6.8: at most 76 characters a line, and its CRLF
_UU_LINE = 61 + 2  # a full uuencoded line: its length character, 60 characters for 45 bytes, CRLF
_UU_FRAME = len(b"begin 644 \r\n`\r\nend\r\n")


def decoded_size(size: int | None, encoding: str | None, name: str | None = None) -> int | None:
    """The decoded size of a part not read, from its encoded size: base64 and uuencode as the file
    that many octets carry in full lines of the usual length (RFC 2045's 76 characters; 45 bytes a
    uuencoded line), a few bytes off for padding and framing, more for shorter lines; quoted-printable
    (an upper bound), an identity or an unknown encoding as the encoded size."""
    if size is None:
        return None
    kind = (encoding or "").strip().lower()
    if kind == "base64":
        lines = -(-(size + 2) // _B64_LINE)  # the last line needs no CRLF before the boundary
        return max(0, size - 2 * (lines - 1)) * 3 // 4
    if kind in UU_ENCODINGS:
        body = max(0, size - _UU_FRAME - len((name or "").encode()))
        last = body % _UU_LINE - 3  # its length character and CRLF
        return body // _UU_LINE * 45 + max(0, last) // 4 * 3
    return size


# ------------------------------------------------------------------ a label the content cannot have

_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"
# A part labelled base64 is not base64 when this share of its characters lies outside the alphabet.
NOT_BASE64_SHARE = 0.1
_WHITESPACE = b" \t\r\n\f\v"
_ENCODER_WIDTH = 76  # RFC 2045 section 6.8: the longest base64 line
# Control characters no text holds (tab, line feed, form feed and carriage return aside): decoding
# something that was not encoded makes them, about one byte in nine.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")
# Base64 decoding a text part "far less valid" than its raw bytes: at least this many more control
# characters per 1,000 characters. Random bytes hold about 110 per 1,000, any text 0.
FAR_LESS_VALID_PER_1000 = 20
_QP_STRAY = re.compile(rb"=(?![0-9A-Fa-f]{2}|[ \t]*(?:\r?\n|\Z))")  # an "=" that is no escape
_BAD_TEXT = re.compile("[\ufffd\x00-\x08\x0b\x0e-\x1f\x7f]")


# The transfer encodings a part can be judged not to have (`judge`).
Ignorable = Literal["base64", "quoted-printable"]


@dataclass(frozen=True)
class Judged:
    """How a part's bytes are read: the transfer encoding to undo, and the declared one when the
    content cannot have it (then the part is read as it came)."""

    encoding: str
    ignored: Ignorable | None = None


def _kind(encoding: str | None) -> str:
    return (encoding or "").strip().lower()


def _not_base64_chars(data: bytes) -> bool:
    """At least NOT_BASE64_SHARE of the characters, whitespace at line ends aside, lie outside
    base64's alphabet (with `=` and the URL-safe `-` `_`): punctuation, 8-bit bytes, and spaces
    between words (an encoder never writes a space inside a line). A base64 file with a stray
    character or a short epilogue after it (a broken boundary) is still base64."""
    total = len(data.translate(None, _WHITESPACE))
    if not total:
        return False
    outside = len(data.translate(None, _B64_ALPHABET + _WHITESPACE))
    at_ends = 0  # spaces and tabs that begin or end a line
    for line in data.split(b"\n"):
        line = line.rstrip(b"\r")
        at_ends += len(line) - len(line.strip(b" \t"))
    inner = data.count(b" ") + data.count(b"\t") - at_ends
    return outside + inner >= NOT_BASE64_SHARE * total


def _encoder_shaped(data: bytes) -> bool:
    """Lines as a base64 encoder writes them: every line but the last of one length, a multiple of
    4, and the last no longer; or one line longer than any word."""
    lines = [line for line in (raw.strip(_WHITESPACE) for raw in data.split(b"\n")) if line]
    if len(lines) == 1:
        return len(lines[0]) > _ENCODER_WIDTH
    width = len(lines[0]) if lines else 0
    return bool(lines) and width % 4 == 0 and all(len(line) == width for line in lines[:-1]) and len(lines[-1]) <= width


def _controls_per_1000(text: str) -> float:
    return 1000 * len(_CONTROLS.findall(text)) / max(1, len(text))


def _not_base64_text(data: bytes, charset: str | None) -> bool:
    """A text part that base64 decoding makes far less valid than its raw bytes (see
    FAR_LESS_VALID_PER_1000), unless its lines are an encoder's (a file inside a text part decodes
    to bytes that are not text, and is still base64)."""
    if _encoder_shaped(data):
        return False
    as_came = _controls_per_1000(decode_checked(data, charset)[0])
    undone = decode_checked(b64_lenient(data), charset)[0]
    return _controls_per_1000(undone) >= as_came + FAR_LESS_VALID_PER_1000


def _not_quoted_printable(data: bytes, charset: str | None, text: bool) -> bool:
    """Most `=` signs are not escapes (`=` and two hex digits, or a soft line break), and, in a text
    part, decoding adds U+FFFD or control characters the raw bytes did not have (raw HTML with
    `width=100` or `bgcolor=FFFFFF`). Real quoted-printable with a stray `=` keeps its escapes in the
    majority; an encoder that left `=` signs unescaped but wrote real escapes decodes to clean text."""
    stray = len(_QP_STRAY.findall(data))
    if stray * 2 <= data.count(b"="):
        return False
    if not text:
        return True
    as_came = len(_BAD_TEXT.findall(decode_checked(data, charset)[0]))
    return len(_BAD_TEXT.findall(decode_checked(binascii.a2b_qp(data), charset)[0])) > as_came


def judge(data: bytes, encoding: str | None, charset: str | None = None, *, text: bool = False) -> Judged:
    """Whether a part labelled base64 or quoted-printable has that encoding; a part that cannot have
    it is read as it came (`Judged.ignored` names the label).

    Base64 is not base64 when a tenth of its characters lie outside base64's alphabet, or, for
    bytes read as `text` (a body, not a file to save: a file's bytes need not be text), when
    decoding makes it far less valid text (_not_base64_text). Quoted-printable is not
    quoted-printable when most `=` signs are not escapes and, for text, decoding makes the text
    worse; ignoring it is reported only where decoding would change something. `data` is what was
    read: the whole part, or its beginning for a preview or a window read in slices
    (bodystream.TextStream judges its first slice)."""
    kind = _kind(encoding)
    content = data.strip(_WHITESPACE)
    if kind == "base64" and content and (_not_base64_chars(data) or (text and _not_base64_text(data, charset))):
        return Judged("8bit", "base64")
    if kind == "quoted-printable" and b"=" in data and _not_quoted_printable(data, charset, text):
        if binascii.a2b_qp(data) != data:
            return Judged("8bit", "quoted-printable")
        return Judged("8bit")
    return Judged(kind)


def decode_judged(data: bytes, encoding: str | None, charset: str | None = None, *, text: bool = False) -> bytes:
    """`decode_bytes` with the encoding `judge` finds: a part that cannot have its label comes back as it came."""
    return decode_bytes(data, judge(data, encoding, charset, text=text).encoding)


def decode_bytes(data: bytes, encoding: str | None) -> bytes:
    """Undo the Content-Transfer-Encoding (base64, quoted-printable, x-uuencode and its spellings);
    the identity encodings and unknown ones pass unchanged (see `decodable`)."""
    raw = bytes(data or b"")
    kind = (encoding or "").strip().lower()
    if kind == "base64":
        return b64_lenient(raw)
    if kind == "quoted-printable":
        return binascii.a2b_qp(raw)
    if kind in UU_ENCODINGS:
        return uu_lenient(raw)
    return raw


class TextPart(NamedTuple):
    """A text part as read: its text, the charset that decoded it, and the transfer encoding it was
    labelled with but could not have (None when the label held)."""

    text: str
    charset_used: str
    transfer_ignored: Ignorable | None


def read_part(data: bytes, encoding: str | None, charset: str | None, mime_type: str = "text/plain") -> TextPart:
    """A text part as text: transfer-decoded (unless the content cannot have its transfer encoding:
    `judge`), charset-decoded (a label that does not decode cleanly falls back to UTF-8), LF
    newlines, text/enriched and text/richtext converted to what a reader sees, cleaned."""
    judged = judge(data, encoding, charset, text=True)
    text, used = decode_checked(decode_bytes(data, judged.encoding), charset)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if is_rich(mime_type):
        text = rich_to_text(text, mime_type)
    return TextPart(clean(text), used, judged.ignored)


def decode_part(
    data: bytes, encoding: str | None, charset: str | None, mime_type: str = "text/plain"
) -> tuple[str, str]:
    """`read_part`'s text and the charset that decoded it."""
    text, used, _ignored = read_part(data, encoding, charset, mime_type)
    return text, used


def decode_body(data: bytes, encoding: str | None, charset: str | None, mime_type: str = "text/plain") -> str:
    """`read_part`'s text."""
    return read_part(data, encoding, charset, mime_type).text
