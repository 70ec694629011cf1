"""Declared charsets to Python codecs, and IMAP atoms to text.

Unknown, misspelt or dangerous charset names read as UTF-8; undeclared header bytes read as UTF-8
when valid and as Latin-1 otherwise, so no byte is lost (text a person reads also as UTF-8 when
only an unfinished character at its very end breaks it: that character is dropped).
"""

from __future__ import annotations

import codecs
from contextlib import suppress
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


def undeclared(raw: bytes, *, cut_short: bool = False) -> tuple[str, str]:
    """Header bytes with no declared charset: UTF-8 if valid, else Latin-1 (keeps every byte).

    With `cut_short` (text a person reads: names, subjects), UTF-8 that is valid but for an
    unfinished character at its very end (a client that cut a file name at a fixed byte count) is
    UTF-8 without that tail: one broken character must not turn the rest into Latin-1 mojibake.
    Identifiers (Message-IDs, mailboxes, hosts) keep every byte.

    Returns the text and the codec used, so encoded-word payloads can be turned back into the
    exact bytes they were.
    """
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        cut = utf8_cut_short(raw) if cut_short else None
        return (cut, "utf-8") if cut is not None else (raw.decode("latin-1"), "latin-1")


def utf8_cut_short(raw: bytes) -> str | None:
    """`raw` as UTF-8 without an unfinished character at its very end, when the rest is valid and
    holds at least one whole multi-byte character; else None.

    The whole character is the evidence: Latin-1 text that ends in an accented letter and has none
    before it ("José", 4a 6f 73 e9) also ends like the start of a UTF-8 sequence, and stays Latin-1.
    """
    try:
        # An incremental decode that is not final holds back an unfinished sequence at the end
        # instead of failing on it; a bad byte anywhere else still fails.
        text = codecs.getincrementaldecoder("utf-8")("strict").decode(raw, final=False)
    except UnicodeDecodeError:
        return None
    return None if text.isascii() else text


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


def reported_charset(charset: str | None, codec: str) -> str:
    """The charset name a result reports for `codec`: the declared label when its own decoder was
    used; "utf-8" when UTF-8 was (it also stands for US-ASCII, which it contains, and for labels
    that name no known charset)."""
    if codec == "utf-8" or not charset:
        return "utf-8"
    return charset.strip().strip("\"'").split("*", 1)[0].lower() or codec


def decode_checked(data: bytes, charset: str | None) -> tuple[str, str]:
    """A text part's bytes as text, and the charset that decoded them.

    Gmail serves what the sender sent, and a label can be wrong (UTF-8 bytes under a 7-bit
    ISO-2022-JP label). The declared charset is tried strictly; if it cannot decode the bytes
    cleanly, UTF-8 is tried strictly; only then the declared charset with replacement characters.
    """
    for codec in fallback_codecs(charset):
        with suppress(UnicodeError, LookupError):
            return data.decode(codec, "strict"), reported_charset(charset, codec)
    return decode_text(data, charset), reported_charset(charset, codec_for(charset))


def fallback_codecs(charset: str | None) -> list[str]:
    """The codecs `decode_checked` tries strictly, in order (also for decoders fed a slice at a time)."""
    codec = codec_for(charset)
    return [codec] if codec == "utf-8" else [codec, "utf-8"]
