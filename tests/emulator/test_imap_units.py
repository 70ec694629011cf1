"""Unit tests of the IMAP front's pure parts: modified UTF-7, tokens, FETCH items, redaction, faults."""

from __future__ import annotations

import asyncio

import pytest

from gmail_emulator.imap_codec import (
    decode_mutf7,
    encode_mutf7,
    format_internaldate,
    label_wire,
    labels_wire,
    parse_internaldate,
)
from gmail_emulator.imap_parser import (
    ParseError,
    Token,
    parse_command,
    parse_fetch_items,
    parse_sequence_set,
    read_command,
    seq_contains,
)
from gmail_emulator.observe import FaultRule, Observer, redact_imap_line, redact_smtp_line

# --------------------------------------------------------------------------- modified UTF-7


@pytest.mark.parametrize(
    ("text", "wire"),
    [
        ("INBOX", "INBOX"),
        ("Übung", "&ANw-bung"),
        ("R&D", "R&-D"),
        ("Été", "&AMk-t&AOk-"),
        ("[Gmail]/Вся почта", "[Gmail]/&BBIEQQRP- &BD8EPgRHBEIEMA-"),
        ("日本語", "&ZeVnLIqe-"),
        ("a~b", "a~b"),
        ("😀", "&2D3eAA-"),
    ],
)
def test_mutf7_round_trip(text: str, wire: str) -> None:
    assert encode_mutf7(text) == wire
    assert decode_mutf7(wire) == text


def test_mutf7_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="unterminated"):
        decode_mutf7("&AMk")
    with pytest.raises(ValueError, match="bad modified UTF-7"):
        decode_mutf7("&!!-")


def test_label_quoting() -> None:
    assert label_wire("\\Inbox", utf8=False) == b'"\\\\Inbox"'
    assert label_wire("Work", utf8=False) == b"Work"
    assert label_wire("R&D", utf8=False) == b"R&-D"
    assert label_wire("work/project x", utf8=False) == b'"work/project x"'
    assert label_wire("[foobar]", utf8=False) == b'"[foobar]"'
    assert label_wire("()", utf8=False) == b'"()"'
    assert label_wire("NIL", utf8=False) == b'"NIL"'
    assert label_wire("Übung", utf8=False) == b"&ANw-bung"
    assert labels_wire([], utf8=False) == b"()"
    assert labels_wire(["b", "\\Starred", "A", "\\Important"], utf8=False) == b'("\\\\Important" "\\\\Starred" A b)'


def test_internaldate_format_and_parse() -> None:
    when = parse_internaldate("02-Jan-2026 03:04:05 +0100")
    assert format_internaldate(when) == b'"02-Jan-2026 02:04:05 +0000"'
    assert parse_internaldate(" 2-Jan-2026 03:04:05 +0000").day == 2
    with pytest.raises(ValueError, match="bad date-time"):
        parse_internaldate("2026-01-02")


# --------------------------------------------------------------------------- parser


def test_parse_command_tokens() -> None:
    cmd = parse_command(b'a1 UID fetch 1:*,7 (UID BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]<0.2048>) "x\\"y"\r\n')
    assert cmd.tag == "a1"
    assert cmd.name == "UID FETCH"
    assert cmd.args == ["1:*,7", ["UID", "BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]<0.2048>"], b'x"y']


def test_parse_command_literals() -> None:
    cmd = parse_command(b"a2 UID SEARCH CHARSET UTF-8 X-GM-RAW {5}\r\ncaf\xc3\xa9 NIL\r\n")
    assert cmd.args == ["CHARSET", "UTF-8", "X-GM-RAW", "café".encode(), "NIL"]
    cmd = parse_command(b"a3 LOGIN {5+}\r\nalice {3}\r\npw!\r\n")
    assert cmd.args == [b"alice", b"pw!"]


@pytest.mark.parametrize(
    "line",
    [
        b"\r\n",
        b"a1\r\n",
        b'a1 SELECT "unterminated\r\n',
        b"a1 FETCH 1 (UID\r\n",
        b"a1 FETCH 1 UID)\r\n",
        b'a1 SEARCH X-GM-RAW "caf\xc3\xa9"\r\n',  # 8-bit in a quoted string: Gmail says BAD
        b"a1 SELECT \xff\xfe\r\n",
        b"a1 LOGIN {10}\r\nshort\r\n",
        b"+ NOOP\r\n",
    ],
)
def test_parse_command_errors(line: bytes) -> None:
    with pytest.raises(ParseError):
        parse_command(line)


def test_utf8_quoted_allowed_after_enable() -> None:
    cmd = parse_command(b'a1 SEARCH X-GM-RAW "caf\xc3\xa9"\r\n', utf8=True)
    assert cmd.args[1] == "café".encode()


def test_sequence_sets() -> None:
    seqset = parse_sequence_set("1:3,7,9:*")
    assert [v for v in range(1, 12) if seq_contains(seqset, v, 11)] == [1, 2, 3, 7, 9, 10, 11]
    assert seq_contains(parse_sequence_set("100:*"), 5, 5)  # RFC 3501: n:* with n > * still names *
    assert seq_contains(parse_sequence_set("*"), 42, 42)
    bad_sets: list[Token] = ["", "0", "1:", "a", "1,,2", ["1"]]
    for bad in bad_sets:
        with pytest.raises(ParseError):
            parse_sequence_set(bad)


def test_fetch_items() -> None:
    items = parse_fetch_items(["uid", "BODY.PEEK[1.2.HEADER.FIELDS (a b)]<0.2048>", "body[]", "BODY[TEXT]<5>", "BODY"])
    assert [i.name for i in items] == ["UID", "BODY[]", "BODY[]", "BODY[]", "BODY"]
    assert items[1].peek and items[1].section == "1.2.HEADER.FIELDS (A B)" and items[1].partial == (0, 2048)
    assert items[1].response_key == b"BODY[1.2.HEADER.FIELDS (A B)]<0>"
    assert items[2].response_key == b"BODY[]" and not items[2].peek
    assert items[3].partial == (5, None)
    assert [i.name for i in parse_fetch_items("FAST")] == ["FLAGS", "INTERNALDATE", "RFC822.SIZE"]
    bad_items: list[Token] = ["BODY.PEEK", "BODY[HEADER.FIELDS]", "BODY[1.MIMEX]", "BODY[0]", "FOO", [], ["UID", b"x"]]
    for bad in bad_items:
        with pytest.raises(ParseError):
            parse_fetch_items(bad)


def _reader(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


def test_read_command_literals() -> None:
    async def run() -> None:
        acks: list[int] = []

        async def ack() -> None:
            acks.append(1)

        reader = _reader(b"a1 LOGIN {5}\r\nalice {4+}\r\npass\r\nnext")
        raw = await read_command(reader, ack, literal_minus_max=4096, max_literal=1 << 20)
        assert raw is not None and raw.error is None
        assert raw.data == b"a1 LOGIN {5}\r\nalice {4+}\r\npass\r\n"
        assert acks == [1]  # only the synchronising literal is acknowledged
        assert await read_command(reader, ack, literal_minus_max=4096, max_literal=1 << 20) is None

        big = _reader(b"a2 APPEND INBOX {5000+}\r\n" + b"x" * 5000 + b"\r\n")
        raw = await read_command(big, ack, literal_minus_max=4096, max_literal=1 << 20)
        assert raw is not None and raw.error is not None and raw.error.startswith("BAD [TOOBIG]")

        huge = _reader(b"a3 APPEND INBOX {99999999}\r\n")
        raw = await read_command(huge, ack, literal_minus_max=4096, max_literal=1 << 20)
        assert raw is not None and raw.error is not None and raw.error.startswith("NO [TOOBIG]")
        assert acks == [1]

    asyncio.run(run())


# --------------------------------------------------------------------------- observer


def test_redaction() -> None:
    assert redact_imap_line(b'a1 LOGIN me@x "secret pw"\r\n') == b"a1 LOGIN me@x ***\r\n"
    assert redact_imap_line(b'a1 login "me x" secret\r\n') == b'a1 login "me x" ***\r\n'
    assert redact_imap_line(b"a1 LOGIN {4}\r\nme@x {6}\r\nsecret\r\n") == b"a1 LOGIN {4}\r\nme@x ***\r\n"
    assert redact_imap_line(b"a1 AUTHENTICATE PLAIN AGFsaWNlAHB3\r\n") == b"a1 AUTHENTICATE PLAIN ***\r\n"
    assert redact_imap_line(b"a1 AUTHENTICATE PLAIN\r\n") == b"a1 AUTHENTICATE PLAIN\r\n"
    assert redact_imap_line(b"a1 SELECT INBOX\r\n") == b"a1 SELECT INBOX\r\n"
    assert redact_smtp_line(b"AUTH PLAIN AGFsaWNlAHB3\r\n") == b"AUTH PLAIN ***\r\n"
    assert redact_smtp_line(b"AUTH LOGIN\r\n") == b"AUTH LOGIN\r\n"
    assert redact_imap_line(b"AUTH PLAIN AGFsaWNlAHB3\r\n") == b"AUTH PLAIN ***\r\n"


def test_fault_rules_count_and_expire() -> None:
    obs = Observer()
    obs.add_fault(FaultRule("no:third", match="NOOP", nth=3))
    obs.add_fault(FaultRule("bad:always", match="FETCH", times=-1))
    obs.add_fault(FaultRule("greeting_bye"))
    obs.add_fault(FaultRule("refuse_login:invalid", account="bob@x"))
    assert obs.take_fault(1, "NOOP", None) is None
    assert obs.take_fault(1, "NOOP", None) is None
    fired = obs.take_fault(1, "NOOP", None)
    assert fired is not None and fired.kind == "no" and fired.argument == "third"
    assert obs.take_fault(1, "NOOP", None) is None  # used up
    for _ in range(3):
        rule = obs.take_fault(1, "UID FETCH", None)
        assert rule is not None and rule.action == "bad:always"
    assert obs.take_fault(1, "SELECT", None) is None  # connect-time rules never fire on commands
    connect = obs.take_fault(2, "CONNECT", None)
    assert connect is not None and connect.kind == "greeting_bye"
    assert obs.take_fault(3, "LOGIN", "alice@x") is None
    login = obs.take_fault(3, "LOGIN", "BOB@x")
    assert login is not None and login.argument == "invalid"
    obs.clear_faults()
    assert obs.take_fault(1, "UID FETCH", None) is None


def test_observer_records_and_latency() -> None:
    obs = Observer()
    obs.latency = {"*": 0.01, "FETCH": 0.2, "UID SEARCH": 0.3}
    assert obs.latency_for("UID FETCH") == 0.2
    assert obs.latency_for("UID SEARCH") == 0.3
    assert obs.latency_for("NOOP") == 0.01
    obs.record_command(1, "a@x", "NOOP", "x" * 500, 0.0, 0.1)
    obs.record_command(2, None, "LOGIN", "t LOGIN b@x ***", 0.0, 0.1)
    obs.record_login(1, "A@x")
    obs.record_wire(1, "imap", "s", b"12345")
    obs.record_wire(1, "smtp", "s", b"123")
    assert len(obs.commands()) == 2 and len(obs.commands("A@X")) == 1
    assert len(obs.commands()[0].line) == 300
    assert obs.connections("a@x") == 1 and obs.connections("b@x") == 0
    assert obs.wire_bytes() == 5 and obs.wire_bytes("s", "smtp") == 3
    obs.reset()
    assert obs.commands() == [] and obs.wire_log() == [] and obs.latency == {}


def test_plaintext_server_and_stop_with_open_sessions() -> None:
    from gmail_emulator.imap_server import ImapServer
    from gmail_emulator.store import Store

    async def run() -> None:
        store = Store()
        store.add_account("p@x", "pw")
        server = ImapServer(store, Observer(), None)
        port = await server.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert (await reader.readline()).startswith(b"* OK Gimap ready")
        writer.write(b"a1 LOGIN p@x pw\r\na2 SELECT INBOX\r\n")
        await writer.drain()
        lines = [await reader.readline() for _ in range(10)]
        assert lines[1] == b"a1 OK p@x authenticated (Success)\r\n"
        assert lines[-1] == b"a2 OK [READ-WRITE] INBOX selected. (Success)\r\n"
        idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", port)
        await idle_reader.readline()
        idle_writer.write(b"b1 LOGIN p@x pw\r\nb2 IDLE\r\n")
        await idle_writer.drain()
        assert (await idle_reader.readline()).startswith(b"* CAPABILITY")
        await idle_reader.readline()
        assert await idle_reader.readline() == b"+ idling\r\n"
        await server.stop()  # sessions (one of them idling) are closed, nothing hangs
        assert await reader.read() == b""
        assert await idle_reader.read() == b""
        assert server.sessions == set() and store.accounts["p@x"].listeners == []
        writer.close()
        idle_writer.close()

    asyncio.run(run())
