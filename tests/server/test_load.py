"""Under load and stalls: the connection cap, a server that keeps answering, and the deadline.

These drive a real server process over stdio (the transport whose thread pool used to starve)
and time `ping` while tool calls are in flight. The deadline tests run the server with a deadline
of 3 s, below the configuration's floor of 10 s (tests/support/short_deadline.py).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import pytest
from stdio_driver import ServerProcess, server_env, tool_result

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env, wait_until

OSOBNI = {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}
SEARCH = {"account": "osobni", "query": "from:karel"}
TIMEOUT_S = 3.0  # the deadline of the deadline tests
# What these tests tell apart is the deadline (3 s) from a stall of 30 s or a drip of minutes; the
# slack past the deadline is for the scheduler of a machine whose cores other work keeps busy.
SLACK_S = 5.0


def _seed(emulator: GmailEmulator, count: int = 3) -> None:
    for i in range(count):
        msg = EmailMessage()
        msg["From"] = "Karel <karel@example.org>"
        msg["To"] = "osobni@example.cz"
        msg["Subject"] = f"Zpráva {i}"
        msg["Message-ID"] = f"<zprava-{i}@example.org>"
        msg["Date"] = "Mon, 30 Nov 2026 08:00:00 +0000"
        msg.set_content(f"Text {i}")
        emulator.deliver("osobni@example.cz", msg)


# Requests that need no network, asked in turn while tool calls are in flight.
LOCAL_REQUESTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("ping", "ping", None),
    ("mg_list_accounts", "tools/call", {"name": "mg_list_accounts", "arguments": {}}),
    ("ping", "ping", None),
    ("mg_reload_config", "tools/call", {"name": "mg_reload_config", "arguments": {}}),
    ("ping", "ping", None),
    ("tools/list", "tools/list", {}),
]


def _answers_while(server: ServerProcess, pending: Callable[[], bool]) -> dict[str, list[float]]:
    """Round trips of requests that need no network, one after another (paced a little), for as
    long as `pending()` holds; by request name."""
    rounds: dict[str, list[float]] = {}
    asked = 0
    while pending():
        name, method, params = LOCAL_REQUESTS[asked % len(LOCAL_REQUESTS)]
        asked += 1
        sent = time.monotonic()
        reply, arrived = server.wait_timed(server.request(method, params), 30)
        assert "error" not in reply and not reply["result"].get("isError"), reply
        rounds.setdefault(name, []).append(arrived - sent)
        time.sleep(0.02)  # sampling pace, not a wait for a condition
    return rounds


def _check_quick(rounds: dict[str, list[float]], label: str) -> None:
    """ping, mg_list_accounts and mg_reload_config under 100 ms (one outlier under 1 s); tools/list, whose answer is
    ~60 KB of schemas, typically (its slowest answer is printed: this machine is shared)."""
    shown = ", ".join(f"{name} max {max(v) * 1000:.0f} ms (n={len(v)})" for name, v in rounds.items())
    print(f"{label}: {shown}")
    for name in ("ping", "mg_list_accounts", "mg_reload_config"):
        samples = sorted(rounds.get(name, []))
        assert samples, name
        # The emulator shares this test process, and the suite's other workers (and whatever else
        # runs) share the two cores, so any few samples may catch the scheduler's hiccups. A starved
        # transport is slow for every request while the calls run, for seconds: the typical answer
        # and nearly all of them stay quick. benchmarks/load.py reports the exact figures.
        assert statistics.median(samples) < 0.1 and samples[-1] < 2.0, (name, [round(x * 1000) for x in samples])
        assert _share_quick(samples) >= 0.75, (name, [round(x * 1000) for x in samples])
    if "tools/list" in rounds:
        assert statistics.median(rounds["tools/list"]) < 0.1, rounds["tools/list"]


def _share_quick(samples: list[float]) -> float:
    """The share of round trips under 100 ms."""
    return sum(1 for x in samples if x < 0.1) / len(samples)


def _quick_ping(server: ServerProcess) -> float:
    """The quickest of five pings: one may meet a busy scheduler, five do not all."""
    return float(min(server.ping() for _ in range(5)))


def _first_call(server: ServerProcess) -> None:
    """One call before the burst, as an assistant's session starts: the pings then measure a running
    server, not the one-off costs of a first call (the first TLS handshake, the first worker thread)."""
    failed, _payload = tool_result(server.wait(server.call("mg_search_threads", SEARCH), 30))
    assert not failed


def _arrived(server: ServerProcess, ids: list[int]) -> Callable[[], bool]:
    def pending() -> bool:
        return any(i not in server._replies for i in ids)

    return pending


def test_fifty_parallel_calls_use_at_most_four_logins_and_ping_stays_quick(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    _seed(emulator)
    emulator.set_latency("SEARCH", 0.05)  # calls overlap, as they do against Gmail
    config = write_config([OSOBNI])
    server = ServerProcess(config, server_env(gmail_env(emulator), tmp_path / "state"))
    try:
        _first_call(server)
        emulator.reset_counters()
        ids = [server.call("mg_search_threads", SEARCH) for _ in range(50)]
        answers = _answers_while(server, _arrived(server, ids))
        results = [tool_result(server.wait(i, 60)) for i in ids]
    finally:
        server.close()
    assert all(not failed and payload["total_threads"] == 3 for failed, payload in results)
    peak = emulator.login_peak("osobni@example.cz")
    print(f"50 calls: at most {peak} logins at once")
    assert 2 <= peak <= 4, peak  # parallel, but never more than the cap
    _check_quick(answers, "during 50 calls")


@pytest.mark.anyio
async def test_gmail_refusing_connections_gives_success_or_retryable_never_auth_failed(
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    call: Callable[..., Any],
) -> None:
    _seed(emulator)
    emulator.set_knobs(max_connections=2)  # the user's phone and laptop hold the rest
    emulator.set_latency("SEARCH", 0.3)
    runtime = make_runtime(write_config([OSOBNI]))  # cap 4 by default
    emulator.reset_counters()
    outcomes: list[Any] = []

    async def one() -> None:
        outcomes.append(await call(runtime, "mg_search_threads", SEARCH))

    async with anyio.create_task_group() as group:
        for _ in range(12):
            group.start_soon(one)
    logins = [c for c in emulator.commands() if c.name == "LOGIN"]
    assert len(logins) > 12  # Gmail did refuse some logins, and they were tried again
    refused = []
    for result in outcomes:
        if result.is_error:
            body = json.loads(result.content[0].text)["error"]
            assert body["code"] == "upstream_error" and body["retryable"] is True, body
            assert "too many connections" in body["message"]
            refused.append(body)
        else:
            assert result.structured_content["total_threads"] == 3
    assert len(refused) < len(outcomes)  # the second try got through for some


def test_forty_calls_against_a_stalled_search_end_at_the_deadline(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    _seed(emulator)
    config = write_config([OSOBNI], call_timeout_s=10)
    server = ServerProcess(config, server_env(gmail_env(emulator), tmp_path / "state"), call_timeout_s=TIMEOUT_S)
    try:
        _first_call(server)
        emulator.add_fault(FaultRule("delay:30", match="SEARCH", times=-1))
        sent = time.monotonic()
        ids = [server.call("mg_search_threads", SEARCH) for _ in range(40)]
        answers = _answers_while(server, _arrived(server, ids))
        replies = [server.wait_timed(i, 60) for i in ids]
        for reply, arrived in replies:
            assert arrived - sent < TIMEOUT_S + SLACK_S
            failed, body = tool_result(reply)
            assert failed and body["code"] == "upstream_error" and body["retryable"] is True
            assert f"deadline of {TIMEOUT_S:g} s" in body["message"] and "Nothing was changed" in body["message"]
        # Abandoned sessions closed their sockets instead of waiting the stall out.
        # Well before the stall's 30 s: the sockets were closed, not waited out.
        wait_until(lambda: server.open_imap_sockets(emulator.imap_port) == 0, 10, "the IMAP sockets to close")
        assert _quick_ping(server) < 0.1
    finally:
        server.close()
    slowest = max(replies, key=lambda r: r[1])[1] - sent
    print(f"40 stalled calls: the last deadline error came after {slowest:.2f} s")
    _check_quick(answers, "during the stall")
    assert sum(len(v) for v in answers.values()) > 20  # sampled throughout the stall


def test_slow_drip_is_cut_off_at_the_deadline(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    _seed(emulator)
    config = write_config([OSOBNI], call_timeout_s=10)
    server = ServerProcess(config, server_env(gmail_env(emulator), tmp_path / "state"), call_timeout_s=TIMEOUT_S)
    try:
        _first_call(server)  # at full speed: the first call's one-off costs are not the drip's
        emulator.set_bandwidth(40)  # 40 bytes a second: no single read ever times out
        sent = time.monotonic()
        reply, arrived = server.wait_timed(server.call("mg_search_threads", SEARCH), 60)
        print(f"slow drip: deadline error after {arrived - sent:.2f} s")
        assert TIMEOUT_S - 0.5 < arrived - sent < TIMEOUT_S + SLACK_S
        failed, body = tool_result(reply)
        assert failed and body["code"] == "upstream_error" and body["retryable"] is True
        assert "deadline" in body["message"] and 'mailbox "osobni"' in body["message"]
        wait_until(lambda: server.open_imap_sockets(emulator.imap_port) == 0, 10, "the IMAP socket to close")
    finally:
        server.close()
