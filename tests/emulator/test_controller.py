"""The in-process control API of GmailEmulator (and the seed loader behind it)."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError

from gmail_emulator import FaultRule, GmailEmulator, Knobs, MessageInfo
from gmail_emulator.seed import SeedError, load_seed
from support import wait_until

ALICE, ALICE_PW = "alice@example.com", "alicealicealicea"
BOB, BOB_PW = "bob@example.com", "bobbobbobbobbobb"
SEED = {
    "accounts": [
        {"address": ALICE, "password": ALICE_PW, "labels": ["Work", "Work/Urgent"]},
        {"address": BOB, "password": BOB_PW},
    ]
}


def raw_message(msgid: str, subject: str = "Subject", *, in_reply_to: str | None = None, sender: str = BOB) -> bytes:
    lines = [
        f"From: {sender}",
        f"To: {ALICE}",
        f"Subject: {subject}",
        "Date: Mon, 02 Nov 2026 10:00:00 +0000",
        f"Message-ID: <{msgid}>",
    ]
    if in_reply_to:
        lines += [f"In-Reply-To: <{in_reply_to}>", f"References: <{in_reply_to}>"]
    return ("\r\n".join(lines) + "\r\n\r\nBody.\r\n").encode()


@pytest.fixture(scope="module")
def emu_module() -> Iterator[GmailEmulator]:
    with GmailEmulator(seed=SEED) as emu:
        yield emu


@pytest.fixture
def emu(emu_module: GmailEmulator) -> GmailEmulator:
    emu_module.reset(SEED)
    return emu_module


def imap(emu: GmailEmulator, user: str = ALICE, password: str = ALICE_PW) -> IMAPClient:
    client = IMAPClient(emu.host, port=emu.imap_port, ssl=True, ssl_context=emu.client_ssl_context(), timeout=10)
    client.login(user, password)
    return client


# --------------------------------------------------------------------------- endpoints


def test_endpoint_env_and_ca(emu: GmailEmulator) -> None:
    assert emu.host == "127.0.0.1"
    ports = (emu.imap_port, emu.smtp_ssl_port, emu.smtp_starttls_port)
    assert all(p > 0 for p in ports) and len(set(ports)) == 3
    # Host, ports and CA only: the emulator knows no client's variable names.
    assert emu.env() == {
        "host": "127.0.0.1",
        "imap_port": emu.imap_port,
        "smtp_ssl_port": emu.smtp_ssl_port,
        "smtp_starttls_port": emu.smtp_starttls_port,
        "ca_file": str(emu.ca_file),
    }
    assert emu.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")
    ctx = emu.client_ssl_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    with imap(emu) as client:
        assert client.list_folders()


def test_unknown_ca_is_rejected(emu: GmailEmulator) -> None:
    with pytest.raises(ssl.SSLError):
        IMAPClient(emu.host, port=emu.imap_port, ssl=True, ssl_context=ssl.create_default_context(), timeout=5)


def test_start_stop_lifecycle(tmp_path: Path) -> None:
    emu = GmailEmulator(workdir=tmp_path / "w")
    with pytest.raises(RuntimeError):
        emu.add_account("x@example.com", "pw")
    with emu:
        assert emu.running
        assert emu.ca_file == tmp_path / "w" / "ca.pem" and emu.ca_file.exists()
        with pytest.raises(RuntimeError):
            emu.start()
        port = emu.imap_port
    assert not emu.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    emu.stop()  # idempotent


# --------------------------------------------------------------------------- messages


def test_deliver_and_thread(emu: GmailEmulator) -> None:
    first = emu.deliver(ALICE, raw_message("m1@example.com", "Plan"))
    assert isinstance(first, MessageInfo)
    assert first.account == ALICE
    assert first.header_id == "m1@example.com"
    assert first.labels == frozenset({"\\Inbox"})
    assert first.flags == frozenset()
    assert first.location == "normal"
    assert first.thrid == first.msgid
    assert first.msgid > 2**53

    reply = emu.deliver(ALICE, raw_message("m2@example.com", "Re: Plan", in_reply_to="m1@example.com"))
    assert reply.thrid == first.thrid
    other = emu.deliver(ALICE, raw_message("m3@example.com", "Unrelated"))
    assert other.thrid not in (first.thrid,)
    assert [m.header_id for m in emu.messages(ALICE)] == ["m1@example.com", "m2@example.com", "m3@example.com"]

    with imap(emu) as client:
        client.select_folder("INBOX", readonly=True)
        data = client.fetch(client.search(), ["X-GM-THRID", "X-GM-MSGID"])
    assert sorted(d[b"X-GM-MSGID"] for d in data.values()) == sorted(m.msgid for m in emu.messages(ALICE))
    assert {d[b"X-GM-THRID"] for d in data.values()} == {first.thrid, other.thrid}


def test_deliver_accepts_str_and_email_message(emu: GmailEmulator) -> None:
    msg = EmailMessage()
    msg["From"] = BOB
    msg["To"] = ALICE
    msg["Subject"] = "Objects"
    msg["Message-ID"] = "<obj@example.com>"
    msg.set_content("Žluťoučký kůň\n")
    info = emu.deliver(ALICE, msg)
    assert info.header_id == "obj@example.com"
    assert b"\r\n" in info.raw
    text = raw_message("text@example.com").decode()
    assert emu.deliver(ALICE, text).header_id == "text@example.com"


def test_deliver_options(emu: GmailEmulator) -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    info = emu.deliver(
        ALICE,
        raw_message("opt@example.com"),
        labels=["\\Inbox", "Work", "\\Important"],
        flags=["\\Seen"],
        internaldate=when,
    )
    assert info.labels == frozenset({"\\Inbox", "Work", "\\Important"})
    assert info.flags == frozenset({"\\Seen"})
    assert info.internaldate == when
    trashed = emu.deliver(ALICE, raw_message("trash@example.com"), labels=(), location="trash")
    assert trashed.location == "trash"
    with imap(emu) as client:
        client.select_folder("[Gmail]/Trash", readonly=True)
        assert len(client.search()) == 1
    with pytest.raises(KeyError):
        emu.deliver("nobody@example.com", raw_message("x@example.com"))
    with pytest.raises(ValueError, match="location must be"):
        emu.deliver(ALICE, raw_message("y@example.com"), location="bin")  # type: ignore[arg-type]


def test_the_delivery_verdict_names_each_dkim_signature(emu: GmailEmulator) -> None:
    # As Gmail writes it: one dkim= result per DKIM-Signature, by its d=, s= and the first 8 of b=.
    signed = (
        b"DKIM-Signature: v=1; a=rsa-sha256; d=News.Example; s=s2026;\r\n\th=from:list-unsubscribe; bh=x=;\r\n"
        b"\tb=AbCd/Ef+\r\n\t GhIjKl\r\n"
        b"DKIM-Signature: v=1; a=rsa-sha256; d=esp.example; s=e1; h=from; b=ZzYyXxWw==\r\n"
        b"DKIM-Signature: v=1; d=broken.example; h=from\r\n"  # no s= or b=: named by nobody
    )
    info = emu.deliver(ALICE, signed + raw_message("dkim@example.com"), trace=True)
    verdict = info.raw.split(b"\r\nAuthentication-Results: ", 1)[1].split(b"\r\nDKIM-Signature", 1)[0]
    assert b'dkim=pass header.i=@news.example header.s=s2026 header.b="AbCd/Ef+";' in verdict
    assert b"dkim=pass header.i=@esp.example header.s=e1 header.b=ZzYyXxWw;" in verdict
    assert verdict.count(b"dkim=") == 2 and b"header.s=emu" not in verdict
    unsigned = emu.deliver(ALICE, raw_message("plain@example.com"), trace=True)
    assert b"header.s=emu" in unsigned.raw  # without a signature: one result for the From domain


def test_append_places_exactly_the_given_labels(emu: GmailEmulator) -> None:
    archived = emu.append(ALICE, raw_message("arch@example.com"))
    assert archived.labels == frozenset()
    draft = emu.append(ALICE, raw_message("draft@example.com", sender=ALICE), labels=["\\Draft"], flags=["\\Seen"])
    assert draft.labels == frozenset({"\\Draft"})
    with imap(emu) as client:
        assert client.select_folder("INBOX", readonly=True)[b"EXISTS"] == 0
        assert client.select_folder("[Gmail]/All Mail", readonly=True)[b"EXISTS"] == 2
        assert client.select_folder("[Gmail]/Drafts", readonly=True)[b"EXISTS"] == 1


def test_message_lookup(emu: GmailEmulator) -> None:
    emu.deliver(ALICE, raw_message("same@example.com", "old"))
    newer = emu.append(ALICE, raw_message("same@example.com", "new"), labels=["\\Sent"])
    assert emu.message(ALICE, "same@example.com") == newer
    assert emu.message(ALICE, "<same@example.com>") == newer
    assert emu.message(ALICE, "missing@example.com") is None
    with pytest.raises(KeyError):
        emu.message("nobody@example.com", "same@example.com")


def test_labels_and_flags(emu: GmailEmulator) -> None:
    before = emu.deliver(ALICE, raw_message("lab@example.com"))
    after = emu.add_labels(ALICE, "<lab@example.com>", ["Work", "New/Label", "\\Starred"])
    assert after.labels == frozenset({"\\Inbox", "Work", "New/Label", "\\Starred"})
    assert "\\Flagged" in after.flags  # the star and \Flagged go together
    assert before.labels == frozenset({"\\Inbox"})  # snapshots do not change afterwards
    assert emu.labels(ALICE) == ["New/Label", "Work", "Work/Urgent"]

    removed = emu.remove_labels(ALICE, "lab@example.com", ["work", "\\Inbox", "\\Starred"])
    assert removed.labels == frozenset({"New/Label"})
    assert "\\Flagged" not in removed.flags

    flagged = emu.set_flags(ALICE, "lab@example.com", ["\\Seen", "\\Flagged", "$Forwarded"])
    assert flagged.flags == frozenset({"\\Seen", "\\Flagged", "$Forwarded"})
    assert "\\Starred" in flagged.labels
    assert emu.set_flags(ALICE, "lab@example.com", []).flags == frozenset()
    with pytest.raises(KeyError):
        emu.add_labels(ALICE, "nothere@example.com", ["Work"])


def test_snapshot_detects_changes_only(emu: GmailEmulator) -> None:
    emu.deliver(ALICE, raw_message("snap@example.com"))
    before = emu.snapshot()
    assert set(before) == {ALICE, BOB}
    assert before[ALICE]["user_labels"] == ["Work", "Work/Urgent"]
    (entry,) = before[ALICE]["messages"]
    assert entry["labels"] == ["\\Inbox"] and entry["header_id"] == "snap@example.com"
    assert len(entry["sha256"]) == 64

    with imap(emu) as client:  # reading with PEEK changes nothing
        client.select_folder("INBOX")
        client.fetch(client.search(), ["BODY.PEEK[]", "X-GM-LABELS", "FLAGS"])
    assert emu.snapshot() == before

    with imap(emu) as client:
        client.select_folder("INBOX")
        client.add_flags(client.search(), [b"\\Seen"])
    changed = emu.snapshot()
    assert changed != before
    assert changed[ALICE]["messages"][0]["flags"] == ["\\Seen"]


def test_reset_gives_a_fresh_store_on_the_same_ports(emu: GmailEmulator) -> None:
    ports = emu.env()
    emu.deliver(ALICE, raw_message("gone@example.com"))
    emu.add_account("carol@example.com", "carolcarolcarolc")
    emu.set_knobs(unknown_label_policy="ignore")
    emu.add_fault(FaultRule("no:boom", match="SELECT"))
    emu.reset()
    assert emu.env() == ports
    assert emu.snapshot() == {}
    assert emu.knobs.unknown_label_policy == "create"
    emu.reset(SEED)
    assert emu.messages(ALICE) == []
    assert emu.labels(ALICE) == ["Work", "Work/Urgent"]
    with imap(emu) as client:
        client.select_folder("INBOX")  # the fault is gone too


def test_a_command_asleep_across_a_reset_is_not_counted_after_it(emu: GmailEmulator) -> None:
    """A test's delayed command still running when the next test resets the emulator must not turn
    up in that test's counts (the emulator is shared by the tests of a worker)."""
    emu.add_fault(FaultRule("delay:0.5", match="NOOP"))
    client = imap(emu)

    def noop() -> None:
        with contextlib.suppress(IMAPClientError, OSError):  # the reset closes the connection
            client.noop()

    asleep = threading.Thread(target=noop, daemon=True)
    asleep.start()
    # The rule fired once and is gone: the NOOP is asleep in its delay.
    wait_until(lambda: emu.observer.faults() == [], 5, "the NOOP to reach its delay")
    emu.reset()
    # The session ends only when its NOOP wakes up, which is when it would be counted.
    wait_until(lambda: emu.open_imap_sessions() == 0, 5, "the aborted session to end")
    asleep.join(5)
    assert [c.name for c in emu.commands()] == []
    with contextlib.suppress(IMAPClientError, OSError):
        client.shutdown()


def test_add_account(emu: GmailEmulator) -> None:
    emu.add_account("carol@example.com", "carolcarolcarolc", labels=["Clients"])
    assert emu.labels("carol@example.com") == ["Clients"]
    with pytest.raises(ValueError, match="exists already"):
        emu.add_account("CAROL@example.com", "x")
    with imap(emu, "carol@example.com", "carolcarolcarolc") as client:
        names = [name for _flags, _sep, name in client.list_folders()]
    assert "Clients" in names


def test_knobs_are_copies_and_validated(emu: GmailEmulator) -> None:
    knobs = emu.knobs
    knobs.delivery_delay_s = 99.0  # a copy: no effect
    assert emu.knobs.delivery_delay_s == 0.0
    emu.set_knobs(delivery_delay_s=0.25, raw_search_lag_s=0.0)
    assert emu.knobs.delivery_delay_s == 0.25
    with pytest.raises(AttributeError):
        emu.set_knobs(no_such_knob=1)


def test_constructor_knobs_and_clock(tmp_path: Path) -> None:
    fixed = datetime(2026, 3, 1, 12, 0, tzinfo=UTC).timestamp()
    knobs = Knobs(unknown_label_policy="no")
    with GmailEmulator(knobs=knobs, seed=SEED, clock=lambda: fixed, workdir=tmp_path) as emu:
        assert emu.knobs.unknown_label_policy == "no"
        info = emu.deliver(ALICE, raw_message("clock@example.com"))
        assert info.internaldate == datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
        emu.set_knobs(unknown_label_policy="create")
        emu.reset(SEED)
        assert emu.knobs.unknown_label_policy == "no"
    assert knobs.unknown_label_policy == "no"


# --------------------------------------------------------------------------- observation


def test_commands_connections_latency_and_wire_log(emu: GmailEmulator) -> None:
    emu.reset_counters()
    emu.set_latency("select", 0.3)
    with imap(emu) as client:
        started = time.monotonic()
        client.select_folder("INBOX")
        assert time.monotonic() - started >= 0.29
    with imap(emu, BOB, BOB_PW):
        pass
    assert emu.connections() == 2
    assert emu.connections(ALICE) == 1
    names = [c.name for c in emu.commands(ALICE)]
    assert "LOGIN" in names and "SELECT" in names
    wire = b"".join(e.data for e in emu.wire_log() if e.protocol == "imap" and e.direction == "c")
    assert b"LOGIN" in wire
    assert ALICE_PW.encode() not in wire

    emu.reset_counters()
    assert emu.commands() == [] and emu.connections() == 0 and emu.wire_log() == []
    with imap(emu) as client:  # latency survives reset_counters
        started = time.monotonic()
        client.select_folder("INBOX")
        assert time.monotonic() - started >= 0.29


def test_imap_fault_rules(emu: GmailEmulator) -> None:
    emu.add_fault(FaultRule("no:Temporary failure", match="SELECT", times=1))
    emu.reset_counters()  # keeps the rule
    with imap(emu) as client:
        with pytest.raises(IMAPClientError):
            client.select_folder("INBOX")
        client.select_folder("INBOX")
    emu.add_fault(FaultRule("no:again", match="SELECT", times=-1))
    emu.clear_faults()
    with imap(emu) as client:
        client.select_folder("INBOX")


# --------------------------------------------------------------------------- seeds


def write_seed(tmp_path: Path) -> Path:
    (tmp_path / "eml").mkdir()
    (tmp_path / "eml" / "first.eml").write_bytes(
        b"From: bob@example.com\nTo: alice@example.com\nSubject: Old news\n"
        b"Date: {{DATE:-30d}}\nMessage-ID: <first@example.com>\n\nWritten a month ago.\n"
    )
    seed = {
        "knobs": {"sent_filing_delay_s": 2, "store_not_applied_ids": ["x@example.com"]},
        "accounts": [
            {
                "address": ALICE,
                "password": ALICE_PW,
                "labels": ["Work"],
                "messages": [
                    {"eml": "eml/first.eml", "labels": ["\\Inbox", "work"], "flags": ["\\Seen"], "internaldate": "-3h"},
                    {
                        "raw": "From: alice@example.com\nTo: bob@example.com\nSubject: Re: Old news\n"
                        "Message-ID: <second@example.com>\nIn-Reply-To: <first@example.com>\n"
                        "Date: {{DATE}}\n\nReply.\n",
                        "labels": ["\\Sent"],
                        "internaldate": "2026-01-02T03:04:05Z",
                    },
                    {"raw": "Subject: spam\n\nBuy.\n", "location": "spam", "internaldate": "+1d"},
                ],
            }
        ],
    }
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed))
    return path


def test_seed_file(tmp_path: Path) -> None:
    path = write_seed(tmp_path)
    with GmailEmulator(seed=path) as emu:
        now = datetime.now(UTC)
        first, second, spam = emu.messages(ALICE)
        assert first.labels == frozenset({"\\Inbox", "Work"}) and first.flags == frozenset({"\\Seen"})
        assert abs(first.internaldate - (now - timedelta(hours=3))) < timedelta(minutes=1)
        date_line = next(line for line in first.raw.split(b"\r\n") if line.startswith(b"Date: "))
        written = parsedate_to_datetime(date_line[6:].decode())
        assert abs(written - (now - timedelta(days=30))) < timedelta(minutes=1)
        assert second.thrid == first.thrid and second.labels == frozenset({"\\Sent"})
        assert second.internaldate == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        assert spam.location == "spam" and spam.internaldate > now
        assert emu.knobs.sent_filing_delay_s == 2
        assert emu.knobs.store_not_applied_ids == {"x@example.com"}
        emu.reset(path)
        assert len(emu.messages(ALICE)) == 3


def test_seed_validation_reports_every_problem(tmp_path: Path) -> None:
    bad = {
        "accounts": [
            {
                "address": "not-an-address",
                "password": "",
                "labels": ["\\Bad", "Ok", "ok"],
                "messages": [
                    {"eml": "missing.eml"},
                    {"raw": "Subject: x\n\n", "eml": "x.eml"},
                    {"raw": "Subject: x\n\n", "labels": ["\\Nope", "Undeclared"], "flags": ["\\Bogus", "bad word"]},
                    {"raw": "Date: {{DATE:yesterday}}\n\n", "internaldate": "soon", "location": "bin"},
                ],
            },
            {"address": ALICE, "password": "p", "extra": 1},
        ],
        "knobs": {
            "delivery_delay_s": "fast",
            "nonsense": True,
            "unknown_label_policy": "maybe",
            "date_search_timezone": "Europe/Praha",
        },
        "colour": "blue",
    }
    with pytest.raises(SeedError) as info:
        load_seed(bad, base_dir=tmp_path)
    text = str(info.value)
    for fragment in [
        "accounts[0].address",
        "accounts[0].password",
        "accounts[0].labels[0]",
        "accounts[0].labels[2]: 'ok' is listed twice",
        "accounts[0].messages[0].eml: cannot read",
        "accounts[0].messages[1]: needs exactly one of",
        "unknown system label '\\\\Nope'",
        "'Undeclared' is not one of the account's labels",
        "unknown system flag '\\\\Bogus'",
        "'bad word' is not a valid keyword",
        "bad placeholder '{{DATE:yesterday}}'",
        "accounts[0].messages[3].internaldate",
        "accounts[0].messages[3].location",
        "accounts[1].extra: unknown key",
        "knobs.delivery_delay_s",
        "knobs.nonsense: unknown knob",
        "knobs.unknown_label_policy",
        "knobs.date_search_timezone: unknown IANA timezone 'Europe/Praha'",
        "seed.colour: unknown key",
    ]:
        assert fragment in text, fragment
    assert len(info.value.problems) >= 18


def test_seed_file_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    with pytest.raises(SeedError, match="not valid JSON"):
        GmailEmulator(seed=broken).start()
    with pytest.raises(SeedError, match="cannot read"):
        load_seed(tmp_path / "absent.json")
    dup = {"accounts": [{"address": ALICE, "password": "a"}, {"address": ALICE.upper(), "password": "b"}]}
    with pytest.raises(SeedError, match="listed twice"):
        load_seed(dup)


def test_packaged_demo_seed_is_valid() -> None:
    import importlib.resources

    resource = importlib.resources.files("gmail_emulator") / "seeds" / "demo" / "seed.json"
    with importlib.resources.as_file(resource) as path:
        seed = load_seed(path)
    assert len(seed.accounts) >= 1
    assert all(acc.messages for acc in seed.accounts)


def test_login_peak_counts_sessions_logged_in_at_once(emu: GmailEmulator) -> None:
    emu.reset_counters()
    first, second, third = imap(emu), imap(emu), imap(emu)
    assert emu.logged_in_now(ALICE) == 3
    first.logout()
    second.logout()
    fourth = imap(emu)
    assert emu.login_peak(ALICE) == 3 and emu.logged_in_now(ALICE) == 2
    emu.reset_counters()  # the peak starts again from the sessions open now
    assert emu.login_peak(ALICE) == 2
    third.logout()
    fourth.logout()


def test_bandwidth_makes_replies_trickle(emu: GmailEmulator) -> None:
    client = imap(emu)
    try:
        emu.set_bandwidth(100)  # each ~20-byte NOOP answer then occupies the line for ~0.2 s
        started = time.monotonic()
        client.noop()
        client.noop()
        slow = time.monotonic() - started
        emu.set_bandwidth(None)
        client.noop()  # waits out the pause the last slow answer left behind
        started = time.monotonic()
        client.noop()
        fast = time.monotonic() - started
        assert slow >= 0.15 and fast < 0.1
    finally:
        emu.set_bandwidth(None)
        client.logout()
