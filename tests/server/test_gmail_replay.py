"""Whole recorded Gmail sessions replayed to our client over TLS (tests/support/replay.py).

mg_get_message and mg_get_attachment run against the bytes imap.gmail.com served in MailKit's 2014
session and in rsc's 2011 session. The expected content comes from the recorded whole message,
decoded independently with the standard library's email package.
"""

from __future__ import annotations

import email
import email.message
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, ok

from mcp_multi_gmail.runtime import Runtime
from support import load_runtime
from support.replay import ReplayServer, Session, mailkit_2014, rsc_2011, section_of

pytestmark = pytest.mark.anyio

# The 2014 messages Gmail was recorded serving whole (BODY[]).
WHOLE_2014 = [3, 5, 7, 12, 13, 14, 26, 27, 28, 34, 43]


@pytest.fixture
def replay(
    tmp_path: Path, write_config: Callable[..., Path]
) -> Iterator[Callable[[Session], tuple[Runtime, ReplayServer]]]:
    servers: list[ReplayServer] = []

    def start(session: Session) -> tuple[Runtime, ReplayServer]:
        server = ReplayServer(session).start(tmp_path)
        servers.append(server)
        path = write_config(
            [{"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}],
            download_dir=str(tmp_path / "downloads"),
        )
        return load_runtime(path, server.env(), state_dir=tmp_path / "state"), server

    yield start
    for server in servers:
        server.stop()


def oracle(whole: bytes) -> list[email.message.Message]:
    """The leaves of a recorded message as the standard library reads them (part order = IMAP's)."""
    leaves: list[email.message.Message] = []

    def walk(node: email.message.Message) -> None:
        if node.is_multipart() and node.get_content_maintype() == "multipart":
            for child in node.get_payload():
                assert isinstance(child, email.message.Message)
                walk(child)
        else:
            leaves.append(node)

    walk(email.message_from_bytes(whole))
    return leaves


async def test_every_replayed_2014_message_shows_its_content(
    replay: Callable[[Session], tuple[Runtime, ReplayServer]], call: Call
) -> None:
    session = mailkit_2014(WHOLE_2014)
    runtime, server = replay(session)
    shown: dict[int, dict[str, Any]] = {}
    for message in session.messages:
        shown[message.uid] = await ok(call, runtime, "mg_get_message", account="osobni", message_id=message.message_id)
    assert server.unexpected == []
    for uid, data in shown.items():
        assert data["body"] or data["attachments"], uid
        assert "\ufffd" not in (data["body"] or ""), uid
    # Before the change, UIDs 27 (a nameless GIF) and 43 (richtext and GIFs) showed nothing at all.
    assert shown[27]["body"] is None
    assert [
        (a["attachment_id"], a["filename"], a["mime_type"], a["filename_generated"]) for a in shown[27]["attachments"]
    ] == [("1", "part-1.gif", "image/gif", True)]
    assert shown[43]["body"].startswith("I will show you how the Metamail and MMS is used in my news&mail reader (VIN)")
    assert [a["attachment_id"] for a in shown[43]["attachments"]] == ["2", "3", "4", "5", "6", "7"]
    assert [a["filename"] for a in shown[5]["attachments"]] == ["part-2.eml", "part-3.rtx"]


@pytest.mark.parametrize(("uid", "word"), [(7, "神戸"), (14, "情報数理")])
async def test_utf8_labelled_iso_2022_jp_reads_without_replacement_characters(
    replay: Callable[[Session], tuple[Runtime, ReplayServer]], call: Call, uid: int, word: str
) -> None:
    session = mailkit_2014([uid])
    runtime, _server = replay(session)
    (message,) = session.messages
    data = await ok(call, runtime, "mg_get_message", account="osobni", message_id=message.message_id)
    assert data["charset_used"] == "utf-8"
    assert word in data["body"] and "\ufffd" not in data["body"]
    assert message.whole is not None
    assert data["body"] == section_of(message.whole, "1").decode("utf-8").replace("\r\n", "\n")


@pytest.mark.parametrize(
    ("uid", "part_id", "name"), [(27, "1", "part-1.gif"), (43, "4", "part-4.gif"), (34, "2", "part-2.gif")]
)
async def test_a_nameless_image_is_saved_from_the_listing(
    replay: Callable[[Session], tuple[Runtime, ReplayServer]], call: Call, uid: int, part_id: str, name: str
) -> None:
    session = mailkit_2014([uid])
    runtime, _server = replay(session)
    (message,) = session.messages
    listed = await ok(call, runtime, "mg_get_message", account="osobni", message_id=message.message_id)
    entry = next(a for a in listed["attachments"] if a["attachment_id"] == part_id)
    saved = await ok(
        call,
        runtime,
        "mg_get_attachment",
        account="osobni",
        message_id=message.message_id,
        attachment_id=entry["attachment_id"],
    )
    assert saved["filename"] == entry["filename"] == name
    data = Path(saved["path"]).read_bytes()
    assert message.whole is not None
    expected = oracle(message.whole)[int(part_id.split(".")[-1]) - 1].get_payload(decode=True)
    assert data == expected and data.startswith(b"GIF8") and saved["size_bytes"] == len(data)


async def test_a_forwarded_message_without_a_name_is_saved_whole(
    replay: Callable[[Session], tuple[Runtime, ReplayServer]], call: Call
) -> None:
    session = mailkit_2014([5])
    runtime, _server = replay(session)
    (message,) = session.messages
    saved = await ok(
        call, runtime, "mg_get_attachment", account="osobni", message_id=message.message_id, attachment_id="2"
    )
    assert saved["filename"] == "part-2.eml" and saved["mime_type"] == "message/rfc822"
    assert message.whole is not None
    assert Path(saved["path"]).read_bytes() == section_of(message.whole, "2")
    assert saved["size_bytes"] == 22436  # the size in Gmail's BODYSTRUCTURE


async def test_the_2011_session_reads_the_recorded_body_part(
    replay: Callable[[Session], tuple[Runtime, ReplayServer]], call: Call
) -> None:
    session = rsc_2011()
    runtime, server = replay(session)
    (message,) = session.messages
    data = await ok(call, runtime, "mg_get_message", account="osobni", message_id=message.message_id)
    assert server.unexpected == []
    # BODY[1] is answered with the recorded bytes themselves, not cut from BODY[].
    assert data["body"] == message.sections["1"].decode("iso-8859-1").replace("\r\n", "\n")
    assert data["charset_used"] == "iso-8859-1" and data["body_format"] == "text"
    assert data["subject"] == "You have no events scheduled today."
    assert data["attachments"] == []


async def test_a_replayed_thread_reads_the_same_body(
    replay: Callable[[Session], tuple[Runtime, ReplayServer]], call: Call
) -> None:
    session = rsc_2011()
    runtime, server = replay(session)
    (message,) = session.messages
    data = await ok(call, runtime, "mg_get_thread", account="osobni", thread_id=str(message.thread_id), bodies="all")
    assert server.unexpected == []
    (shown,) = data["messages"]
    assert shown["body"] == message.sections["1"].decode("iso-8859-1").replace("\r\n", "\n")
    assert shown["charset_used"] == "iso-8859-1"
    assert data["thread_id"] == "1382192619814696847" and data["message_count"] == 1  # Gmail's recorded X-GM-THRID
