"""Latency, fault injection, connection cap, command counter, wire log and IDLE on the IMAP front."""

from __future__ import annotations

import imaplib
import socket
import ssl
import time
from typing import TYPE_CHECKING

import pytest
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError, LoginError

from gmail_emulator.observe import FaultRule
from support import wait_until

if TYPE_CHECKING:
    from emulator.conftest import ImapEmu

ABORTS = (IMAPClientAbortError, imaplib.IMAP4.abort, OSError, EOFError)


def test_command_counter_counts_a_known_sequence(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("count me"))
    client = imap_emu.client(login=False)
    client.login(imap_emu.user, imap_emu.password)
    client.list_folders()
    client.select_folder("INBOX", readonly=True)
    uids = client.search(["ALL"])
    client.fetch(uids, ["FLAGS"])
    client.logout()
    names = [r.name for r in imap_emu.observer.commands()]
    # imaplib sends CAPABILITY at connect; imapclient asks again before SEARCH because imaplib's
    # SELECT/EXAMINE flushed the CAPABILITY that came with LOGIN (real Gmail sees the same).
    assert names == ["CAPABILITY", "LOGIN", "LIST", "EXAMINE", "CAPABILITY", "UID SEARCH", "UID FETCH", "LOGOUT"]
    mine = imap_emu.observer.commands(imap_emu.user)
    assert [r.name for r in mine] == names[1:]  # before LOGIN the session had no account
    assert all(r.duration >= 0 and r.started > 0 for r in mine)
    assert imap_emu.observer.connections(imap_emu.user) == 1
    assert imap_emu.observer.connections("bob@gmail.test") == 0


def test_wire_log_redacts_password(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    client.noop()
    client.logout()
    conn = imap_emu.imaplib()  # imaplib quotes the password too
    conn.logout()
    log = imap_emu.observer.wire_log()
    everything = b"".join(e.data for e in log)
    assert imap_emu.password.encode() not in everything
    logins = [e.data for e in log if e.direction == "c" and b"LOGIN" in e.data]
    assert len(logins) == 2 and all(d.endswith(b" ***\r\n") for d in logins)
    assert any(e.direction == "s" and e.data.startswith(b"* OK Gimap ready") for e in log)
    assert {e.protocol for e in log} == {"imap"}
    assert imap_emu.observer.wire_bytes("s") > imap_emu.observer.wire_bytes("c") > 0
    lines = [r.line for r in imap_emu.observer.commands() if r.name == "LOGIN"]
    assert lines and all(imap_emu.password not in line and line.endswith("***") for line in lines)


def test_latency_slows_a_command(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    start = time.monotonic()
    client.noop()
    fast = time.monotonic() - start
    imap_emu.observer.latency = {"NOOP": 0.4}
    start = time.monotonic()
    client.noop()
    slow = time.monotonic() - start
    assert slow >= 0.4 > fast
    imap_emu.observer.latency = {"FETCH": 0.3}  # also covers UID FETCH
    client.select_folder("INBOX")
    start = time.monotonic()
    client.fetch([1], ["FLAGS"])
    assert time.monotonic() - start >= 0.3
    client.logout()


def test_fault_no_and_bad(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    imap_emu.observer.add_fault(FaultRule("no:[UNAVAILABLE] Temporary failure (Failure)", match="SELECT"))
    with pytest.raises(IMAPClientError, match="UNAVAILABLE"):
        client.select_folder("INBOX")
    client.select_folder("INBOX")  # times=1: the second try works
    imap_emu.observer.add_fault(FaultRule("bad:Could not parse command", match="UID SEARCH"))
    with pytest.raises(IMAPClientError, match="Could not parse"):
        client.search(["ALL"])
    assert client.search(["ALL"]) == []
    client.logout()


def test_fault_nth_and_times(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    imap_emu.observer.add_fault(FaultRule("no:nope", match="NOOP", nth=2, times=2))
    client.noop()
    for _ in range(2):
        with pytest.raises(IMAPClientError, match="nope"):
            client.noop()
    client.noop()
    client.logout()


@pytest.mark.parametrize("action", ["drop_before_reply", "bye", "drop_mid_reply"])
def test_fault_drops_connection(imap_emu: ImapEmu, action: str) -> None:
    imap_emu.deliver(imap_emu.make_mail("payload", "x" * 4000))
    client = imap_emu.client()
    client.select_folder("INBOX")
    imap_emu.observer.add_fault(FaultRule(action, match="UID FETCH"))
    with pytest.raises(ABORTS):
        client.fetch([1], ["BODY[]"])
    if action == "drop_mid_reply":
        sent = [e.data for e in imap_emu.observer.wire_log() if e.direction == "s"][-1]
        assert sent.startswith(b"* 1 FETCH (UID 1 BODY[] {") and len(sent) < 3000
    if action == "bye":
        assert imap_emu.observer.wire_log()[-1].data.startswith(b"* BYE Temporary System Problem.")
    fresh = imap_emu.client()  # the server itself is unharmed
    fresh.select_folder("INBOX")
    flags = fresh.fetch([1], ["FLAGS"])[1][b"FLAGS"]
    # a reply dropped before it started changed nothing; one cut mid-way had already run
    assert flags == ((b"\\Seen",) if action == "drop_mid_reply" else ())
    fresh.logout()


def test_fault_stall_hits_client_timeout(imap_emu: ImapEmu) -> None:
    client = imap_emu.client(timeout=0.5)
    imap_emu.observer.add_fault(FaultRule("stall", match="NOOP"))
    with pytest.raises((TimeoutError, socket.timeout, *ABORTS)):
        client.noop()


def test_fault_delay(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    imap_emu.observer.add_fault(FaultRule("delay:0.3", match="LIST"))
    start = time.monotonic()
    client.list_folders()
    assert time.monotonic() - start >= 0.3
    client.logout()


def test_fault_hook_acts_before_the_nth_command_is_answered(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("first"))
    client = imap_emu.client()
    client.select_folder("INBOX")
    stored_when_hooked: list[int] = []

    def deliver_second() -> None:  # runs off the loop, so it may drive the store like a test does
        stored_when_hooked.append(len(imap_emu.alice.messages))
        imap_emu.deliver(imap_emu.make_mail("second"))

    imap_emu.observer.add_fault(FaultRule("hook", match="SEARCH", nth=2, hook=deliver_second))
    assert client.search(["ALL"]) == [1]
    assert client.search(["ALL"]) == [1, 2]  # the hook's message is in the answer to the 2nd search
    assert client.search(["ALL"]) == [1, 2]
    assert stored_when_hooked == [1]  # once, as times=1 says
    client.logout()


def test_fault_untagged_sends_unsolicited_data_after_its_hook(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("first"))
    raw = imap_emu.raw()
    raw.command("SELECT INBOX")
    hooked: list[int] = []
    rule = FaultRule(r"untagged:1 FETCH (FLAGS (\Deleted))", match="NOOP", hook=lambda: hooked.append(1))
    imap_emu.observer.add_fault(rule)
    lines = raw.command("NOOP")
    assert hooked == [1] and lines[0] == b"* 1 FETCH (FLAGS (\\Deleted))" and lines[-1].startswith(b"r")


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("invalid", r"\[AUTHENTICATIONFAILED\] Invalid credentials"),
        ("app_password", r"\[ALERT\] Application-specific password required"),
        ("too_many", r"\[ALERT\] Too many simultaneous connections\. \(Failure\)"),
        ("webalert", r"\[ALERT\] Please log in via your web browser"),
        ("unavailable", r"\[UNAVAILABLE\]"),
        ("overquota", r"\[OVERQUOTA\] Account exceeded command or bandwidth limits\."),
        ("imap_disabled", r"\[ALERT\] IMAP access is disabled for your domain\."),
        ("imap_not_enabled", r"\[ALERT\] Your account is not enabled for IMAP use\."),
    ],
)
def test_fault_refuse_login(imap_emu: ImapEmu, kind: str, text: str) -> None:
    imap_emu.observer.add_fault(FaultRule(f"refuse_login:{kind}", account=imap_emu.user))
    client = imap_emu.client(login=False)
    with pytest.raises(LoginError, match=text):
        client.login(imap_emu.user, imap_emu.password)
    client.login(imap_emu.user, imap_emu.password)
    client.logout()


def test_webalert_sends_the_untagged_sign_in_line_first(imap_emu: ImapEmu) -> None:
    imap_emu.observer.add_fault(FaultRule("refuse_login:webalert"))
    raw = imap_emu.raw(login=False)
    lines = raw.command(f'LOGIN "{imap_emu.user}" "{imap_emu.password}"')
    assert lines[0].startswith(b"* NO [WEBALERT https://accounts.google.com/") and b"Web login required." in lines[0]
    assert lines[-1] == (
        b"r1 NO [ALERT] Please log in via your web browser: "
        b"https://support.google.com/mail/accounts/answer/78754 (Failure)"
    )


@pytest.mark.parametrize(
    ("action", "line"),
    [
        ("bye:overquota", b"* BYE [OVERQUOTA] Account exceeded command or bandwidth limits."),
        ("bye:imap_disabled", b"* BYE [ALERT] IMAP access is disabled for your domain."),
        ("bye:Account exceeded command or bandwidth limits.", b"* BYE Account exceeded command or bandwidth limits."),
    ],
)
def test_fault_bye_carries_gmails_text(imap_emu: ImapEmu, action: str, line: bytes) -> None:
    raw = imap_emu.raw()
    imap_emu.observer.add_fault(FaultRule(action, match="NOOP"))
    raw.send(b"r9 NOOP\r\n")
    assert raw.readline().startswith(line)
    assert raw.readline() == b""  # and the connection is closed, without a tagged answer


def test_fault_refuse_any_command_with_gmails_text(imap_emu: ImapEmu) -> None:
    raw = imap_emu.raw()
    imap_emu.observer.add_fault(FaultRule("refuse:overquota", match="EXAMINE"))
    assert raw.command("EXAMINE INBOX")[-1] == b"r2 NO [OVERQUOTA] Account exceeded command or bandwidth limits."
    assert raw.command("EXAMINE INBOX")[-1].startswith(b"r3 OK [READ-ONLY]")


@pytest.mark.parametrize("action", ["throttle:0.3", "refuse_login:throttled"])
def test_fault_throttle_answers_slowly_with_ok_and_the_suffix(imap_emu: ImapEmu, action: str) -> None:
    """Gmail throttles with `OK Success [THROTTLED]` and slow replies, not with a NO."""
    imap_emu.observer.add_fault(FaultRule(action, match="LOGIN" if "login" in action else "NOOP"))
    raw = imap_emu.raw(login=False)
    started = time.monotonic()
    login = raw.command(f'LOGIN {imap_emu.user} "{imap_emu.password}"')[-1]
    noop = raw.command("NOOP")[-1]
    took = time.monotonic() - started
    throttled = login if "login" in action else noop
    assert throttled.startswith(b"r") and b" OK " in throttled and throttled.endswith(b" [THROTTLED]")
    assert took >= 0.3
    other = noop if "login" in action else login
    assert not other.endswith(b"[THROTTLED]")


def test_fault_greeting_bye_and_tls_fail(imap_emu: ImapEmu) -> None:
    imap_emu.observer.add_fault(FaultRule("greeting_bye"))
    with pytest.raises((imaplib.IMAP4.error, *ABORTS)):
        imap_emu.client(login=False)
    imap_emu.observer.add_fault(FaultRule("tls_fail"))
    with pytest.raises(ssl.SSLError):
        imap_emu.client(login=False)
    client = imap_emu.client()
    client.logout()


def test_connection_cap(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.max_connections = 2
    first, second = imap_emu.client(), imap_emu.client()
    third = imap_emu.client(login=False)
    with pytest.raises(LoginError, match=r"\[ALERT\] Too many simultaneous connections\. \(Failure\)"):
        third.login(imap_emu.user, imap_emu.password)
    bob = imap_emu.client(imap_emu.other_user, imap_emu.other_password)  # the cap is per account
    first.logout()
    wait_until(lambda: imap_emu.server.logged_in.get(imap_emu.user) == 1)
    third.login(imap_emu.user, imap_emu.password)
    assert imap_emu.observer.connections(imap_emu.user) == 3
    for client in (second, third, bob):
        client.logout()


def test_idle_receives_exists_and_expunge(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("first"))
    client = imap_emu.client()
    client.select_folder("INBOX")
    client.idle()
    imap_emu.deliver(imap_emu.make_mail("second"))
    responses = client.idle_check(timeout=5)
    assert (2, b"EXISTS") in responses
    first = min(imap_emu.alice.messages.values(), key=lambda m: m.arrival)
    imap_emu.call(imap_emu.alice.set_labels, first, set())  # archived elsewhere
    responses = client.idle_check(timeout=5)
    assert (1, b"EXPUNGE") in responses
    text, _extra = client.idle_done()
    assert text == b"IDLE terminated (Success)"
    assert client.search(["ALL"]) == [2]
    client.logout()


def test_idle_reports_no_flag_changes_by_default(imap_emu: ImapEmu) -> None:
    msg = imap_emu.deliver(imap_emu.make_mail("quiet"))
    client = imap_emu.client()
    client.select_folder("INBOX")
    client.idle()
    imap_emu.call(imap_emu.alice.set_flags, msg, {"\\Seen"})
    assert client.idle_check(timeout=0.5) == []
    client.idle_done()
    imap_emu.store.knobs.idle_notify_flags = True
    client.idle()
    imap_emu.call(imap_emu.alice.set_flags, msg, set())
    assert client.idle_check(timeout=5) == [(1, b"FETCH", (b"FLAGS", ()))]
    client.idle_done()
    client.logout()


def test_idle_refused_knob(imap_emu: ImapEmu) -> None:
    imap_emu.store.knobs.idle_refused = True
    client = imap_emu.client()
    assert b"IDLE" in client.capabilities()  # still advertised: the client learns it only by trying
    client.select_folder("INBOX")
    with pytest.raises(IMAPClientError, match="NO"):
        client.idle()
    assert client.search(["ALL"]) == []  # the session is still usable
    client.logout()


def test_disconnect_during_idle(imap_emu: ImapEmu) -> None:
    client = imap_emu.client()
    client.select_folder("INBOX")
    client.idle()
    client.shutdown()
    imap_emu.deliver(imap_emu.make_mail("after"))  # the gone client's session may not know it yet
    other = imap_emu.client()
    assert other.select_folder("INBOX")[b"EXISTS"] == 1
    other.logout()
    wait_until(lambda: not imap_emu.server.sessions)
    assert imap_emu.alice.listeners == []  # every session unregistered itself
    assert imap_emu.server.logged_in.get(imap_emu.user, 0) == 0


def test_bandwidth_throttles_output(imap_emu: ImapEmu) -> None:
    imap_emu.deliver(imap_emu.make_mail("big", "y" * 12000))
    client = imap_emu.client()
    client.select_folder("INBOX")
    imap_emu.observer.bandwidth_bps = 20000
    start = time.monotonic()
    body = client.fetch([1], ["BODY.PEEK[]"])[1][b"BODY[]"]
    assert len(body) > 12000 and time.monotonic() - start >= 0.5
    imap_emu.observer.bandwidth_bps = None
    client.logout()


def test_fault_targets_sasl_ir_account(imap_emu: ImapEmu) -> None:
    import base64

    imap_emu.observer.add_fault(FaultRule("refuse_login:app_password", account=imap_emu.user))
    raw = imap_emu.raw(login=False)
    token = base64.b64encode(f"\0{imap_emu.user}\0{imap_emu.password}".encode()).decode()
    assert b"Application-specific password required" in raw.command(f"AUTHENTICATE PLAIN {token}")[-1]
    assert raw.command(f"AUTHENTICATE PLAIN {token}")[-1].endswith(b"authenticated (Success)")
