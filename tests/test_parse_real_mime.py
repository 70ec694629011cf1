"""The parsing fixes for real-world MIME (issue: messy mail from public corpora), each on a message
of tests/corpus (its source is in tests/corpus/SOURCES.md)."""

from __future__ import annotations

import base64
import binascii
import hashlib
from pathlib import Path

import pytest
from imapclient.response_parser import parse_fetch_response

from mcp_multi_gmail.gmail.parse.bodystructure import attachment_parts, body_part, parts
from mcp_multi_gmail.gmail.parse.envelope import addresses, bare_id, header_fragment, raw_searchable
from mcp_multi_gmail.gmail.parse.filenames import generated_name, type_for
from mcp_multi_gmail.gmail.parse.transfer import decodable, decode_bytes, decoded_size, uu_blocks

CORPUS = Path(__file__).resolve().parent / "corpus"
ORIGINALS = CORPUS / "mail-mime-parser" / "files"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetched(items: bytes) -> dict[bytes, object]:
    return dict(parse_fetch_response([b"1 (UID 1 " + items + b")"], normalise_times=False)[1])


def test_uuencoded_files_inside_plain_text_are_found_with_their_names_and_bytes() -> None:
    # Outlook 2000 put three PNGs into the text itself, `begin 666 name` … `end`.
    raw = (CORPUS / "mail-mime-parser" / "m0018.txt").read_bytes()
    blocks = uu_blocks(raw)
    assert [b.name for b in blocks] == ["blueball.png", "greenball.png", "redball.png"]
    for block in blocks:
        assert block.name is not None
        assert sha(block.data(raw)) == sha((ORIGINALS / block.name).read_bytes())


def test_a_begin_line_without_encoded_lines_is_prose_not_a_file() -> None:
    assert uu_blocks(b"Hello,\r\nbegin 644 is how it starts\r\n\r\nand nothing follows.\r\n") == []


@pytest.mark.parametrize("encoding", ["x-uuencode", "uuencode", "x-uue", "X-UUENCODE"])
def test_every_spelling_of_uuencode_is_decoded(encoding: str) -> None:
    raw = (CORPUS / "mail-mime-parser" / "m0018.txt").read_bytes()
    first = uu_blocks(raw)[0]
    assert decodable(encoding)
    assert sha(decode_bytes(raw[first.start : first.end], encoding)) == sha((ORIGINALS / "blueball.png").read_bytes())


def test_an_unknown_transfer_encoding_is_passed_unchanged_and_said_so() -> None:
    assert not decodable("x-gzip64")
    assert decode_bytes(b"H4sI...", "x-gzip64") == b"H4sI..."
    assert all(decodable(kind) for kind in ("7bit", "8bit", "binary", "base64", "quoted-printable", None, ""))


def test_a_nameless_calendar_part_is_an_ics_file_from_the_one_extension_table() -> None:
    assert generated_name("1.3", "text/calendar") == "part-1.3.ics"
    assert type_for("invite.ics") == "text/calendar"  # the same table names an outgoing file's type
    assert type_for("notes.txt") == "text/plain" and type_for("noextension") is None
    assert generated_name("2", "image/x-xbitmap") == "part-2.xbm" and generated_name("3", "image/gif") == "part-3.gif"


def test_an_address_without_a_domain_keeps_its_display_name() -> None:
    # mimekit/… jwz's "nsb (Nathaniel Borenstein)": Gmail puts the comment in the name, NIL as host.
    env = fetched(
        b'ENVELOPE (NIL "x" (("Nathaniel Borenstein" NIL "nsb" NIL)) NIL NIL '
        b'((NIL NIL "nsb" "")(NIL NIL "team" NIL)("A" NIL "a" "example.org")(NIL NIL NIL NIL)) NIL NIL NIL NIL)'
    )[b"ENVELOPE"]
    sender = addresses(env.from_)  # type: ignore[attr-defined]
    assert [(a.name, a.address) for a in sender] == [("Nathaniel Borenstein", None)]
    to = addresses(env.to)  # type: ignore[attr-defined]
    # A domainless mailbox keeps its name; "team:" opens a group (its end marker follows).
    assert [(a.name, a.address) for a in to] == [("nsb", None), ("A", "a@example.org")]


def test_one_message_id_form_for_every_odd_header() -> None:
    # mail-mime-parser's and mime4j's old mail: spaces inside the brackets, comments, no brackets.
    assert bare_id("<9209252113.AA00975@ ebony >") == "9209252113.AA00975@ebony"
    assert bare_id(bare_id("<9209252113.AA00975@ ebony >")) == "9209252113.AA00975@ebony"  # idempotent
    assert raw_searchable("9209252113.AA00975@ebony")
    assert not raw_searchable('"a b"@example.org')
    assert header_fragment("9209252113.AA00975@ebony") == "9209252113"
    assert header_fragment('"a long local"@x.org') == "local"
    assert header_fragment('"@"') == ""  # no word to search the header by


def test_an_empty_text_part_is_not_the_body_when_another_has_text() -> None:
    found = parts(
        fetched(
            b'BODYSTRUCTURE (("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 0 0)'
            b'("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 120 3) "MIXED")'
        )[b"BODYSTRUCTURE"]
    )
    chosen = body_part(found)
    assert chosen is not None and chosen.part_id == "2"
    only_empty = parts(fetched(b'BODYSTRUCTURE ("TEXT" "PLAIN" NIL NIL NIL "7BIT" 0 0)')[b"BODYSTRUCTURE"])
    assert body_part(only_empty) is not None  # nothing better: the empty part is still the body


def test_gmail_s_empty_alternative_node_is_neither_body_nor_attachment() -> None:
    # Gmail's shape for a multipart without parts (jstedfast/MailKit#1841, tests/gmail_recordings).
    found = parts(
        fetched(b'BODYSTRUCTURE (("ALTERNATIVE")("TEXT" "PLAIN" ("CHARSET" "utf-8") NIL NIL "7BIT" 12 1) "MIXED")')[
            b"BODYSTRUCTURE"
        ]
    )
    assert [(p.part_id, p.mime_type) for p in found] == [("2", "text/plain")]
    assert attachment_parts(found) == []


def test_a_decoded_size_from_the_encoded_size_is_the_largest_file_that_fits_it() -> None:
    # base64 in RFC 2045's 76-character lines, CRLF between them (the last one's is the boundary's):
    # never less than the file, at most 2 bytes more (padding), for every length of the last line.
    for length in range(0, 400):
        encoded = base64.encodebytes(bytes(length)).replace(b"\n", b"\r\n").removesuffix(b"\r\n")
        assert 0 <= decoded_size(len(encoded), "base64") - length <= 2, length  # type: ignore[operator]
    # uuencode's 45 bytes a line, framed by its begin and end lines.
    for length in (0, 44, 45, 46, 1000):
        lines = b"".join(binascii.b2a_uu(bytes(length)[i : i + 45]) for i in range(0, length, 45))
        encoded = (b"begin 644 a.png\n" + lines + b"`\nend\n").replace(b"\n", b"\r\n")
        assert 0 <= decoded_size(len(encoded), "x-uuencode", "a.png") - length <= 2, length  # type: ignore[operator]
    assert decoded_size(1234, "7bit") == decoded_size(1234, "quoted-printable") == 1234
    assert decoded_size(None, "base64") is None
