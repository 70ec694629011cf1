"""Real imap.gmail.com responses through imapclient's own FETCH parser and our parse layer.

The recordings (tests/gmail_recordings, sources in its README and in BEHAVIOURS.md) come from three
independent publications: MailKit's 2014 Gmail session, a 2018 Gmail FETCH in MailKit issue #777,
and the 2011 Gmail session in rsc's Go imap test.
"""

from __future__ import annotations

import codecs
import email
from collections import Counter
from typing import Any

import pytest

from mcp_multi_gmail.gmail.bodystream import TextStream
from mcp_multi_gmail.gmail.parse.bodystructure import Part, attachment_parts, body_part, parts
from mcp_multi_gmail.gmail.parse.charsets import decode_text
from mcp_multi_gmail.gmail.parse.filenames import generated_name
from mcp_multi_gmail.gmail.parse.transfer import decode_bytes, decode_part
from support.recordings import RECORDINGS, Response, all_fetch_files, fetch_responses, parse, server_bytes
from support.replay import Recorded, mailkit_2014, rsc_2011, section_of

SUMMARY_2014 = RECORDINGS / "mailkit-2014" / "search-summary.txt"
ISSUE_777 = RECORDINGS / "mailkit-issue-777" / "fetch.txt"
# The 2014 messages Gmail was recorded serving whole (BODY[]).
WHOLE_2014 = [3, 5, 7, 12, 13, 14, 26, 27, 28, 34, 43]


def structure(item: dict[bytes, Any]) -> list[Part]:
    return parts(item.get(b"BODYSTRUCTURE", item.get(b"BODY")))


def exposed(found: list[Part]) -> set[str]:
    """Part numbers a user can reach: the body and every listed attachment."""
    body = body_part(found)
    return {p.part_id for p in attachment_parts(found)} | ({body.part_id} if body else set())


def has_body_data(response: Response) -> bool:
    return any(bytes(k).upper().startswith((b"BODY", b"BODYSTRUCTURE")) for k in parse(response))


def test_at_least_20_real_fetch_responses_from_3_sources_parse_through_imapclient() -> None:
    by_source: Counter[str] = Counter()
    for path in all_fetch_files():
        for response in fetch_responses(path):  # literal lengths are checked while loading
            if has_body_data(response):
                by_source[path.relative_to(RECORDINGS).parts[0]] += 1
    assert by_source == {"mailkit-2014": 32, "mailkit-issue-777": 1, "rsc-2011": 21}
    assert sum(by_source.values()) >= 20 and len(by_source) >= 3


def test_every_part_of_the_2014_session_is_reachable() -> None:
    responses = [parse(r) for r in fetch_responses(SUMMARY_2014)]
    assert len(responses) == 21
    structures = {int(item[b"UID"]): structure(item) for item in responses}
    leaves = sum(len(found) for found in structures.values())
    reachable = sum(len(exposed(found)) for found in structures.values())
    # Before: 15 of the 59 leaves reachable, and 6 messages (UIDs 2, 9, 11, 27, 42, 43) showed nothing.
    assert (leaves, reachable) == (59, 50)
    assert [uid for uid, found in structures.items() if not exposed(found)] == []
    for uid, found in structures.items():
        unreached = [p for p in found if p.part_id not in exposed(found)]
        # What stays unlisted is only further text/plain beside the body (alternatives, captions).
        assert all(p.mime_type == "text/plain" for p in unreached), uid
    gif = attachment_parts(structures[27])
    assert [(p.part_id, p.mime_type, p.size, p.filename) for p in gif] == [("1", "image/gif", 42100, None)]
    assert generated_name(gif[0].part_id, gif[0].mime_type) == "part-1.gif"
    partial = attachment_parts(structures[42])
    assert [(p.part_id, p.mime_type) for p in partial] == [("1", "message/partial")]
    names = [generated_name(p.part_id, p.mime_type) for p in attachment_parts(structures[1])]
    assert names == ["part-1.2.au", "part-2.1.gif", "part-2.2.gif", "part-2.4.atomicmail", "part-3.au"]


@pytest.mark.parametrize(("uid", "body"), [(5, "1"), (43, "1"), (50, "3"), (12, "1")])
def test_richtext_is_a_body_only_without_plain_text(uid: int, body: str) -> None:
    item = next(parse(r) for r in fetch_responses(SUMMARY_2014) if int(parse(r)[b"UID"]) == uid)
    chosen = body_part(structure(item))
    assert chosen is not None and chosen.part_id == body


def test_gmail_related_attachment_nodes_are_attachments() -> None:
    (response,) = fetch_responses(ISSUE_777)
    item = parse(response)
    found = structure(item)
    listed = attachment_parts(found)
    assert [(p.part_id, p.disposition) for p in listed] == [(n, "attachment") for n in ("2", "3", "4", "5")]
    assert [generated_name(p.part_id, p.mime_type) for p in listed] == [
        "part-2.bin",
        "part-3.bin",
        "part-4.bin",
        "part-5.bin",
    ]
    chosen = body_part(found)
    assert chosen is not None and (chosen.part_id, chosen.charset, chosen.size) == ("1.1", "utf-8", 10418)
    # The text parts are 45 KB of the 87 KB message: the rest is in the four attachments.
    assert int(item[b"RFC822.SIZE"]) - sum(p.size or 0 for p in found) > 42_000


def test_the_2011_session_has_a_body_for_every_message() -> None:
    path = (
        RECORDINGS
        / "rsc-2011"
        / "uid-fetch-1-flags-internaldate-rfc822-size-envelope-body-x-gm-msgid-x-gm-thrid-x-gm-labels.txt"
    )
    items = [parse(r) for r in fetch_responses(path)]
    assert len(items) == 9
    assert all(body_part(structure(item)) is not None for item in items)
    patch = [p for item in items for p in attachment_parts(structure(item))]
    assert [(p.mime_type, p.filename) for p in patch] == [("text/x-patch", "emote.patch")]
    labels = {int(item[b"UID"]): item[b"X-GM-LABELS"] for item in items}
    assert labels[49424] == (b"\\Important", b"\\Starred")


def recorded_whole(session_uids: list[int]) -> list[Recorded]:
    return [m for m in mailkit_2014(session_uids).messages if m.whole is not None] + rsc_2011().messages


def test_every_section_cut_from_a_recorded_message_has_the_size_gmail_reported() -> None:
    """The replay server cuts BODY[n] from the recorded BODY[]: its sizes must be Gmail's own."""
    checked = 0
    for message in recorded_whole(WHOLE_2014):
        assert message.whole is not None
        found = parts(parse(Response(b"", [b"1 (BODY " + message.items[b"BODY"] + b")"]))[b"BODY"])
        for part in found:
            assert len(section_of(message.whole, part.part_id)) == part.size, (message.uid, part.part_id)
            checked += 1
    for section, recorded in rsc_2011().messages[0].sections.items():
        assert section_of(rsc_2011().messages[0].whole or b"", section) == recorded
    assert checked == 32


def japanese_body(uid: int) -> bytes:
    (message,) = [m for m in mailkit_2014([uid]).messages]
    assert message.whole is not None
    return section_of(message.whole, "1")


@pytest.mark.parametrize(("uid", "before", "word"), [(7, 153, "神戸"), (14, 516, "情報数理")])
def test_a_utf8_part_labelled_iso_2022_jp_decodes_as_utf8(uid: int, before: int, word: str) -> None:
    raw = japanese_body(uid)
    assert decode_text(raw, "iso-2022-jp").count("\ufffd") == before  # what the label alone gives
    text, used = decode_part(raw, "7bit", "iso-2022-jp")
    assert used == "utf-8" and "\ufffd" not in text
    assert text == decode_part(raw, "7bit", "us-ascii")[0] == raw.decode("utf-8").replace("\r\n", "\n")
    assert word in text


@pytest.mark.parametrize("slice_bytes", [7, 64, 1 << 20])
def test_streamed_decoding_falls_back_the_same_way(slice_bytes: int) -> None:
    raw = japanese_body(14)
    stream = TextStream("7bit", "iso-2022-jp")
    chunks = [raw[i : i + slice_bytes] for i in range(0, len(raw), slice_bytes)]
    text = "".join(stream.feed(c, final=i == len(chunks) - 1) for i, c in enumerate(chunks))
    assert (text, stream.charset_used) == decode_part(raw, "7bit", "iso-2022-jp")


def test_a_label_that_decodes_is_kept() -> None:
    (message,) = mailkit_2014([3]).messages
    assert message.whole is not None
    text, used = decode_part(section_of(message.whole, "1"), "quoted-printable", "iso-8859-8")
    assert used == "iso-8859-8" and "\ufffd" not in text
    assert any("\u05d0" <= ch <= "\u05ea" for ch in text)  # Hebrew letters
    # Bytes no candidate decodes cleanly keep the declared label, with replacement characters.
    assert decode_part(b"\xff\xfe\x1b$B", "7bit", "iso-2022-jp")[1] == "iso-2022-jp"


def test_richtext_of_the_2014_session_reads_as_text() -> None:
    (message,) = mailkit_2014([43]).messages
    assert message.whole is not None
    text, _used = decode_part(section_of(message.whole, "3"), "quoted-printable", None, "text/richtext")
    assert text.startswith("You can view the section by selecting a [<section>] label.")
    assert "<bold>" not in text and "<nl>" not in text and "<underline>" not in text


def test_a_nameless_attachment_decodes_to_the_bytes_the_sender_attached() -> None:
    (message,) = mailkit_2014([27]).messages
    assert message.whole is not None
    data = decode_bytes(section_of(message.whole, "1"), "base64")
    oracle = email.message_from_bytes(message.whole).get_payload(decode=True)
    assert data == oracle and data.startswith(b"GIF8")


@pytest.mark.parametrize(
    ("part_id", "mime_type", "name"),
    [
        ("1.2", "image/gif", "part-1.2.gif"),
        ("2", "audio/basic", "part-2.au"),
        ("3", "application/octet-stream", "part-3.bin"),
        ("4", "image/x-xbitmap", "part-4.xbm"),
        ("5", "message/rfc822", "part-5.eml"),
        ("6", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "part-6.bin"),
        ("7", "related/octet-stream", "part-7.bin"),
        ("8", "image/svg+xml", "part-8.svg"),
    ],
)
def test_generated_names(part_id: str, mime_type: str, name: str) -> None:
    assert generated_name(part_id, mime_type) == name


def test_iso_2022_jp_is_a_real_python_codec() -> None:
    # The fallback above would prove nothing if the label were unknown (unknown labels read as UTF-8).
    assert codecs.lookup("iso-2022-jp").name == "iso2022_jp"


def test_the_emulator_describes_the_recorded_messages_as_gmail_did() -> None:
    """The emulator's BODY for each message Gmail served whole is byte for byte Gmail's: upper-case
    type words and parameter names, parameters in alphabetical order, lines counted as line ends."""
    from gmail_emulator.mime import ParsedMessage

    compared = []
    for message in recorded_whole(WHOLE_2014):
        assert message.whole is not None
        if b'"MESSAGE" "RFC822"' in message.items[b"BODY"]:
            continue  # its inner ENVELOPE holds Gmail's address rewriting, which is not modelled
        assert ParsedMessage(message.whole).bodystructure(extended=False) == message.items[b"BODY"], message.uid
        compared.append(message.uid)
    assert compared == [3, 7, 12, 13, 14, 26, 27, 28, 34, 43, 57046]


def test_a_2024_delivery_report_with_gmail_s_empty_multipart_lists_every_part() -> None:
    value = server_bytes(RECORDINGS / "mailkit-issue-1841" / "body.txt").rstrip(b"\r\n")
    found = parts(parse(Response(b"", [b"1 (BODY " + value + b")"]))[b"BODY"])
    assert [(p.part_id, p.mime_type) for p in found] == [
        ("1", "text/plain"),
        ("2", "message/delivery-status"),
        ("3", "message/rfc822"),  # its inner structure is Gmail's ("ALTERNATIVE"): no parts
    ]
    chosen = body_part(found)
    assert chosen is not None and chosen.charset == "windows-1252"
    # Before: the delivery status (part 2) was neither body nor attachment.
    names = [generated_name(p.part_id, p.mime_type) for p in attachment_parts(found)]
    assert names == ["part-2.txt", "part-3.eml"]
