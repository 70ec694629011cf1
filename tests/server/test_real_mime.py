"""Real-world MIME read through the server, each check on a message of tests/corpus (its source in
tests/corpus/SOURCES.md): uuencoded files, undecodable encodings, empty parts, Gmail's empty
multipart, both header-end rules and RFC 2046 boundary lines (the emulator's BEHAVIOURS.md,
"Broken MIME")."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support.corpus import CORPUS, message_bytes

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
ORIGINALS = CORPUS / "mail-mime-parser" / "files"
BOTH_RULES = pytest.mark.parametrize("header_end", ["non_field", "blank_line"])


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], tmp_path: Path
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla"}
    return make_runtime(write_config([entry], download_dir=str(tmp_path / "dl")))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def read(
    emulator: GmailEmulator, runtime: Runtime, call: Call, name: str, header_end: str | None = None
) -> tuple[str, dict[str, Any]]:
    """Deliver a corpus message (under that header-end rule, if given) and read it by the id
    mg_get_thread shows."""
    if header_end is not None:
        emulator.set_knobs(header_end=header_end)
    info = emulator.deliver(ME, message_bytes(name))
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=str(info.thrid))
    bare = thread["messages"][0]["message_id"]
    return bare, await ok(call, runtime, "mg_get_message", account="o", message_id=bare, max_body_length=30_000)


async def save(call: Call, runtime: Runtime, bare: str, attachment_id: str) -> tuple[dict[str, Any], bytes]:
    saved = await ok(call, runtime, "mg_get_attachment", account="o", message_id=bare, attachment_id=attachment_id)
    return saved, Path(saved["path"]).read_bytes()


@pytest.mark.parametrize(
    "name",
    [
        "mail-mime-parser/m1014.txt",  # Netscape 4.7: Content-Transfer-Encoding: x-uuencode
        "mail-mime-parser/m2010.txt",  # Eudora 4.2: x-uuencode, begin 600
        "mail-mime-parser/m3007.txt",  # Pine: uuencode and x-uuencode
    ],
)
async def test_uuencoded_attachments_are_saved_as_the_original_files(
    emulator: GmailEmulator, runtime: Runtime, call: Call, name: str
) -> None:
    bare, message = await read(emulator, runtime, call, name)
    pngs = [a for a in message["attachments"] if a["filename"].endswith(".png")]
    assert len(pngs) >= 2
    for attachment in pngs:
        saved, data = await save(call, runtime, bare, attachment["attachment_id"])
        original = (ORIGINALS / attachment["filename"]).read_bytes()
        assert sha(data) == sha(original) and saved["size_bytes"] == len(original)
        assert abs(attachment["size_bytes"] - len(original)) <= 3  # listed: computed from 45 bytes a line
        assert saved["decoded"] is True and saved["transfer_encoding"] is None


async def test_uuencoded_files_inside_plain_text_are_attachments_with_their_own_names(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # Outlook 2000 wrote three PNGs into the text itself: begin 666 blueball.png … end.
    bare, message = await read(emulator, runtime, call, "mail-mime-parser/m0018.txt")
    listed = [(a["attachment_id"], a["filename"], a["mime_type"]) for a in message["attachments"]]
    assert listed == [
        ("1.1", "blueball.png", "image/png"),
        ("1.2", "greenball.png", "image/png"),
        ("1.3", "redball.png", "image/png"),
    ]
    assert "begin 666" not in message["body"] and "The Hare and the Tortoise" in message["body"]
    for attachment in message["attachments"]:
        saved, data = await save(call, runtime, bare, attachment["attachment_id"])
        assert sha(data) == sha((ORIGINALS / attachment["filename"]).read_bytes())
        assert attachment["size_bytes"] == saved["size_bytes"] == len(data)
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=message["thread_id"], bodies="all")
    assert thread["messages"][0]["attachments"] == message["attachments"]


async def test_listed_sizes_are_decoded_sizes(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    # Eudora's message of a base64 PNG in 76-character lines, a text file without a transfer
    # encoding and a quoted-printable one: the listing has their sizes from BODYSTRUCTURE alone.
    bare, message = await read(emulator, runtime, call, "mail-mime-parser/m2012.txt")
    listed = {a["filename"]: a for a in message["attachments"]}
    sizes: dict[str, tuple[int, int]] = {}
    for attachment in listed.values():
        saved, data = await save(call, runtime, bare, attachment["attachment_id"])
        assert saved["size_bytes"] == len(data)
        sizes[attachment["filename"]] = (attachment["size_bytes"], len(data))
    png, text, qp = sizes["blueball.png"], sizes["farmerandstork.txt"], sizes["HasenundFrösche.txt"]
    assert png[1] == len((ORIGINALS / "blueball.png").read_bytes()) and 0 <= png[0] - png[1] <= 3
    assert text[0] == text[1]
    assert qp[0] >= qp[1]  # quoted-printable: the encoded size, an upper bound


async def test_an_encoding_that_cannot_be_decoded_is_saved_as_it_came_and_marked(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # MIME-tools' sample of Content-Transfer-Encoding: x-gzip64. It has no Message-ID, which
    # mg_get_attachment needs to name it: one is put in front, the rest is the sample as it is.
    raw = message_bytes("mime4j/mimetools-testmsgs/x-gzip64.msg")
    emulator.deliver(ME, b"Message-ID: <x-gzip64@mime-tools.example>\n" + raw)
    message = await ok(call, runtime, "mg_get_message", account="o", message_id="x-gzip64@mime-tools.example")
    [attachment] = message["attachments"]
    assert attachment["filename"] == ".signature"
    saved, data = await save(call, runtime, "x-gzip64@mime-tools.example", attachment["attachment_id"])
    assert saved["decoded"] is False and saved["transfer_encoding"] == "x-gzip64"
    as_sent = raw.split(b"\n\n", 1)[1]
    assert data.replace(b"\r\n", b"\n") == as_sent  # the part as it came, never passed off as decoded


async def test_gmail_s_empty_multipart_shows_nothing_and_the_text_beside_it_is_the_body(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # MimeKit's empty-multipart sample: an empty multipart/alternative, then the text.
    _bare, message = await read(emulator, runtime, call, "mimekit/empty-multipart.txt")
    assert message["body"].startswith("This part should be on the same level as")
    assert message["attachments"] == []  # no "part-1.bin" of type alternative/octet-stream


async def test_a_zero_byte_text_part_never_hides_the_text_beside_it(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # MIME-tools' multi-badnames: the first text part is empty.
    info = emulator.deliver(ME, message_bytes("mime4j/mimetools-testmsgs/multi-badnames.msg"))
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=str(info.thrid), bodies="all")
    assert thread["messages"][0]["body"].startswith("This is explicitly typed plain ASCII text")


@BOTH_RULES
async def test_an_attachment_header_without_its_blank_line_is_never_0_bytes(
    emulator: GmailEmulator, runtime: Runtime, call: Call, header_end: str
) -> None:
    # MimeKit issue 1189: "Content-Disposition: attachment" followed at once by the base64.
    bare, message = await read(emulator, runtime, call, "mimekit/mbox-issue1189-02.eml", header_end)
    [zipped] = [a for a in message["attachments"] if a["filename"] == "Attachment.zip"]
    saved, data = await save(call, runtime, bare, zipped["attachment_id"])
    assert saved["size_bytes"] == len(data) == 3750 and data.startswith(b"7z\xbc\xaf")
    # Listed, too, with the size of what is saved: mg_get_message and mg_get_thread alike.
    emulator.reset_counters()
    message = await ok(call, runtime, "mg_get_message", account="o", message_id=bare)
    fetches = len([c for c in emulator.commands() if c.name == "UID FETCH"])
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=message["thread_id"], bodies="all")
    for listed in (message["attachments"], thread["messages"][0]["attachments"]):
        [zipped] = [a for a in listed if a["filename"] == "Attachment.zip"]
        # Read from the part's header (blank_line): exact. Computed from BODYSTRUCTURE (non_field):
        # this sender wrote the base64 as one 5000-character line, not RFC 2045's 76, so the
        # estimate for 76-character lines is 95 bytes low (AttachmentInfo.size_bytes says so).
        assert zipped["size_bytes"] == (3750 if header_end == "blank_line" else 3655)
    # The part's header is fetched only where the part was served as 0 octets.
    assert fetches == (3 if header_end == "blank_line" else 2)  # BODYSTRUCTURE, text(, the part's MIME header)


@BOTH_RULES
async def test_a_separator_line_with_a_space_still_gives_the_body(
    emulator: GmailEmulator, runtime: Runtime, call: Call, header_end: str
) -> None:
    # MIME-tools' hdr-fakeout: the "blank line" after the header holds a space.
    _bare, shown = await read(emulator, runtime, call, "mime4j/mimetools-testmsgs/hdr-fakeout.msg", header_end)
    assert (shown["subject"], shown["body"][:37]) == ("test message 1", "The header is not properly terminated")


async def test_a_delimiter_line_may_carry_text_after_the_boundary(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # mime4j's ending-boundaries: "--boundary This should be ignored" (RFC 2046 section 5.1.1).
    info = emulator.deliver(ME, message_bytes("mime4j/testmsgs/ending-boundaries.msg"))
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=str(info.thrid), bodies="all")
    assert thread["messages"][0]["body"] == "first part\n"
    # …and a nested boundary that begins with the outer one is not the outer one's delimiter.
    info = emulator.deliver(ME, message_bytes("mime4j/testmsgs/boundary-name-clash.msg"))
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=str(info.thrid), bodies="all")
    [pdf] = thread["messages"][0]["attachments"]
    assert pdf["filename"] == "Daily_Stats-2022-05-12-0700.pdf"


async def test_an_address_without_a_domain_keeps_its_display_name(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # The two forms of jwz's 1991 test mailbox (MimeKit's UnitTests/TestData/mbox/jwz.mbox.txt, too
    # large for tests/corpus): a comment as the name, and a quoted name around a bare mailbox.
    raw = (
        b'From: nsb (Nathaniel Borenstein)\r\nTo: "Nathaniel Borenstein" <nsb>, Bob <bob@example.org>\r\n'
        b"Subject: test of mail headers\r\nMessage-ID: <jwz-nsb@example.org>\r\n\r\nhi\r\n"
    )
    emulator.deliver(ME, raw)
    message = await ok(call, runtime, "mg_get_message", account="o", message_id="jwz-nsb@example.org")
    assert message["from"] == {"name": "Nathaniel Borenstein", "address": None}
    assert message["to"] == [
        {"name": "Nathaniel Borenstein", "address": None},
        {"name": "Bob", "address": "bob@example.org"},
    ]
