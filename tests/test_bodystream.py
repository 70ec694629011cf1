"""The slice-by-slice body decoder gives exactly the text that decoding the whole part gives."""

from __future__ import annotations

import base64
import quopri

import pytest

from mcp_multi_gmail.gmail.bodystream import TextStream
from mcp_multi_gmail.gmail.parse.transfer import decode_body

TEXT = "".join(f"Řádek {i}: žluťoučký kůň úpěl ďábelské ódy \u200b€ 🐎\r\n" for i in range(400))


def _encoded(encoding: str, charset: str) -> bytes:
    raw = TEXT.encode(charset, "replace")
    if encoding == "base64":
        return base64.encodebytes(raw)  # 76-character lines, as mail programs write them
    if encoding == "quoted-printable":
        return quopri.encodestring(raw)
    return raw


def _streamed(data: bytes, encoding: str, charset: str, size: int) -> str:
    stream = TextStream(encoding, charset)
    pieces = []
    for start in range(0, len(data), size):
        chunk = data[start : start + size]
        pieces.append(stream.feed(chunk, final=start + size >= len(data)))
    return "".join(pieces)


@pytest.mark.parametrize("encoding", ["7bit", "base64", "quoted-printable"])
@pytest.mark.parametrize("charset", ["utf-8", "iso-8859-2", "utf-16"])
@pytest.mark.parametrize("size", [1, 3, 77, 4096])
def test_any_slicing_decodes_like_the_whole(encoding: str, charset: str, size: int) -> None:
    if encoding == "7bit" and charset == "utf-16":
        pytest.skip("UTF-16 never travels unencoded in mail")
    data = _encoded(encoding, charset)
    whole = decode_body(data, encoding, charset)
    assert "\r" not in whole and "\u200b" not in whole  # CRLF joined, invisible characters removed
    assert _streamed(data, encoding, charset, size) == whole


def test_base64_with_padding_inside_and_junk() -> None:
    # Two base64 blocks glued together (padding in the middle) and stray characters in between.
    data = base64.b64encode(b"ahoj ") + b"\r\n*" + base64.b64encode("světe".encode()) + b"\r\n"
    whole = decode_body(data, "base64", "utf-8")
    assert whole == "ahoj světe"
    for size in (1, 2, 5):
        assert _streamed(data, "base64", "utf-8", size) == whole
