"""Content-Transfer-Encoding undone (base64, quoted-printable, x-uuencode), and text parts decoded.

Uuencoded files also hide inside plain text with no transfer encoding at all: a `begin 644 name`
line, encoded lines, `end` (the form mail used before MIME). `uu_blocks` finds them so they can
be listed and saved as the files they are.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

from ...text import clean
from .charsets import decode_checked
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
        name = begin.group(2).decode("utf-8", "replace").strip() or None
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


def decode_part(
    data: bytes, encoding: str | None, charset: str | None, mime_type: str = "text/plain"
) -> tuple[str, str]:
    """A text part as text, and the charset that decoded it: transfer-decoded, charset-decoded
    (a label that does not decode cleanly falls back to UTF-8), LF newlines, text/enriched and
    text/richtext converted to what a reader sees, cleaned."""
    text, used = decode_checked(decode_bytes(data, encoding), charset)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if is_rich(mime_type):
        text = rich_to_text(text, mime_type)
    return clean(text), used


def decode_body(data: bytes, encoding: str | None, charset: str | None, mime_type: str = "text/plain") -> str:
    """`decode_part` without the charset."""
    return decode_part(data, encoding, charset, mime_type)[0]
