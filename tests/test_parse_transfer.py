"""Bodies decoded from their transfer encoding and charset (gmail/parse/transfer.py)."""

from __future__ import annotations

import pytest

from mcp_multi_gmail.gmail.parse.transfer import decode_body, decode_bytes

CZECH = "Příliš žluťoučký kůň úpěl ďábelské ódy"


@pytest.mark.parametrize(
    ("data", "encoding", "charset"),
    [
        (b"P=F8=EDli=9A =9Elu=9Dou=E8k=FD k=F9=F2 =FAp=ECl =EF=E1belsk=E9 =F3dy", "quoted-printable", "windows-1250"),
        (b"P=F8=EDli=9A =9Elu=9Dou=E8k=FD k=F9=F2 =FAp=ECl =EF=E1belsk=E9 =F3dy", "Quoted-Printable", "cp1250"),
        (b"P=F8=EDli=B9 =BElu=BBou=E8k=FD k=F9=F2 =FAp=ECl =EF=E1belsk=E9 =F3dy", "quoted-printable", "iso-8859-2"),
        (b"P=F8=EDli=B9 =BElu=BBou=E8k=FD k=F9=F2 =FAp=ECl =EF=E1belsk=E9 =F3dy", "quoted-printable", "latin2"),
        (b"P=F8=EDli=B9 =BElu=BB=\r\nou=E8k=FD k=F9=F2 =FAp=ECl =EF=E1belsk=E9 =F3dy", "quoted-printable",
         "ISO_8859-2"),
        (b"UMWZw61sacWhIMW+bHXFpW91xI1rw70ga8WvxYggw7pwxJtsIMSPw6FiZWxza8OpIMOzZHk=", "base64", "utf-8"),
        (b"UMWZw61sacWhIMW+bHXF\r\npW91xI1rw70ga8WvxYggw7pwxJtsIMSPw6FiZWxza8OpIMOzZHk=\r\n", "BASE64", '"UTF-8"'),
        (CZECH.encode(), "8bit", None),
        (CZECH.encode(), "binary", "us-ascii"),  # mislabelled UTF-8 still reads
        (CZECH.encode("utf-16"), "binary", "utf-16"),
    ],
)  # fmt: skip
def test_decode_body_czech(data: bytes, encoding: str, charset: str | None) -> None:
    assert decode_body(data, encoding, charset) == CZECH


@pytest.mark.parametrize("charset", ["x-unknown-charset", "", None, "base64", "rot13", "undefined", "idna", "a\x00b"])
def test_decode_body_unknown_charset_falls_back_to_utf8(charset: str | None) -> None:
    assert decode_body("café\r\n".encode(), "7bit", charset) == "café\n"
    assert decode_body(b"bad \xff byte", "7bit", charset) == "bad \ufffd byte"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"aGVsbG8gd29ybGQ=", b"hello world"),
        (b"aGVsbG8gd29ybGQ", b"hello world"),  # padding missing
        (b"aGVs bG8g\r\nd29y bGQ=", b"hello world"),  # whitespace and line breaks
        (b"aGVsbG8=\r\nIHdvcmxk", b"hello world"),  # padding in the middle (concatenated parts)
        (b"aGVs!!bG8*gd29ybGQ=", b"hello world"),  # junk characters
        (b"aGVsbG8gd29ybGQx1", b"hello world1"),  # one sextet too many
        (b"a", b""),
        (b"!!!", b""),
        (b"====", b""),
        (b"", b""),
        (b"aGk-_w", b"hi>\xff"),  # URL-safe alphabet
    ],
)
def test_broken_base64_is_tolerated(data: bytes, expected: bytes) -> None:
    assert decode_bytes(data, "base64") == expected


def test_decode_bytes_other_encodings() -> None:
    assert decode_bytes(b"a=3Db=\r\nc =ZZ", "quoted-printable") == b"a=bc =ZZ"
    raw = bytes(range(256))
    for encoding in ("7bit", "8bit", "binary", "", "x-weird", None):
        assert decode_bytes(raw, encoding) == raw
    assert decode_bytes(b"JVBERi0xLjQK", " Base64 ") == b"%PDF-1.4\n"


def test_decode_body_newlines_and_hidden_characters() -> None:
    assert decode_body(b"a\r\nb\rc\n\xe2\x80\xaed\xe2\x80\x8b", "7bit", "utf-8") == "a\nb\nc\nd"
    assert decode_body(b"", "base64", "utf-8") == ""
    assert decode_body(b"\xef\xbb\xbfBOM", "8bit", "utf-8") == "BOM"
