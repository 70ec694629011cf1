"""mg_get_thread with `bodies`: the bodies of a whole thread in one call, a fixed number of commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.gmail import imap
from mcp_multi_gmail.gmail.connections import Searches
from mcp_multi_gmail.mail.read import messages as read
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

BOX = "osobni@example.cz"
PROCESSED = "Asistent"
BODY_KEYS = {
    "body_format",
    "body",
    "body_offset",
    "body_total_length",
    "body_truncated",
    "hidden_text_chars",
    "attachments",
}


def thread_message(index: int, body: str, *, attachment: bytes | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"Karel {index} <karel{index}@example.org>"
    msg["To"] = BOX
    msg["Subject"] = "Re: Rozpočet" if index else "Rozpočet"
    msg["Message-ID"] = f"<rozpocet-{index}@example.org>"
    msg["Date"] = f"Mon, 30 Nov 2026 08:{index:02d}:00 +0000"
    if index:
        msg["In-Reply-To"] = "<rozpocet-0@example.org>"
        msg["References"] = "<rozpocet-0@example.org>"
    msg.set_content(body)
    if attachment is not None:
        msg.add_attachment(attachment, maintype="application", subtype="pdf", filename="rozpocet.pdf")
    return msg.as_bytes()


def deliver_thread(emulator: GmailEmulator, bodies: list[str]) -> str:
    for index, body in enumerate(bodies):
        emulator.deliver(BOX, thread_message(index, body))
    [first] = [m for m in emulator.messages(BOX) if m.header_id == "rozpocet-0@example.org"]
    assert {m.thrid for m in emulator.messages(BOX)} == {first.thrid}
    return str(first.thrid)


@pytest.fixture
def runtime(write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]) -> Runtime:
    return make_runtime(
        write_config([{"name": "o", "address": BOX, "password": "osobniheslohesla", "processed_label": PROCESSED}])
    )


async def test_bodies_all_unprocessed_and_none(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    texts = [f"Zpráva číslo {i}: příliš žluťoučký kůň.\n" for i in range(3)]
    thread = deliver_thread(emulator, texts)
    emulator.add_labels(BOX, "rozpocet-0@example.org", [PROCESSED])

    plain = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread)
    assert all(not BODY_KEYS & set(m) for m in plain["messages"])
    assert "body_budget_exhausted" not in plain

    every = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all")
    assert [m["body"] for m in every["messages"]] == texts
    for m in every["messages"]:
        assert m["body_format"] == "text" and m["body_offset"] == 0
        assert m["body_total_length"] == len(m["body"]) and m["body_truncated"] is False
        assert m["attachments"] == []
    assert every["body_budget_exhausted"] is False

    fresh = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="unprocessed")
    first, *rest = fresh["messages"]
    assert first["processed"] is True and not BODY_KEYS & set(first)
    assert [m["body"] for m in rest] == texts[1:]

    short = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all", max_body_length=7)
    assert [m["body"] for m in short["messages"]] == [t[:7] for t in texts]
    assert all(m["body_truncated"] is True for m in short["messages"])
    assert all("\\Seen" not in m.flags for m in emulator.messages(BOX)), "reading must never set \\Seen"


async def test_mixed_structures_each_get_their_own_text_part(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.deliver(BOX, thread_message(0, "Jen text.\n"))
    emulator.deliver(BOX, thread_message(1, "Text s přílohou.\n", attachment=b"%PDF-1.4 " + b"x" * 50_000))
    thread = str(emulator.messages(BOX)[0].thrid)
    data = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all")
    plain, attached = data["messages"]
    assert plain["body"] == "Jen text.\n" and plain["attachments"] == []
    assert attached["body"] == "Text s přílohou.\n"
    [pdf] = attached["attachments"]
    assert pdf["filename"] == "rozpocet.pdf" and pdf["mime_type"] == "application/pdf"
    assert [m["preview"] for m in data["messages"]] == ["Jen text.", "Text s přílohou."]
    sent = emulator.observer.wire_bytes("s", "imap")
    assert sent < 20_000, f"the attachment must not travel: {sent} bytes"


async def test_html_only_body_comes_as_mg_get_message_gives_it(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    msg = EmailMessage()
    msg["From"] = "Newsletter <news@example.org>"
    msg["To"] = BOX
    msg["Subject"] = "Novinky"
    msg["Message-ID"] = "<novinky@example.org>"
    msg.set_content('<p>Dobrý den,</p><p style="display:none">skryto</p><p>nabídka platí.</p>', subtype="html")
    emulator.deliver(BOX, msg.as_bytes())
    thread = str(emulator.messages(BOX)[0].thrid)
    data = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all")
    [message] = data["messages"]
    single = await ok(call, runtime, "mg_get_message", account="o", message_id="novinky@example.org")
    assert message["body_format"] == "html_as_text" == single["body_format"]
    assert message["body"] == single["body"] and "nabídka platí" in message["body"] and "skryto" not in message["body"]
    assert message["hidden_text_chars"] == single["hidden_text_chars"] > 0


async def _commands_for(emulator: GmailEmulator, runtime: Runtime, call: Call, count: int) -> list[str]:
    emulator.reset()
    emulator.add_account(BOX, "osobniheslohesla")
    runtime.connections.special_folders.clear()
    thread = deliver_thread(emulator, [f"Tělo zprávy {i}.\n" for i in range(count)])
    data = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all")
    assert len(data["messages"]) == count and all(m["body"] for m in data["messages"])
    await imap.finish_logouts()
    return [c.name for c in emulator.commands(BOX)]


async def test_command_count_does_not_grow_with_the_thread(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    two = await _commands_for(emulator, runtime, call, 2)
    twenty = await _commands_for(emulator, runtime, call, read.TEXTS_AHEAD_MESSAGES)
    assert two == twenty
    # The summaries with structures and every text part (part 1 of a plain message) in one FETCH.
    assert two.count("UID FETCH") == 1, two
    # Beyond TEXTS_AHEAD_MESSAGES the text parts have a FETCH of their own, whatever the length.
    more = await _commands_for(emulator, runtime, call, read.TEXTS_AHEAD_MESSAGES + 1)
    assert more.count("UID FETCH") == 2 and len(more) == len(two) + 1, more


def compact_size(data: dict[str, object]) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


async def test_the_budget_pages_the_messages(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    size = 15_000
    texts = [(f"{i:02d}" + "abcdefghij" * (size // 10))[: size - 1] + "\n" for i in range(20)]
    thread = deliver_thread(emulator, texts)
    args = {"account": "o", "thread_id": thread, "bodies": "all", "max_body_length": size}
    first = await ok(call, runtime, "mg_get_thread", **args)
    assert first["page_budget_exhausted"] is True and first["next_page_token"]
    assert first["message_count"] == 20 and 1 <= len(first["messages"]) < 20
    # Page after page: every message once, oldest first, each body whole, each page within 40 000.
    pages, bodies = [first], [m["body"] for m in first["messages"]]
    while pages[-1]["next_page_token"]:
        page = await ok(call, runtime, "mg_get_thread", **args, page_token=pages[-1]["next_page_token"])
        pages.append(page)
        bodies.extend(m["body"] for m in page["messages"])
    assert bodies == texts
    assert all(compact_size(p) <= 40_000 and p["body_budget_exhausted"] is False for p in pages)
    assert pages[-1]["page_budget_exhausted"] is False
    # A token of another call is refused rather than guessed at.
    other = await error(
        call, runtime, "mg_get_thread", **{**args, "max_body_length": 100}, page_token=first["next_page_token"]
    )
    assert other["code"] == "invalid_input"
    # Without the budget pressure the same thread comes whole.
    small = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all", max_body_length=500)
    assert small["body_budget_exhausted"] is False and small["next_page_token"] is None
    assert [m["body"] for m in small["messages"]] == [t[:500] for t in texts]


async def test_a_body_too_long_for_the_budget_is_cut(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    # Quotes take two characters in JSON: 30 000 of them cannot come whole within 40 000.
    text = '"' * 30_000
    thread = deliver_thread(emulator, [text])
    data = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies="all", max_body_length=30_000)
    [message] = data["messages"]
    assert data["body_budget_exhausted"] is True and data["next_page_token"] is None
    assert message["body_truncated"] is True and 0 < len(message["body"]) < 20_000 and compact_size(data) <= 40_000
    rest = await ok(
        call,
        runtime,
        "mg_get_message",
        account="o",
        message_id="rozpocet-0@example.org",
        body_offset=len(message["body"]),
        max_body_length=30_000,
    )
    assert rest["body_offset"] == len(message["body"]) and rest["body"].startswith('"')


@pytest.mark.parametrize("value", ["ALL", "", "some", "none "])
async def test_bodies_refuses_other_values(emulator: GmailEmulator, runtime: Runtime, call: Call, value: str) -> None:
    thread = deliver_thread(emulator, ["Ahoj.\n"])
    emulator.reset_counters()
    body = await error(call, runtime, "mg_get_thread", account="o", thread_id=thread, bodies=value)
    assert body["code"] == "invalid_input" and "unprocessed" in body["message"]
    assert emulator.commands(BOX) == [], "a refused argument never reaches Gmail"


async def _page_commands(
    emulator: GmailEmulator, runtime: Runtime, call: Call, **args: object
) -> tuple[dict[str, Any], list[str]]:
    """One mg_get_thread call and the IMAP commands it sent, LOGOUT included."""
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_get_thread", **args)
    await imap.finish_logouts()
    return data, [c.name for c in emulator.commands(BOX)]


async def test_a_continuation_searches_again_only_when_all_mail_changed(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    texts = [f"{i:02d}" + "x" * 14_997 + "\n" for i in range(6)]  # two messages a page
    thread = deliver_thread(emulator, texts)
    args = {"account": "o", "thread_id": thread, "bodies": "all", "max_body_length": 15_000}
    first, _ = await _page_commands(emulator, runtime, call, **args)
    # Nothing changed since page 1: the thread's UIDs are known, no SEARCH; one FETCH brings all.
    second, sent = await _page_commands(emulator, runtime, call, **args, page_token=first["next_page_token"])
    assert sent == ["LOGIN", "EXAMINE", "UID FETCH", "LOGOUT"]
    runtime.connections.searches = Searches()  # a server that never saw the thread answers the same
    fresh, sent = await _page_commands(emulator, runtime, call, **args, page_token=first["next_page_token"])
    assert fresh == second and "UID SEARCH" in sent
    # A reply arrives in the thread and the oldest message goes to the Trash between two pages:
    # the next page searches again and counts both changes.
    emulator.deliver(BOX, thread_message(6, "Nová odpověď.\n"))
    await ok(call, runtime, "mg_trash_message", account="o", message_id="rozpocet-0@example.org")
    third, sent = await _page_commands(emulator, runtime, call, **args, page_token=second["next_page_token"])
    assert "UID SEARCH" in sent and third["message_count"] == 6
    rest = [third]
    while rest[-1]["next_page_token"]:
        rest.append((await _page_commands(emulator, runtime, call, **args, page_token=rest[-1]["next_page_token"]))[0])
    assert [m["body"] for page in rest for m in page["messages"]] == [*texts[4:], "Nová odpověď.\n"]


def _mixed(subject: str, plain: str, html: str) -> bytes:
    """multipart/mixed(multipart/alternative(plain, html), pdf): the text is part 1.1, not 1."""
    msg = EmailMessage()
    msg["From"] = "Karel <karel@example.org>"
    msg["To"] = BOX
    msg["Subject"] = subject
    msg["Message-ID"] = "<smisena@example.org>"
    msg["In-Reply-To"] = msg["References"] = "<rozpocet-0@example.org>"
    msg.set_content(plain)
    msg.add_alternative(html, subtype="html")
    msg.add_attachment(b"%PDF-1.4 " * 4000, maintype="application", subtype="pdf", filename="p.pdf")
    return msg.as_bytes()


async def test_texts_that_are_not_part_1_or_too_long_are_read_as_mg_get_message_reads_them(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    long_text = "Dlouhý text. " * 2_000 + "\n"  # longer than what comes with the summaries
    thread = deliver_thread(emulator, ["Krátký text.\n", long_text])
    emulator.deliver(BOX, _mixed("Re: Rozpočet", "Text vedle HTML.\n", "<p>Text vedle HTML.</p>"))
    assert {m.thrid for m in emulator.messages(BOX)} == {int(thread)}
    args = {"account": "o", "thread_id": thread, "bodies": "all", "max_body_length": 30_000}
    data, sent = await _page_commands(emulator, runtime, call, **args)
    # The summaries with part 1 of each, then part 1 of the long one whole, then part 1.1 of the mixed one.
    assert sent.count("UID FETCH") == 3, sent
    for message in data["messages"]:
        single = await ok(
            call, runtime, "mg_get_message", account="o", message_id=message["message_id"], max_body_length=30_000
        )
        assert message["body"] == single["body"] and message["attachments"] == single["attachments"]
    assert [m["body"] for m in data["messages"]][:2] == ["Krátký text.\n", long_text]
    assert emulator.observer.wire_bytes("s", "imap") < 120_000, "the PDF must not travel"


async def test_a_refused_fetch_of_the_texts_ahead_is_asked_again_without_them(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    thread = deliver_thread(emulator, ["Jedna.\n", "Dvě.\n"])
    emulator.add_fault(FaultRule("no:Some messages could not be FETCHed (Failure)", match="FETCH"))
    data, sent = await _page_commands(emulator, runtime, call, account="o", thread_id=thread, bodies="all")
    assert [m["body"] for m in data["messages"]] == ["Jedna.\n", "Dvě.\n"]
    assert sent.count("UID FETCH") == 3, sent  # refused, the summaries alone, the texts
