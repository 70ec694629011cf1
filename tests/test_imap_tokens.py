"""gmail/imap/tokens.py against imapclient's own lexer: the same tokens, the same literals and the
same errors at the same place, for real FETCH answers and for broken ones."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from imapclient import response_parser
from imapclient.exceptions import ProtocolError
from imapclient.response_lexer import TokenSource

from mcp_multi_gmail.gmail.imap import login, tokens

FETCH_LINE = (
    b'1 (UID 7 X-GM-THRID 1700000000000000001 X-GM-MSGID 1700000000000000002 INTERNALDATE "01-Dec-2026 10:00:00 +0100" '
    b'FLAGS (\\Seen $Junk) X-GM-LABELS ("\\\\Inbox" "Work/\\"Q\\"" processed) '
    b'ENVELOPE ("Tue, 1 Dec 2026 10:00:00 +0100" "=?utf-8?q?Faktura_=C4=8D._7?=" '
    b'(("Ann \\"A\\"" NIL "ann" "example.com")) '
    b'NIL NIL ((NIL NIL "undisclosed-recipients" NIL)(NIL NIL NIL NIL)) NIL NIL NIL "<inv-7@example.com>") '
    b"BODY[HEADER.FIELDS (RECEIVED AUTHENTICATION-RESULTS)] {5}"
)
# Fragments that meet every rule of the lexer: sections, escapes, CTLs, 8-bit octets, literals.
FRAGMENTS = [
    b" ", b"  ", b"\t", b"\r\n", b"(", b")", b"%", b'"', b"\\", b"[", b"]", b"{3}", b"NIL", b"a", b"07", b"12",
    b"\x00", b"\x01", b"\x0b", b"\x7f", b"\xc3\xa9", b'"x y"', b'"a\\"b"', b'"a\\\\"', b'"a\\b"', b"BODY[1]<0>",
    b"BODY[HEADER.FIELDS (TO CC)]", b"[a b", b"\\Seen", b"*", b"<0.16384>",
]  # fmt: skip


def _run(source: Any) -> tuple[list[bytes], str | None]:
    """Every token a source gives, the literal current at each, and how it ended."""
    seen: list[bytes] = []
    try:
        for token in source:
            seen.append(token)
            seen.append(source.current_literal or b"")
    except (ValueError, ProtocolError) as error:
        return seen, f"{type(error).__name__}: {error}"
    return seen, None


def _same(text: list[Any]) -> None:
    assert _run(tokens.Tokens(text)) == _run(TokenSource(text))


def test_a_real_fetch_answer_gives_the_same_tokens() -> None:
    _same([(FETCH_LINE, b"X: y\r"), b")", b"2 (UID 8 FLAGS ())"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), max_size=14).map(b"".join), min_size=1, max_size=3))
@example([b'abc"d"'])
@example([b"abc[d"])
@example([b'"abc'])
@example([b'"ab\\'])
@example([b"(a [b) c"])
def test_any_line_gives_the_same_tokens_and_errors(lines: list[bytes]) -> None:
    _same(lines)


@pytest.mark.parametrize("line", [b"{3}", b"x {3}", b"x {3} y"])
def test_a_literal_record_gives_the_same_tokens_and_errors(line: bytes) -> None:
    _same([(line, b"abc"), b" NIL)"])


def test_the_client_hands_imapclients_parser_these_tokens() -> None:
    login._client_class()
    assert response_parser.TokenSource is tokens.Tokens
    answer = response_parser.parse_fetch_response([(FETCH_LINE, b"X: y\r"), b")"], False, True)
    assert answer[7][b"X-GM-LABELS"] == (b"\\Inbox", b'Work/"Q"', b"processed")
    assert answer[7][b"BODY[HEADER.FIELDS (RECEIVED AUTHENTICATION-RESULTS)]"] == b"X: y\r"
