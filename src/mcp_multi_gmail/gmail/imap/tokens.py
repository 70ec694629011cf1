"""A faster reader of an IMAP answer's tokens, handed to imapclient's own parser.

imapclient's lexer looks at every octet of an answer in Python; for a search's FETCH of 67
envelopes (29 KB) that is ~5 ms of CPU of the ~7 ms its parsing takes, and three mailboxes
searched at once pay it three times under one interpreter lock. `Tokens` cuts the same answer
into the same tokens with one regular expression per line, and imapclient's parser
(`response_parser`: atoms, lists, ENVELOPE, BODYSTRUCTURE) does the rest exactly as before.

The token rules are RFC 3501 section 9's, as imapclient reads them: an atom is a run of octets
other than SP, CTL, "(", ")", "%", '"' and "[", which may hold "[...]" sections (spaces and
parentheses inside, as in BODY[HEADER.FIELDS (TO)]); a quoted string keeps its quotes, with
backslash escapes of '"' and "\\" undone and any other backslash kept; "(", ")", "%" and a
control octet are tokens of their own. tests/test_imap_tokens.py checks the two readers give the
same tokens, and the same errors, on real and on broken answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_ATOM = rb"""(?>(?:[^\x00-\x20()%"\[]++|\[[^\]]*+\])++)"""
_QUOTED = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_SPACE = rb"[ \t\r\n]*+"
_SINGLE = rb"[()%\x00-\x08\x0b\x0c\x0e-\x1f]"  # a token of one octet: "(", ")", "%", a CTL but SP/TAB/CR/LF
# One token after any whitespace. An atom glued to a quote or to a "[" that never closes is
# caught as `glued`; an unclosed quote or "[" falls to `single`.
_TOKEN = re.compile(
    _SPACE + rb"(?:(?P<atom>" + _ATOM + rb")(?P<glued>[\[\"])?|(?P<quoted>" + _QUOTED + rb")|(?P<single>.))",
    re.DOTALL,
)
# The same tokens as a list, for a line the lexer reads without an error (one `_SOUND` match).
_TOKENS = re.compile(_SPACE + rb"(" + _ATOM + rb"|" + _QUOTED + rb"|.)", re.DOTALL)
_SOUND = re.compile(
    rb"(?:" + _SPACE + rb"(?:" + _ATOM + rb"(?![\[\"])|" + _QUOTED + rb"|" + _SINGLE + rb"))*+" + _SPACE, re.DOTALL
)
# An escaped quote or backslash; any other backslash stays, as does the octet after it.
_ESCAPE = re.compile(rb'\\([\\"])')
_UNCLOSED = {b"[": "No closing ']'", b'"': "No closing '\"'"}


def _unquoted(token: bytes) -> bytes:
    """A quoted token with its backslash escapes of '"' and "\\" undone (any other kept)."""
    return _ESCAPE.sub(rb"\1", token) if b"\\" in token and token[:1] == b'"' else token


def _broken(condition: bool, line: bytes | None = None) -> None:
    """imapclient's own protocol error, raised where its lexer raises it."""
    from imapclient.util import assert_imap_protocol

    assert_imap_protocol(condition, line)


def line_tokens(line: bytes) -> list[bytes] | Iterator[bytes]:
    """The tokens of one line of an answer, in order (a literal's text is not part of the line)."""
    if _SOUND.fullmatch(line) is None:
        return _checked_tokens(line)
    found: list[bytes] = _TOKENS.findall(line)
    if b"\\" not in line:
        return found
    # Only a quoted token can hold an escape ("\\Seen" is an atom, kept as it is).
    return [_ESCAPE.sub(rb"\1", token) if b"\\" in token and token[:1] == b'"' else token for token in found]


def _checked_tokens(line: bytes) -> Iterator[bytes]:
    """`line_tokens` of a line that breaks the rules: the tokens before the fault, then the error."""
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        token = match.group(kind)  # type: ignore[arg-type]
        if kind == "glued":
            _broken(token != b'"')  # a quoted string right after an atom
            raise ValueError(_UNCLOSED[token])
        if kind == "single" and token in _UNCLOSED:
            raise ValueError(_UNCLOSED[token])
        yield _unquoted(token)


class Tokens:
    """What imapclient's parser reads an answer from: its tokens and the current line's literal."""

    def __init__(self, text: list[Any]) -> None:
        self.current_literal: bytes | None = None
        self._tokens = self._all(text)

    def _all(self, text: list[Any]) -> Iterator[bytes]:
        for record in text:
            # imaplib's record: a line, or (a line ending in the literal's {size}, the literal)
            if isinstance(record, tuple):
                line, literal = record[0], record[1]
                _broken(line.endswith(b"}"), line)
            else:
                line, literal = record, None
            self.current_literal = literal
            yield from line_tokens(line)

    def __iter__(self) -> Iterator[bytes]:
        return self._tokens


def install() -> None:
    """Let imapclient's parser read its tokens from `Tokens` (once the client class is built).

    Left alone when the installed imapclient is not laid out as the one this was checked
    against (4.x: `response_parser.TokenSource` is `response_lexer.TokenSource`)."""
    from imapclient import response_lexer, response_parser

    if getattr(response_parser, "TokenSource", None) is getattr(response_lexer, "TokenSource", object()):
        response_parser.TokenSource = Tokens
