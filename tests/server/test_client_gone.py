"""The client goes (its end of stdin closes): the server ends at once, whatever is in flight.

Claude Code closes a stdio server's stdin when a session ends; a server that waits for its calls
to run out lingers for the call deadline and the LOGOUT wait (docs/architecture.md: within 2 s). Reads in flight
are abandoned and their connections closed; a send whose bytes went to Gmail stays in the send
journal, so a later repeat is refused instead of delivering it twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import pytest
from stdio_driver import ServerProcess, server_env, tool_result

from gmail_emulator import FaultRule, GmailEmulator, SmtpFault
from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE
from support import gmail_env, wait_until

OSOBNI = {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla", "can_send": True}
SEARCH = {"account": "osobni", "query": "from:karel"}
SEND = {
    "account": "osobni",
    "to": ["tym@example.com"],
    "subject": "Faktura za listopad",
    "body": "Dobrý den, posílám fakturu.",
    "quote_original": False,
    "signature": False,
}
EXIT_BOUND_S = 2.0


def _seed(emulator: GmailEmulator) -> None:
    msg = EmailMessage()
    msg["From"] = "Karel <karel@example.org>"
    msg["To"] = "osobni@example.cz"
    msg["Subject"] = "Zpráva"
    msg["Message-ID"] = "<zprava-0@example.org>"
    msg["Date"] = "Mon, 30 Nov 2026 08:00:00 +0000"
    msg.set_content("Text")
    emulator.deliver("osobni@example.cz", msg)


def _exit_after_stdin_closes(server: ServerProcess) -> float:
    """Seconds from closing the server's stdin to the end of its process."""
    assert server.proc.stdin is not None
    closed = time.monotonic()
    server.proc.stdin.close()
    wait_until(lambda: server.proc.poll() is not None, 90, "the server to exit")
    return time.monotonic() - closed


def test_ten_calls_stalled_on_search_do_not_keep_the_server_alive(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    _seed(emulator)
    config = write_config([{**OSOBNI, "max_connections": 10}])  # all ten in flight at once, none queued
    server = ServerProcess(config, server_env(gmail_env(emulator), tmp_path / "state"))
    try:
        stall = FaultRule("stall", match="SEARCH", times=-1)  # Gmail never answers a SEARCH
        emulator.add_fault(stall)
        for _ in range(10):
            server.call("mg_search_threads", SEARCH)
        # `seen` counts the SEARCHes that reached the rule: all ten calls are waiting on Gmail.
        wait_until(lambda: stall.seen == 10, 30, "ten SEARCHes to reach the emulator")
        assert emulator.open_imap_sessions("osobni@example.cz") == 10
        took = _exit_after_stdin_closes(server)
    finally:
        server.close()
    print(f"10 calls stalled on SEARCH: the server exited {took:.2f} s after its stdin closed")
    assert server.proc.returncode == 0
    assert took < EXIT_BOUND_S, took
    # Its connections went with it: the emulator holds none of them any more.
    wait_until(lambda: emulator.open_imap_sessions() == 0, 5, "the emulator's IMAP sessions to end")


def _sent_looks(emulator: GmailEmulator) -> int:
    return sum(1 for command in emulator.commands("osobni@example.cz") if command.name == "UID SEARCH")


def _in_the_sent_wait(emulator: GmailEmulator) -> Callable[[], bool]:
    """Gmail accepted the message and the server has looked into Sent twice since (it never
    shows there): the call is in the pauses between its looks."""
    looks: list[int] = []

    def waiting() -> bool:
        if not emulator.outbox():
            return False
        if not looks:
            looks.append(_sent_looks(emulator))
        return _sent_looks(emulator) >= looks[0] + 2

    return waiting


# Where the send is when the client goes -> whether Gmail took the message. In DATA the bytes are
# with Gmail and its answer has not come (it may have gone out); after DATA Gmail accepted it but its
# final answer has not reached the server; in the Sent wait the server is looking for its copy.
TAKEN = {"held_in_data": False, "held_after_data": True, "waiting_for_the_sent_copy": True}


@pytest.mark.parametrize("where", list(TAKEN))
def test_a_send_handed_to_gmail_stays_in_the_journal_when_the_client_goes(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, where: str
) -> None:
    emulator.set_knobs(delivery_delay_s=0.0)
    if where == "waiting_for_the_sent_copy":
        emulator.set_knobs(sent_filing_delay_s=None)  # Gmail never files it: the server keeps looking
    else:
        emulator.add_smtp_fault(SmtpFault("data" if where == "held_in_data" else "after_data", "hold"))
    config = write_config([OSOBNI])
    env = server_env(gmail_env(emulator), tmp_path / "state")
    server = ServerProcess(config, env)
    try:
        server.call("mg_send_message", SEND)
        if where == "waiting_for_the_sent_copy":
            wait_until(_in_the_sent_wait(emulator), 30, "the server to wait for the Sent copy")
        else:
            wait_until(lambda: emulator.smtp_held() == 1, 30, "the send to reach the held SMTP step")
        took = _exit_after_stdin_closes(server)
    finally:
        server.close()
    print(f"a send ({where}): the server exited {took:.2f} s after its stdin closed")
    assert took < EXIT_BOUND_S, took
    assert len(emulator.outbox()) == (1 if TAKEN[where] else 0)
    journal = json.loads((tmp_path / "state" / JOURNAL_FILE).read_text(encoding="utf-8"))
    assert [entry["account"] for entry in journal["sends"]] == ["osobni"]

    # The next server process refuses the same send: it may have gone out already.
    again = ServerProcess(config, env)
    try:
        reply = again.wait(again.call("mg_send_message", SEND), 60)
    finally:
        again.close()
    failed, body = tool_result(reply)
    assert failed and body["code"] == "duplicate_send" and "send journal" in body["message"], body
    assert len(emulator.outbox()) == (1 if TAKEN[where] else 0)  # nothing went out a second time
