"""RFC 2047 encoded words in header values (gmail/parse/encoded_words.py), well-formed and broken."""

from __future__ import annotations

import pytest

from mcp_multi_gmail.gmail.parse.encoded_words import decode_words


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        (b"", ""),
        (b"Plain subject", "Plain subject"),
        (b"=?utf-8?q?P=C5=99=C3=ADli=C5=A1_=C5=BElu=C5=A5ou=C4=8Dk=C3=BD?=", "Příliš žluťoučký"),
        (b"=?UTF-8?B?UMWZw61sacWhIMW+bHXFpW91xI1rw70ucGRm?=", "Příliš žluťoučký.pdf"),
        # whitespace between adjacent encoded words disappears, around plain text it stays
        (b"=?utf-8?q?P=C5=99=C3=ADli=C5=A1?= =?utf-8?q?_k=C5=AF=C5=88?=", "Příliš kůň"),
        (b"Re: =?utf-8?q?k=C5=AF=C5=88?= a dal\xc5\xa1\xc3\xad", "Re: kůň a další"),
        # one multi-byte character split across two B words
        (b"=?utf-8?B?xQ==?= =?utf-8?B?mQ==?=", "ř"),
        # different charsets side by side
        (b"=?iso-8859-2?Q?=B9koda?= =?windows-1250?q?_=9Akoda?=", "škoda škoda"),
        # folded over lines (CRLF + WSP), lower-case markers, language suffix of RFC 2231
        (b"=?utf-8*cs?q?a?=\r\n =?utf-8?b?Yg==?=\r\n\tc", "ab c"),
        # unknown charset and a non-text Python codec read as UTF-8
        (b"=?x-unknown?q?caf=C3=A9?=", "café"),
        (b"=?base64?q?caf=C3=A9?=", "café"),
        (b"=?x-unknown?q?bad=FF?=", "bad\ufffd"),
        # malformed encoded words stay literal, broken base64 doesn't raise
        (b"=?utf-8?x?abc?=", "=?utf-8?x?abc?="),
        (b"=?utf-8?b?!!!a?=", ""),
        # raw 8-bit headers: UTF-8 when valid, else Latin-1
        (b"caf\xc3\xa9", "café"),
        (b"caf\xe9", "café"),
        # already text
        ("=?utf-8?q?=C4=8D?= ok", "č ok"),
        # hidden characters inside encoded words are removed
        (b"=?utf-8?q?Bank=E2=80=AE_=E2=80=8Bsupport?=", "Bank support"),
    ],
)
def test_decode_words(raw: bytes | str | None, expected: str | None) -> None:
    assert decode_words(raw) == expected
