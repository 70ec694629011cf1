"""Content-Transfer-Encoding (base64, quoted-printable) undone, and text parts decoded."""

from __future__ import annotations

import binascii
import re

from ...text import clean
from .charsets import decode_text

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


def decode_body(data: bytes, encoding: str | None, charset: str | None) -> str:
    """A text part as text: transfer-decoded, charset-decoded (unknown → UTF-8), LF newlines, cleaned."""
    text = decode_text(decode_bytes(data, encoding), charset)
    return clean(text.replace("\r\n", "\n").replace("\r", "\n"))
