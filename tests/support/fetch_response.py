"""One FETCH response parsed by imapclient's own response parser, as the session receives it.

Tests of the parsers build their IMAP structures this way, from wire text, so they see the shapes
a session sees (BodyData, Envelope, Address), not shapes written by hand.
"""

from __future__ import annotations

from typing import Any

from imapclient.response_parser import parse_fetch_response


def fetched(items: bytes | list[Any]) -> dict[bytes, Any]:
    """One FETCH response (UID 1) parsed by imapclient exactly as the session receives it.

    `items` is the wire text inside the parentheses, or a list of imaplib chunks when a literal
    is needed: [(b"... {n}", literal), b"rest"].
    """
    if isinstance(items, bytes):
        lines: list[Any] = [b"1 (UID 1 " + items + b")"]
    else:
        first, *rest = items
        lines = [(b"1 (UID 1 " + first[0], first[1]), *rest[:-1], rest[-1] + b")"]
    # The session sets normalise_times=False (it converts to UTC itself).
    return dict(parse_fetch_response(lines, normalise_times=False)[1])
