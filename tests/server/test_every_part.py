"""Every part of a message is reachable, against the emulator over TLS: the shapes recorded from real
Gmail (tests/gmail_recordings) built as MIME messages the emulator describes as Gmail does."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.bodystream import SLICE_BYTES
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

GIF = (  # a 1x1 GIF
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00"
    b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)


def raw_message(message_id: str, content_type: str, body: bytes) -> bytes:
    return (
        b"From: Karel <karel@example.org>\r\nTo: jana.novakova@example.cz\r\nSubject: parts\r\n"
        b"Date: Mon, 30 Nov 2026 08:00:00 +0000\r\nMessage-ID: <" + message_id.encode() + b">\r\n"
        b"MIME-Version: 1.0\r\n" + content_type.encode() + b"\r\n" + body
    )


def nameless_parts(message_id: str) -> bytes:
    """Text, then a nameless GIF and a nameless octet-stream: no name, no disposition."""
    encoded = base64.encodebytes(GIF).replace(b"\n", b"\r\n")
    body = (
        b"\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nviz obr\xc3\xa1zek\r\n"
        b"--b\r\nContent-Type: image/gif\r\nContent-Transfer-Encoding: base64\r\n\r\n" + encoded + b"--b\r\n"
        b"Content-Type: application/octet-stream\r\n\r\nraw bytes\r\n--b--\r\n"
    )
    return raw_message(message_id, 'Content-Type: multipart/mixed; boundary="b"\r\n', body)


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], tmp_path: Path
) -> Runtime:
    return make_runtime(
        write_config(
            [{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}],
            download_dir=str(tmp_path / "dl"),
        )
    )


async def test_nameless_parts_are_listed_and_saved_by_their_generated_names(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.deliver("osobni@example.cz", nameless_parts("parts@example.org"))
    data = await ok(call, runtime, "mg_get_message", account="o", message_id="parts@example.org")
    assert data["body"] == "viz obrázek"  # the CRLF before a boundary belongs to the boundary
    listed = [(a["attachment_id"], a["filename"], a["mime_type"], a["filename_generated"]) for a in data["attachments"]]
    assert listed == [("2", "part-2.gif", "image/gif", True), ("3", "part-3.bin", "application/octet-stream", True)]
    gif = await ok(call, runtime, "mg_get_attachment", account="o", message_id="parts@example.org", attachment_id="2")
    assert gif["filename"] == "part-2.gif" and Path(gif["path"]).read_bytes() == GIF
    other = await ok(call, runtime, "mg_get_attachment", account="o", message_id="parts@example.org", attachment_id="3")
    assert Path(other["path"]).read_bytes() == b"raw bytes"


async def test_a_thread_lists_the_same_generated_names(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    emulator.deliver("osobni@example.cz", nameless_parts("thread-parts@example.org"))
    message = await ok(call, runtime, "mg_get_message", account="o", message_id="thread-parts@example.org")
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=message["thread_id"], bodies="all")
    (shown,) = thread["messages"]
    assert shown["attachments"] == message["attachments"]
    assert shown["charset_used"] == message["charset_used"] == "utf-8"


async def test_an_enriched_only_message_has_a_body(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    body = b"Dear <bold>Jana</bold>,\r\n\r\nthe <<price> is <italic>low</italic>.<param>x</param>\r\n"
    emulator.deliver("osobni@example.cz", raw_message("rich@example.org", "Content-Type: text/enriched\r\n", body))
    data = await ok(call, runtime, "mg_get_message", account="o", message_id="rich@example.org")
    assert data["body_format"] == "text" and data["attachments"] == []
    assert data["body"] == "Dear Jana,\nthe <price> is low."


async def test_a_long_utf8_body_labelled_iso_2022_jp_is_read_in_slices_without_replacement(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # Plain ASCII first (the first slice cannot tell the charsets apart), Japanese after 1 MiB.
    text = "a" * (SLICE_BYTES + 1000) + "\n" + "日本語のテキスト。\n" * 2000
    body = text.replace("\n", "\r\n").encode("utf-8")
    raw = raw_message("long-jp@example.org", "Content-Type: text/plain; charset=ISO-2022-JP\r\n", body)
    emulator.deliver("osobni@example.cz", raw)
    offset = SLICE_BYTES + 1001
    data = await ok(
        call,
        runtime,
        "mg_get_message",
        account="o",
        message_id="long-jp@example.org",
        body_offset=offset,
        max_body_length=90,
    )
    assert data["charset_used"] == "utf-8"
    assert data["body"] == text[offset : offset + 90] and "\ufffd" not in data["body"]
