"""Names and transfer encodings as a person would read them, through the server against the
emulator over TLS (issue 33): a raw UTF-8 file name a client cut inside its last character, and
parts labelled base64 or quoted-printable whose content is ordinary text."""

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

ADDRESS = "osobni@example.cz"
NAME = "Картинка с котиком на море.jpg"
CUT = NAME.encode()[:29]  # a client's fixed byte count: inside the "к" after "коти"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
WORDS = "Dobrý den, posílám slíbený přehled za říjen a listopad. Ozvěte se, prosím."


def message(message_id: str, content_type: bytes, body: bytes, extra: bytes = b"") -> bytes:
    return (
        b"From: Karel <karel@example.org>\r\nTo: " + ADDRESS.encode() + b"\r\nSubject: Podklady\r\n"
        b"Date: Mon, 30 Nov 2026 08:00:00 +0000\r\nMessage-ID: <" + message_id.encode() + b">\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: " + content_type + b"\r\n" + extra + b"\r\n" + body
    )


def with_attachment(message_id: str, header: bytes, content: bytes) -> bytes:
    body = (
        b"--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nviz p\xc5\x99\xc3\xadloha\r\n"
        b"--b\r\n" + header + b"\r\n\r\n" + content + b"\r\n--b--\r\n"
    )
    return message(message_id, b'multipart/mixed; boundary="b"', body)


def cut_name(message_id: str) -> bytes:
    """The image's name raw in both parameters, cut at 29 bytes: the way such clients write it."""
    header = (
        b'Content-Type: image/jpeg; name="' + CUT + b'"\r\nContent-Disposition: attachment; filename="' + CUT + b'"\r\n'
        b"Content-Transfer-Encoding: base64"
    )
    return with_attachment(message_id, header, base64.encodebytes(JPEG).strip())


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], tmp_path: Path
) -> Runtime:
    return make_runtime(
        write_config(
            [{"name": "o", "address": ADDRESS, "password": "osobniheslohesla"}], download_dir=str(tmp_path / "dl")
        )
    )


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("param_8bit", ["as_sent", "utf8_replaced"])
async def test_a_utf8_name_cut_inside_a_character_is_listed_and_saved_in_cyrillic(
    emulator: GmailEmulator, runtime: Runtime, call: Call, param_8bit: str
) -> None:
    emulator.set_knobs(param_8bit=param_8bit)  # BEHAVIOURS.md: how Gmail serves 8-bit values is not known
    emulator.deliver(ADDRESS, cut_name("cut-name@example.org"))
    shown = await ok(call, runtime, "mg_get_message", account="o", message_id="cut-name@example.org")
    [listed] = shown["attachments"]
    assert listed["filename"] == "Картинка с коти" and not listed["filename_generated"]
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=shown["thread_id"], bodies="all")
    assert thread["messages"][0]["attachments"] == shown["attachments"]
    saved = await ok(
        call, runtime, "mg_get_attachment", account="o", message_id="cut-name@example.org", attachment_id="2"
    )
    assert saved["filename"] == "Картинка с коти" and saved["decoded"] is True
    assert Path(saved["path"]).name == "Картинка с коти" and Path(saved["path"]).read_bytes() == JPEG


async def test_a_latin1_name_stays_latin1(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    header = b'Content-Type: application/pdf; name="Smlouva Jos\xe9"\r\nContent-Disposition: attachment'
    emulator.deliver(ADDRESS, with_attachment("latin1-name@example.org", header, b"%PDF-1.4"))
    shown = await ok(call, runtime, "mg_get_message", account="o", message_id="latin1-name@example.org")
    assert [a["filename"] for a in shown["attachments"]] == ["Smlouva José"]


# ------------------------------------------------------------------ labels the content cannot have


def words_as_base64(message_id: str, text: str = WORDS) -> bytes:
    body = "\r\n".join([text] * 12).encode() + b"\r\n"
    return message(message_id, b"text/plain; charset=utf-8", body, b"Content-Transfer-Encoding: base64\r\n")


async def test_words_labelled_base64_are_shown_as_words_and_the_result_says_so(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.deliver(ADDRESS, words_as_base64("words-b64@example.org"))
    shown = await ok(call, runtime, "mg_get_message", account="o", message_id="words-b64@example.org")
    assert shown["body"].startswith(WORDS) and "\ufffd" not in shown["body"]
    assert shown["transfer_encoding_ignored"] == "base64" and shown["charset_used"] == "utf-8"
    thread_id = shown["thread_id"]
    full = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread_id, bodies="all")
    [message_shown] = full["messages"]
    assert message_shown["body"] == shown["body"] and message_shown["transfer_encoding_ignored"] == "base64"
    assert message_shown["preview"].startswith("Dobrý den, posílám")
    bare = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread_id)
    assert bare["messages"][0]["preview"].startswith("Dobrý den, posílám")  # from the part's beginning
    assert "transfer_encoding_ignored" not in bare["messages"][0]  # a body field: only with bodies


async def test_real_base64_says_nothing_was_ignored(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    body = base64.encodebytes(WORDS.encode()).replace(b"\n", b"\r\n")
    raw = message("real-b64@example.org", b"text/plain; charset=utf-8", body, b"Content-Transfer-Encoding: base64\r\n")
    emulator.deliver(ADDRESS, raw)
    shown = await ok(call, runtime, "mg_get_message", account="o", message_id="real-b64@example.org")
    assert shown["body"] == WORDS and shown["transfer_encoding_ignored"] is None


async def test_a_long_mislabelled_part_reads_as_words_in_a_later_window(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    lines = [f"{n:06d} {WORDS}" for n in range(SLICE_BYTES // 80 + 4000)]  # past the first slice
    body = "\r\n".join(lines).encode()
    assert len(body) > SLICE_BYTES + 200_000
    raw = message("long-b64@example.org", b"text/plain; charset=utf-8", body, b"Content-Transfer-Encoding: base64\r\n")
    emulator.deliver(ADDRESS, raw)
    text = "\n".join(lines)
    offset = len(text) - 3000  # a window the second slice holds
    shown = await ok(
        call, runtime, "mg_get_message", account="o", message_id="long-b64@example.org",
        body_offset=offset, max_body_length=500,
    )  # fmt: skip
    assert shown["body"] == text[offset : offset + 500] and shown["transfer_encoding_ignored"] == "base64"


async def test_raw_html_labelled_quoted_printable_is_not_decoded_into_junk(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    html = (
        '<html><body><p style="color:#333" class="intro">' + WORDS + "</p>"
        '<table width=100 bgcolor=FFFFFF><tr><td align="left">Celkem</td></tr></table></body></html>'
    )
    raw = message(
        "raw-html@example.org",
        b"text/html; charset=utf-8",
        html.encode(),
        b"Content-Transfer-Encoding: quoted-printable\r\n",
    )
    emulator.deliver(ADDRESS, raw)
    shown = await ok(call, runtime, "mg_get_message", account="o", message_id="raw-html@example.org")
    assert shown["body_format"] == "html_as_text" and shown["transfer_encoding_ignored"] == "quoted-printable"
    assert WORDS in shown["body"] and "\ufffd" not in shown["body"]
    exact = await ok(call, runtime, "mg_get_message", account="o", message_id="raw-html@example.org", raw_html=True)
    assert exact["body"] == html  # width=100 and bgcolor=FFFFFF as written, not 0x10 and 0xFF


@pytest.mark.parametrize(
    ("mime_type", "content"),
    [("text/plain", WORDS.encode()), ("image/jpeg", b"... the picture goes here ...")],
    ids=["text", "image"],
)
async def test_an_attachment_labelled_base64_that_is_not_is_saved_as_it_came(
    emulator: GmailEmulator, runtime: Runtime, call: Call, mime_type: str, content: bytes
) -> None:
    header = (
        b"Content-Type: " + mime_type.encode() + b'; name="priloha"\r\nContent-Disposition: attachment\r\n'
        b"Content-Transfer-Encoding: base64"
    )
    emulator.deliver(ADDRESS, with_attachment("file-b64@example.org", header, content))
    saved = await ok(
        call, runtime, "mg_get_attachment", account="o", message_id="file-b64@example.org", attachment_id="2"
    )
    assert saved["decoded"] is False and saved["transfer_encoding"] == "base64"
    assert Path(saved["path"]).read_bytes() == content and saved["size_bytes"] == len(content)
