"""Declared charsets to Python codecs, and IMAP atoms to text.

Unknown, misspelt or dangerous charset names read as UTF-8; undeclared header bytes read as UTF-8
when valid and as Latin-1 otherwise, so no byte is ever lost.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

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
def codec_for(charset: str | None) -> str:
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


def decode_text(data: bytes, charset: str | None) -> str:
    try:
        return data.decode(codec_for(charset), "replace")
    except (UnicodeError, LookupError):  # a codec that fails even with errors="replace"
        return data.decode("utf-8", "replace")


def undeclared(raw: bytes) -> tuple[str, str]:
    """Header bytes with no declared charset: UTF-8 if valid, else Latin-1 (keeps every byte).

    Returns the text and the codec used, so encoded-word payloads can be turned back into the
    exact bytes they were.
    """
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def atom_text(value: object) -> str | None:
    """An IMAP atom (bytes, int from the lexer, str) as text; anything else is None."""
    if isinstance(value, bytes):
        return undeclared(value)[0]
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # imapclient turns all-digit atoms into ints
    return None


def atom_raw(value: object) -> bytes | str | None:
    """An atom as `decode_words` takes it: bytes and str unchanged, numbers as text."""
    if isinstance(value, (bytes, str)):
        return value
    return atom_text(value)
