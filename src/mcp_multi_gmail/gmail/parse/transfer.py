"""Content-Transfer-Encoding (base64, quoted-printable) undone, and text parts decoded."""

from __future__ import annotations

import binascii
import re

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


def decode_bytes(data: bytes, encoding: str | None) -> bytes:
    """Undo the Content-Transfer-Encoding (base64, quoted-printable); others pass unchanged."""
    raw = bytes(data or b"")
    kind = (encoding or "").strip().lower()
    if kind == "base64":
        return b64_lenient(raw)
    if kind == "quoted-printable":
        return binascii.a2b_qp(raw)
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
