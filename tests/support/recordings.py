"""Real imap.gmail.com responses kept in tests/gmail_recordings (see its README for the sources).

The files are stored with LF line ends, as the projects that published them keep them; Gmail sent
CRLF. `server_bytes` restores CRLF, and every literal's announced length is checked against the
restored bytes, so a file that does not give back exactly what Gmail sent fails loudly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parent.parent / "gmail_recordings"
_LITERAL = re.compile(rb"\{(\d+)\}\r\n$")
_FETCH = re.compile(rb"^\* (\d+) FETCH ")


def server_bytes(path: Path) -> bytes:
    """A recorded response file as Gmail sent it (CRLF line ends)."""
    return path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


@dataclass(frozen=True)
class Response:
    """One untagged FETCH response: its bytes on the wire, and the pieces imaplib hands imapclient."""

    wire: bytes
    imaplib_data: list[Any]  # b'1 (UID 1 ...' lines and (line, literal) tuples


def _lines_with_literals(data: bytes) -> list[tuple[bytes, list[Any]]]:
    """(wire bytes, imaplib-shaped pieces) for every response line of a recording."""
    out: list[tuple[bytes, list[Any]]] = []
    position = 0
    while position < len(data):
        start = position
        pieces: list[Any] = []
        while True:
            end = data.index(b"\r\n", position) + 2
            line = data[position:end]
            literal = _LITERAL.search(line)
            if literal is None:
                pieces.append(line[:-2])
                position = end
                break
            size = int(literal.group(1))
            body = data[end : end + size]
            if len(body) != size:
                raise ValueError(f"a literal announces {size} bytes but the recording holds {len(body)}")
            pieces.append((line[:-2], body))
            position = end + size
        out.append((data[start:position], pieces))
    return out


def fetch_responses(path: Path) -> list[Response]:
    """The untagged FETCH responses of a recording file, in order."""
    found: list[Response] = []
    for wire, pieces in _lines_with_literals(server_bytes(path)):
        first = pieces[0][0] if isinstance(pieces[0], tuple) else pieces[0]
        if not _FETCH.match(first):
            continue

        # imaplib strips "* " and the word FETCH: b"56697 (X-GM-THRID ..."
        def strip(piece: bytes) -> bytes:
            return _FETCH.sub(lambda m: m.group(1) + b" ", piece, count=1)

        head = pieces[0]
        pieces[0] = (strip(head[0]), head[1]) if isinstance(head, tuple) else strip(head)
        found.append(Response(wire, pieces))
    return found


def parse(response: Response) -> dict[bytes, Any]:
    """One response through imapclient's own FETCH parser, as gmail/imap/ receives it."""
    from imapclient.response_parser import parse_fetch_response

    parsed = parse_fetch_response(response.imaplib_data, normalise_times=False, uid_is_key=False)
    ((_number, items),) = parsed.items()
    return dict(items)


def all_fetch_files() -> list[Path]:
    """Every recording file that holds FETCH responses (the parse-level tests read them all)."""
    return sorted(p for p in RECORDINGS.rglob("*.txt") if b"FETCH (" in p.read_bytes())
