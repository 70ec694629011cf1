"""No silent cut (issue 33): what a result leaves out is named in its `cut`, with the true total,
and every attachment can be reached.

The messages are built with Python's own `email` package, as the issue describes them: 328
`text/plain` attachments, each named and `Content-Disposition: attachment`; an announcement to
2,000 people in To and 1,000 in Cc. Each is built once per process and delivered per test.
"""

from __future__ import annotations

import functools
import hashlib
import json
from email import message_from_bytes, policy
from email.message import EmailMessage, Message
from email.utils import formataddr
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

JANA = "jana.novakova@example.cz"
FILES = 328
FILES_ID = "priloh-328@example.cz"
WIDE_ID = "oznameni-3000@example.cz"
TO, CC = 2_000, 1_000
BUDGET = 40_000


@functools.cache
def many_files() -> bytes:
    msg = EmailMessage()
    msg["From"] = "Karel <karel@example.org>"
    msg["To"] = JANA
    msg["Subject"] = "328 souborů"
    msg["Message-ID"] = f"<{FILES_ID}>"
    msg["Date"] = "Mon, 30 Nov 2026 08:00:00 +0000"
    msg.set_content("V příloze je 328 souborů.\n")
    for index in range(1, FILES + 1):
        msg.add_attachment(f"Obsah souboru číslo {index}.\n", filename=f"soubor-{index:03d}.txt")
    return msg.as_bytes(policy=policy.SMTP)  # CRLF, as mail travels


@functools.cache
def announcement() -> bytes:
    # Each address written by the email package (formataddr: the name as an RFC 2047 word), the
    # list folded one address a line; compat32 sends the ASCII header as it is (the default
    # policy's own parse and refold of 3,000 addresses takes seconds).
    def people(role: str, mailbox: str, count: int) -> str:
        return ",\r\n ".join(formataddr((f"{role} {i}", mailbox.format(i)), charset="utf-8") for i in range(count))

    msg = Message()
    msg["From"] = formataddr(("Vedení", "vedeni@firma.example.cz"), charset="utf-8")
    msg["To"] = people("Zaměstnanec", "zamestnanec.{}@firma.example.cz", TO)
    msg["Cc"] = people("Externista", "externista.{}@partner.example.cz", CC)
    msg["Subject"] = "Oznámení pro všechny"
    msg["Message-ID"] = f"<{WIDE_ID}>"
    msg["Date"] = "Mon, 30 Nov 2026 09:00:00 +0000"
    msg["MIME-Version"] = "1.0"
    msg.set_payload("Dobrý den všem.\n", charset="utf-8")
    return msg.as_bytes(policy=policy.compat32.clone(linesep="\r\n", max_line_length=0))


@functools.cache
def file_bytes(index: int) -> bytes:
    """Attachment `index` (1-based) as Python's email package decodes it."""
    parsed = message_from_bytes(many_files(), policy=policy.default)
    payload = list(parsed.iter_attachments())[index - 1].get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload


def size(result: dict[str, Any]) -> int:
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")))


def cuts(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["field"]: entry for entry in result["cut"]}


@pytest.fixture
def mailbox(demo: Runtime, emulator_session: GmailEmulator) -> Runtime:
    emulator_session.deliver(JANA, many_files())
    emulator_session.deliver(JANA, announcement())
    return demo


def thread_of(emulator: GmailEmulator, message_id: str) -> str:
    return str(next(m.thrid for m in emulator.messages(JANA) if m.header_id == message_id))


# ------------------------------------------------------------------ every attachment reachable


async def test_paging_lists_every_attachment_once_in_part_order(mailbox: Runtime, call: Call) -> None:
    listed: list[str] = []
    offset, pages = 0, 0
    while True:
        page = await ok(
            call, mailbox, "mg_get_message", account="osobni", message_id=FILES_ID, attachments_offset=offset
        )
        assert size(page) <= BUDGET and page["attachments_offset"] == offset
        ids = [a["attachment_id"] for a in page["attachments"]]
        entry = cuts(page)["attachments"]
        assert (entry["shown"], entry["total"]) == (len(ids), FILES), "the true total on every page"
        listed += ids
        pages += 1
        if offset + len(ids) == FILES:
            assert "attachments_offset=0" in entry["how_to_get_the_rest"], "the last page points back to the first"
            break
        offset += len(ids)
        assert f"attachments_offset={offset}" in entry["how_to_get_the_rest"], entry
    assert pages >= 2
    assert listed == [str(part) for part in range(2, FILES + 2)], "each once, in part order"


async def test_attachments_195_and_328_are_saved_from_their_pages(mailbox: Runtime, call: Call) -> None:
    # The ids as the pages list them, each page at the offset the previous one's `cut` names.
    ids: dict[str, str] = {}
    offset, pages = 0, 0
    while offset < FILES:
        page = await ok(
            call, mailbox, "mg_get_message", account="osobni", message_id=FILES_ID, attachments_offset=offset
        )
        ids.update({a["filename"]: a["attachment_id"] for a in page["attachments"]})
        offset, pages = offset + len(page["attachments"]), pages + 1
    assert pages >= 2 and len(ids) == FILES
    for index in (195, FILES):
        name = f"soubor-{index:03d}.txt"
        saved = await ok(
            call, mailbox, "mg_get_attachment", account="osobni", message_id=FILES_ID, attachment_id=ids[name]
        )
        data = Path(saved["path"]).read_bytes()
        assert saved["filename"] == name and saved["size_bytes"] == len(data)
        assert hashlib.sha256(data).digest() == hashlib.sha256(file_bytes(index)).digest()


async def test_offsets_outside_the_list_are_refused_clearly(mailbox: Runtime, call: Call) -> None:
    for offset in (FILES, FILES + 100):
        body = await error(
            call, mailbox, "mg_get_message", account="osobni", message_id=FILES_ID, attachments_offset=offset
        )
        assert body["code"] == "invalid_input"
        assert f"attachments_offset {offset} is past the end" in body["message"]
        assert f"has {FILES} attachments (offsets 0 to {FILES - 1})" in body["message"]
    body = await error(call, mailbox, "mg_get_message", account="osobni", message_id=FILES_ID, attachments_offset=-1)
    assert body["code"] == "invalid_input" and "`attachments_offset`: expected a number >= 0" in body["message"]
    body = await error(call, mailbox, "mg_get_message", account="osobni", message_id=WIDE_ID, attachments_offset=1)
    assert "has no attachments" in body["message"]
    plain = await ok(call, mailbox, "mg_get_message", account="osobni", message_id=WIDE_ID, attachments_offset=0)
    assert plain["attachments"] == [] and "attachments" not in cuts(plain)


async def test_a_thread_points_a_cut_attachment_list_at_mg_get_message(
    mailbox: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    thread = await ok(
        call, mailbox, "mg_get_thread", account="osobni", thread_id=thread_of(emulator_session, FILES_ID), bodies="all"
    )
    assert size(thread) <= BUDGET
    [message] = thread["messages"]
    entry = cuts(thread)["messages.0.attachments"]
    shown = len(message["attachments"])
    assert (entry["shown"], entry["total"]) == (shown, FILES)
    how = entry["how_to_get_the_rest"]
    assert f"mg_get_message with message_id={FILES_ID} and attachments_offset={shown}" in how
    rest = await ok(call, mailbox, "mg_get_message", account="osobni", message_id=FILES_ID, attachments_offset=shown)
    assert rest["attachments"][0]["attachment_id"] == str(shown + 2), "the offset goes on right after the thread's"


# ------------------------------------------------------------------ recipients: cut, with true totals


def assert_recipients_cut(result: dict[str, Any], message: dict[str, Any], prefix: str) -> None:
    entries = cuts(result)
    for role, total, person in (("to", TO, "zamestnanec.{}@firma"), ("cc", CC, "externista.{}@partner")):
        entry = entries[f"{prefix}{role}"]
        shown = message[role]
        assert entry["total"] == total and entry["shown"] == len(shown) < total
        # The first ones, in the header's order: the list lost its end, nothing in between.
        assert [p["address"] for p in shown] == [person.format(i) + ".example.cz" for i in range(len(shown))]
        assert "No call brings the rest" in entry["how_to_get_the_rest"]
    assert len(message["to"]) > 100 and len(message["cc"]) > 100, "both lists keep a part"


async def test_a_message_to_3000_people_names_the_true_totals(
    mailbox: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    message = await ok(call, mailbox, "mg_get_message", account="osobni", message_id=WIDE_ID)
    assert size(message) <= BUDGET and message["body"] == "Dobrý den všem.\n"
    assert_recipients_cut(message, message, "")
    thread = await ok(
        call, mailbox, "mg_get_thread", account="osobni", thread_id=thread_of(emulator_session, WIDE_ID), bodies="all"
    )
    assert size(thread) <= BUDGET
    assert_recipients_cut(thread, thread["messages"][0], "messages.0.")
    plain = await ok(call, mailbox, "mg_get_thread", account="osobni", thread_id=thread_of(emulator_session, WIDE_ID))
    assert_recipients_cut(plain, plain["messages"][0], "messages.0.")
    assert "body" not in plain["messages"][0] and "body_budget_exhausted" not in plain, "no body fields unasked"


async def test_the_pass_names_the_true_totals_of_a_cut_message(
    mailbox: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    wanted = thread_of(emulator_session, WIDE_ID)
    token: str | None = None
    for _ in range(20):
        args: dict[str, Any] = {"account": "osobni", "since": "2000-01-01", "max_threads": 100}
        page = await ok(call, mailbox, "mg_next_pass", **args, **({"page_token": token} if token else {}))
        assert size(page) <= BUDGET
        if page["page_budget_exhausted"]:
            entry = cuts(page)["threads"]
            assert (entry["shown"], entry["total"]) == (len(page["threads"]), page["total_threads"])
            assert "next_page_token" in entry["how_to_get_the_rest"]
        found = [i for i, t in enumerate(page["threads"]) if t["thread_id"] == wanted]
        if found:
            [index] = found
            [message] = page["threads"][index]["unprocessed"]
            assert_recipients_cut(page, message, f"threads.{index}.unprocessed.0.")
            return
        token = page["next_page_token"]
        assert token, "the announcement's thread is in the pass"
    pytest.fail("the pass never reached the announcement")
