"""Header values with RFC 2047 encoded words ("=?utf-8?B?...?="), decoded and cleaned."""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

from ...text import clean
from .charsets import decode_text, undeclared
from .transfer import b64_lenient

_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=")
_FOLD = re.compile(r"\r?\n[ \t]")
_NEWLINES = re.compile(r"[\r\n]")


@dataclass
class _Encoded:
    charset: str
    data: bytearray  # grows in place while adjacent words share the charset


def _word_bytes(kind: str, payload: str, source_codec: str) -> bytes:
    if kind in "bB":
        return b64_lenient(payload.encode("ascii", "ignore"))
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
        text, source_codec = undeclared(raw, cut_short=True)
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
    decoded = "".join(p if isinstance(p, str) else decode_text(bytes(p.data), p.charset) for p in pieces)
    return clean(decoded.strip())
