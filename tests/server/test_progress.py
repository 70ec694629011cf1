"""`notifications/progress` on long calls, over stdio, for a request that carries a progressToken.

docs/architecture.md (`notify`): a pass or search over "all", batch labelling and a send waiting
for its Sent copy tell a client that asked how far they are (Claude Code shows it, and each
notification resets its idle timer). A request without a token gets no notification at all, and no
notification ever follows the result it belongs to.
"""

from __future__ import annotations

from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from stdio_driver import ServerProcess, server_env, tool_result

from gmail_emulator import GmailEmulator
from support import gmail_env
from tool_results import check_wire_result

MAILBOXES = [
    {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla", "can_send": True},
    {"name": "tym", "address": "tym@example.com", "password": "tymovehesloheslo"},
    {"name": "automaty", "address": "upozorneni@example.com", "password": "automatyheslooko"},
]
CLASSES = {"Faktury": "Invoices and bills", "Ostatni": "Everything else"}
BATCH = 60  # messages labelled in one call


def _seed(emulator: GmailEmulator) -> None:
    for i in range(BATCH):
        msg = EmailMessage()
        msg["From"] = "Karel <karel@example.org>"
        msg["To"] = "osobni@example.cz"
        msg["Subject"] = f"Faktura {i}"
        msg["Message-ID"] = f"<faktura-{i}@example.org>"
        msg["Date"] = "Mon, 30 Nov 2026 08:00:00 +0000"
        msg.set_content(f"Faktura číslo {i}")
        emulator.deliver("osobni@example.cz", msg)
    for address in ("tym@example.com", "upozorneni@example.com"):
        msg = EmailMessage()
        msg["From"] = "Karel <karel@example.org>"
        msg["To"] = address
        msg["Subject"] = "Porada"
        msg["Message-ID"] = f"<porada-{address}>"
        msg["Date"] = "Mon, 30 Nov 2026 09:00:00 +0000"
        msg.set_content("Porada v pondělí.")
        emulator.deliver(address, msg)


def _answer(server: ServerProcess, tool: str, arguments: dict[str, Any], token: str | None) -> dict[str, Any]:
    """The tool's structured result (checked against its output schema); the call must succeed."""
    request_id = server.call(tool, arguments, progress_token=token)
    reply = server.wait(request_id, 60)
    check_wire_result(tool, reply["result"])
    failed, payload = tool_result(reply)
    assert not failed, payload
    result: dict[str, Any] = payload
    if token is not None:
        notes = _progress(server, token)
        assert notes, f"{tool}: no progress notification"
        # Every notification of the call came before its result.
        came = [order for order, message in server.notifications if _token(message) == token]
        assert max(came) < server.reply_order[request_id], (came, server.reply_order[request_id])
    return result


def _token(message: dict[str, Any]) -> Any:
    return message.get("params", {}).get("progressToken")


def _progress(server: ServerProcess, token: str) -> list[dict[str, Any]]:
    """The params of every progress notification for `token`, in the order they came."""
    found = []
    for _order, message in server.notifications:
        if message["method"] == "notifications/progress" and _token(message) == token:
            found.append(message["params"])
    return found


def _rising(notes: list[dict[str, Any]]) -> bool:
    values = [note["progress"] for note in notes]
    return values == sorted(values) and len(set(values)) == len(values)


def test_long_calls_report_progress_when_asked_and_only_then(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    _seed(emulator)
    config = write_config(MAILBOXES, classification_labels=CLASSES)
    server = ServerProcess(config, server_env(gmail_env(emulator), tmp_path / "state"))
    try:
        for token in (None, "with-token"):

            def tok(name: str, token: str | None = token) -> str | None:
                return None if token is None else f"{name}-{token}"

            # A search over every mailbox: one step per mailbox that answered.
            query = {"account": "all", "query": "from:karel", "max_results": 100}
            search = _answer(server, "mg_search_threads", query, tok("search"))
            assert sorted(search["searched"]) == ["automaty", "osobni", "tym"]
            # The pass over every mailbox, likewise.
            _answer(server, "mg_next_pass", {"account": "all", "since": "2026-11-01"}, tok("pass"))
            # Sixty messages labelled in one call, and the classification of many threads.
            ids = [f"faktura-{i}@example.org" for i in range(BATCH)]
            labelled = _answer(
                server,
                "mg_label_message",
                {"account": "osobni", "message_ids": ids, "label": "processed", "since": "2026-11-01"},
                tok("label"),
            )
            assert labelled["succeeded"] == BATCH
            threads = [hit["thread_id"] for hit in search["threads"] if hit["account"] == "osobni"]
            assert len(threads) == BATCH
            classified = _answer(
                server,
                "mg_label_thread",
                {"account": "osobni", "label": "Faktury", "thread_ids": threads[:50]},
                tok("threads"),
            )
            assert classified["succeeded"] == 50
    finally:
        server.close()

    without = [message for _order, message in server.notifications if message["method"] == "notifications/progress"]
    assert all(_token(message) is not None for message in without), "progress sent for a request without a token"
    assert {_token(message) for message in without} == {
        f"{name}-with-token" for name in ("search", "pass", "label", "threads")
    }

    search_notes = _progress(server, "search-with-token")
    assert len(search_notes) == 3 and _rising(search_notes)
    assert all(note["total"] == 3 for note in search_notes)
    assert {note["message"] for note in search_notes} == {
        f'mailbox "{name}" done' for name in ("osobni", "tym", "automaty")
    }
    pass_notes = _progress(server, "pass-with-token")
    assert [note["progress"] for note in pass_notes] == [1, 2, 3] and all(n["total"] == 3 for n in pass_notes)
    label_notes = _progress(server, "label-with-token")
    assert [(n["progress"], n["total"]) for n in label_notes] == [(1, 3), (2, 3), (3, 3)]
    assert "found 60 of 60 messages" in label_notes[0]["message"]
    thread_notes = _progress(server, "threads-with-token")
    assert [(n["progress"], n["total"]) for n in thread_notes] == [(1, 3), (2, 3), (3, 3)]
    assert "50 of 50 threads" in thread_notes[0]["message"]


def test_a_send_reports_each_look_into_sent_while_gmail_files_it(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    emulator.set_knobs(sent_filing_delay_s=2.5, delivery_delay_s=0.0)  # Gmail files it after a while
    config = write_config(MAILBOXES[:1])
    server = ServerProcess(config, server_env(gmail_env(emulator), tmp_path / "state"))
    send = {
        "account": "osobni",
        "to": ["tym@example.com"],
        "subject": "Faktura za listopad",
        "body": "Dobrý den, posílám fakturu.",
        "quote_original": False,
        "signature": False,
    }
    try:
        sent = _answer(server, "mg_send_message", send, "send")
        again = _answer(server, "mg_send_message", {**send, "subject": "Faktura za prosinec"}, None)
    finally:
        server.close()
    assert sent["sent_copy"]["saved"] is True and sent["sent_copy"]["filed_by"] == "gmail"
    assert again["sent_copy"]["saved"] is True
    notes = _progress(server, "send")
    assert len(notes) >= 2 and _rising(notes), notes
    assert all(note["total"] == 15 and "Sent" in note["message"] for note in notes)
    everything = [message for _order, message in server.notifications if message["method"] == "notifications/progress"]
    assert len(everything) == len(notes)  # the second send, without a token, told nothing
