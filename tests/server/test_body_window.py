"""A window of a long body is read in slices (BODY.PEEK[part]<start.length>), never whole."""

from __future__ import annotations

from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail import bodystream
from mcp_multi_gmail.mail.read import messages as read
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

SLICE = 8192  # small slices keep the test fast; the server uses 1 MiB


def _long_message(text: str, cte: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Karel <karel@example.org>"
    msg["To"] = "osobni@example.cz"
    msg["Subject"] = "Dlouhý dopis"
    msg["Message-ID"] = "<dlouhy-dopis@example.org>"
    msg["Date"] = "Mon, 30 Nov 2026 08:00:00 +0000"
    msg.set_content(text, charset="utf-8", cte=cte)
    return msg


def _body_fetches(emulator: GmailEmulator) -> list[str]:
    commands = emulator.commands("osobni@example.cz")
    return [c.line for c in commands if c.name == "UID FETCH" and "BODY.PEEK[1]" in c.line]


@pytest.mark.parametrize("cte", ["base64", "quoted-printable"])
async def test_windows_of_a_long_body_come_from_slices(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    monkeypatch: pytest.MonkeyPatch,
    cte: str,
) -> None:
    monkeypatch.setattr(bodystream, "SLICE_BYTES", SLICE)
    monkeypatch.setattr(read, "SLICE_BYTES", SLICE)
    text = "".join(f"{i:05d} Příliš žluťoučký kůň úpěl ďábelské ódy.\n" for i in range(2500))
    emulator.deliver("osobni@example.cz", _long_message(text, cte))
    account = {"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}
    runtime = make_runtime(write_config([account]))
    get = {"account": "o", "message_id": "dlouhy-dopis@example.org"}

    emulator.reset_counters()
    first = await ok(call, runtime, "mg_get_message", **get, max_body_length=500)
    assert first["body"] == text[:500] and first["body_offset"] == 0 and first["body_truncated"] is True
    # Read only as far as the window: the length is an estimate from the encoded size, close to the truth.
    assert first["body_total_length"] > 500 and abs(first["body_total_length"] - len(text)) < len(text) * 0.1
    [only] = _body_fetches(emulator)  # one slice covers the window
    assert only.endswith(f"(BODY.PEEK[1]<0.{SLICE}>)")

    middle = await ok(call, runtime, "mg_get_message", **get, body_offset=60_000, max_body_length=3000)
    assert middle["body"] == text[60_000:63_000] and middle["body_truncated"] is True

    emulator.reset_counters()
    tail = await ok(call, runtime, "mg_get_message", **get, body_offset=len(text) - 100)
    assert tail["body"] == text[-100:] and tail["body_truncated"] is False
    assert tail["body_total_length"] == len(text)  # read to the end: exact
    fetches = _body_fetches(emulator)
    assert fetches and all("<" in line for line in fetches)  # every read a slice, never the whole part

    beyond = await ok(call, runtime, "mg_get_message", **get, body_offset=len(text) + 5)
    assert beyond["body"] == "" and beyond["body_offset"] == len(text) and beyond["body_total_length"] == len(text)


async def test_a_long_html_body_is_converted_from_a_bounded_beginning(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bodystream, "SLICE_BYTES", SLICE)
    monkeypatch.setattr(read, "SLICE_BYTES", SLICE)
    monkeypatch.setattr(read, "HTML_READ_LIMIT", 20_000)
    paragraphs = [f"Odstavec {i}: žluťoučký kůň." for i in range(3000)]
    msg = _long_message("", "base64")
    msg.set_content("".join(f"<p>{p}</p>\n" for p in paragraphs), subtype="html", charset="utf-8", cte="base64")
    emulator.deliver("osobni@example.cz", msg)
    account = {"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}
    runtime = make_runtime(write_config([account]))
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_get_message", account="o", message_id="dlouhy-dopis@example.org")
    assert data["body_format"] == "html_as_text" and data["body_truncated"] is True
    assert data["body"].startswith(paragraphs[0]) and paragraphs[100] in data["body"]
    fetches = _body_fetches(emulator)
    assert 1 <= len(fetches) <= 4 and all("<" in line for line in fetches)  # a bounded beginning only
