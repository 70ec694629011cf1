"""Text helpers for the emulator's MIME parsing: line ends, charsets, RFC 2047 encoded-words, RFC 2231
parameters, transfer encodings and a crude HTML-to-text for search.

Everything here is pure and tolerant: garbage in gives a best-effort text out, never an exception.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import quopri
import re
from email.message import Message
from email.policy import compat32
from email.utils import collapse_rfc2231_value

__all__ = [
    "bytes_to_text",
    "count_lines",
    "decode_charset",
    "decode_words",
    "header_text",
    "normalize_crlf",
    "parse_params",
    "strip_html",
    "transfer_decode",
]

_LONE_LF = re.compile(rb"(?<!\r)\n")
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=")


def normalize_crlf(raw: bytes) -> bytes:
    """Turn every bare LF into CRLF (bare CRs are left alone)."""
    if b"\n" not in raw or raw.count(b"\n") == raw.count(b"\r\n"):
        return raw
    return _LONE_LF.sub(b"\r\n", raw)


def bytes_to_text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("cp1252", errors="replace")


def decode_charset(data: bytes, charset: str | None) -> str:
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
    return "".join(s if isinstance(s, str) else decode_charset(s[1], s[0]) for s in segments)


def header_text(value: bytes) -> str:
    return decode_words(bytes_to_text(value))


def count_lines(body: bytes) -> int:
    # Gmail counts line ends: a last line without CRLF (the CRLF before a boundary belongs to the
    # boundary) is not counted (observed: BEHAVIOURS.md, "Real Gmail bytes").
    return body.count(b"\n")


def parse_params(value: bytes) -> list[tuple[str, bytes]]:
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


def transfer_decode(body: bytes, encoding: str) -> bytes:
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


def strip_html(text: str) -> str:
    text = _SCRIPT_STYLE.sub(" ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = _TAG.sub(" ", text)
    return html.unescape(text)
