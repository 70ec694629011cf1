"""The one web request (gmail/web.py) against a local HTTPS stand-in over real TLS sockets (issue 36).

What the stand-in received is compared byte for byte; every refusal is shown to come before any
connection: socket.socket.connect and getaddrinfo are watched for the whole test (and a dial to
anything but the stand-in is refused on the spot, because on this machine an outbound connection
can be answered by something in between), and the stand-in counts its connections.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail import __version__, deadline, policy
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.endpoint import ENDPOINT_ENV
from mcp_multi_gmail.gmail.web import (
    PRODUCTION,
    OneClickAnswer,
    OneClickTarget,
    WebRequestFailed,
    WebSettings,
    plan_one_click,
    post_one_click,
    request_bytes,
    web_settings,
)
from support.waiting import wait_until_async
from support.web_standin import INJECTION, Answer, WebStandIn

pytestmark = pytest.mark.anyio

URL = "https://news.example/unsubscribe/u-4821?list=weekly&e=c3Vic2NyaWJlcg"
TEST_ENDPOINT = {ENDPOINT_ENV: "127.0.0.1:1993:1465:1587"}  # only its presence matters to web_settings
EXPECTED_HEADERS = [
    (b"Host", b"news.example"),
    (b"User-Agent", f"mcp-multi-gmail/{__version__} (RFC 8058 one-click unsubscribe)".encode()),
    (b"Content-Type", b"application/x-www-form-urlencoded"),
    (b"Content-Length", b"26"),
    (b"Connection", b"close"),
]


@dataclass
class Dials:
    """Every connect() and getaddrinfo() of the test's process while the fixture runs."""

    connects: list[tuple[Any, ...]] = field(default_factory=list)
    lookups: list[str] = field(default_factory=list)
    # What the patched getaddrinfo answers per host (production-mode tests); absent: no such name.
    answers: dict[str, list[str] | BaseException | Callable[[], list[str]]] = field(default_factory=dict)


@pytest.fixture
def dials(monkeypatch: pytest.MonkeyPatch) -> Dials:
    record = Dials()
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        record.connects.append(tuple(address))
        if address[0] != "127.0.0.1":
            raise ConnectionRefusedError("the tests never dial out")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        record.connects.append(tuple(address))
        raise AssertionError("connect_ex is never used")

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        record.lookups.append(host)
        answer = record.answers.get(host)
        if answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if isinstance(answer, BaseException):
            raise answer
        addresses = answer() if callable(answer) else answer
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses
        ]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return record


def target(url: str) -> OneClickTarget:
    """The URL as the policy module passes it on (policy.one_click_target: the one rule for a URL)."""
    decided = policy.one_click_target(url)
    assert not isinstance(decided, str), decided
    return decided


def settings_for(standin: WebStandIn, *hosts: str, extra: tuple[str, ...] = (), ca: bool = True) -> WebSettings:
    environ = {**TEST_ENDPOINT, **standin.environ(*hosts, extra=extra)}
    if not ca:
        del environ["MG_WEB_CA_FILE"]
    return web_settings(environ)


# --- the request, exactly ------------------------------------------------------------------------------


async def test_one_click_sends_exactly_one_fixed_post(web_standin: WebStandIn, dials: Dials) -> None:
    answer = await post_one_click(target(URL), settings_for(web_standin))
    assert answer == OneClickAnswer(status=200, host="news.example", address="127.0.0.1")
    [connection] = web_standin.settled()
    assert connection.server_name == "news.example"  # SNI carries the host's name, not the address
    received = connection.request
    assert received is not None
    assert received.request_line == b"POST /unsubscribe/u-4821?list=weekly&e=c3Vic2NyaWJlcg HTTP/1.1"
    assert received.headers == EXPECTED_HEADERS  # no cookie, authorization, referrer or anything else
    assert received.body == b"List-Unsubscribe=One-Click"
    assert received.after == b""  # nothing more on the connection, which the client then closed
    assert len(web_standin.requests) == 1
    assert dials.connects == [("127.0.0.1", web_standin.port)]  # the mapped address itself
    assert dials.lookups == []  # test mode resolves through the map, never through DNS


async def test_the_request_is_the_same_bytes_that_request_bytes_builds(web_standin: WebStandIn) -> None:
    await post_one_click(target(URL), settings_for(web_standin))
    [received] = web_standin.requests
    assert received.raw == request_bytes(target(URL))


async def test_a_fragment_is_not_sent_and_an_empty_path_is_slash(web_standin: WebStandIn) -> None:
    await post_one_click(target("https://news.example#section"), settings_for(web_standin))
    await post_one_click(target("https://NEWS.example:443/a%20b/?x=1#frag"), settings_for(web_standin))
    assert [r.request_line for r in web_standin.requests] == [b"POST / HTTP/1.1", b"POST /a%20b/?x=1 HTTP/1.1"]
    assert [dict(r.headers)[b"Host"] for r in web_standin.requests] == [b"news.example", b"news.example"]


async def test_a_redirect_is_reported_and_not_followed(web_standin: WebStandIn, dials: Dials) -> None:
    web_standin.answer = Answer.REDIRECT  # to https://news.example/confirm?again=1, which the map would reach
    answer = await post_one_click(target(URL), settings_for(web_standin))
    assert answer.status == 302
    [connection] = web_standin.settled()
    assert connection.request is not None and connection.request.after == b""
    assert len(dials.connects) == 1


async def test_a_slow_endpoint_ends_at_the_deadline_with_the_request_sent(web_standin: WebStandIn) -> None:
    web_standin.answer = Answer.SLOW
    started = time.monotonic()
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), settings_for(web_standin), timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert web_standin.waiting.is_set() and len(web_standin.requests) == 1
    assert failed.value.request_sent is True and failed.value.code == "upstream_error"
    assert failed.value.retryable is False
    assert "within the deadline of 1 s" in failed.value.message and "may have acted" in failed.value.message
    # Not before the deadline; the upper bound only tells the deadline from the answer, which never
    # comes (seconds of slack: the suite's other workers share the cores).
    assert 1.0 <= elapsed < 5.0
    [connection] = web_standin.settled()  # the client closed its connection, the answer still held back
    assert connection.gave_up.is_set() and connection.request is not None and connection.request.after == b""


async def test_nothing_the_endpoint_wrote_reaches_the_answer(web_standin: WebStandIn) -> None:
    web_standin.answer = Answer.INJECTION  # in the reason phrase, a header field and the body
    answer = await post_one_click(target(URL), settings_for(web_standin))
    assert answer == OneClickAnswer(status=200, host="news.example", address="127.0.0.1")
    assert INJECTION not in repr(answer) and "IGNORE" not in repr(answer)


async def test_only_the_status_line_is_read(web_standin: WebStandIn) -> None:
    """The stand-in sends its status line and then waits for the client to close: a client that read
    on for the header fields or the body would wait until its deadline and fail."""
    web_standin.answer = Answer.STATUS_THEN_HOLD
    answer = await post_one_click(target(URL), settings_for(web_standin), timeout_s=20.0)
    assert answer.status == 200
    [connection] = web_standin.settled()
    assert connection.closed_by_client_after_status


async def test_interim_answers_are_skipped_up_to_the_final_status(web_standin: WebStandIn) -> None:
    web_standin.answer = Answer.RAW
    web_standin.raw_answer = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        b"HTTP/1.1 204 No Content\r\n\r\n"
    )
    assert (await post_one_click(target(URL), settings_for(web_standin))).status == 204


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        (b"<html>unsubscribed</html>", "did not begin with an HTTP status line"),
        (b"HTTP/1.1 99 Odd\r\n\r\n", "did not begin with an HTTP status line"),
        (None, "closed the connection without answering"),
        (b"HTTP/1.1 100 Continue\r\n" + b"X: y\r\n" * 2000, "did not bring a final status line"),
    ],
    ids=["not-http", "bad-code", "hang-up", "endless-interim"],
)
async def test_an_answer_without_a_status_line_fails_with_the_request_sent(
    web_standin: WebStandIn, raw: bytes | None, what: str
) -> None:
    web_standin.answer = Answer.RAW if raw is not None else Answer.HANG_UP
    web_standin.raw_answer = raw or b""
    started = time.monotonic()
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), settings_for(web_standin), timeout_s=20.0)
    assert failed.value.request_sent is True and what in failed.value.message
    assert "unsubscribed" not in failed.value.message and "Odd" not in failed.value.message
    assert time.monotonic() - started < 20.0  # told apart at once, not at the deadline


# --- TLS: verification for the host's name, never switched off -------------------------------------------


async def test_a_certificate_for_another_name_is_refused(web_standin: WebStandIn) -> None:
    settings = settings_for(web_standin, "other.example")  # mapped to the stand-in, whose certificate lacks it
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target("https://other.example/u"), settings)
    assert failed.value.request_sent is False and failed.value.retryable is True
    assert "certificate is not valid for other.example" in failed.value.message
    [connection] = web_standin.settled()
    assert connection.handshake_error is not None and connection.request is None


async def test_without_the_test_ca_the_stand_in_is_not_trusted(web_standin: WebStandIn) -> None:
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), settings_for(web_standin, ca=False))
    assert failed.value.request_sent is False and "certificate" in failed.value.message
    assert web_standin.requests == []


# --- refused before any connection -----------------------------------------------------------------------

# What the URL rule passes and the lookup refuses (the URL rule itself: tests/test_policy_unsubscribe.py).
REFUSED = [
    ("https://private.example/u", ("private.example=10.0.0.1:443",), "resolves to 10.0.0.1, private-use (10.0.0.0/8"),
    (
        "https://metadata.example/u",
        ("metadata.example=169.254.169.254:443",),
        "resolves to 169.254.169.254, link-local",
    ),
    ("https://v6.example/u", ("v6.example=[::1]:443",), "resolves to ::1, loopback (::1/128, RFC 4291)"),
    (
        "https://mapped.example/u",
        ("mapped.example=[::ffff:127.0.0.1]:443",),
        "IPv4-mapped (::ffff:0:0/96, RFC 4291), a form of the IPv4 address 127.0.0.1, which is loopback "
        "(127.0.0.0/8, RFC 1122); such forms are never contacted",
    ),
    ("https://cgnat.example/u", ("cgnat.example=100.64.0.1:443",), "resolves to 100.64.0.1, shared address space"),
    ("https://six.example/u", ("six.example=[2002:7f00:1::1]:443",), "6to4 (2002::/16, RFC 3056)"),
    ("https://nat64.example/u", ("nat64.example=[64:ff9b::7f00:1]:443",), "IPv4/IPv6 translation (NAT64)"),
    ("https://doc.example/u", ("doc.example=192.0.2.10:443",), "documentation (TEST-NET-1)"),
    ("https://missing.example/u", (), "its host missing.example does not resolve (test mode: only the hosts in"),
    ("https://93.184.216.34/u", (), "its host 93.184.216.34 does not resolve (test mode"),
    ("https://[2606:4700::1111]/u", (), "its host 2606:4700::1111 does not resolve (test mode"),
]


@pytest.mark.parametrize(("url", "extra", "reason"), REFUSED, ids=[r[0][:60] for r in REFUSED])
async def test_refused_before_any_connection(
    web_standin: WebStandIn, dials: Dials, url: str, extra: tuple[str, ...], reason: str
) -> None:
    settings = settings_for(web_standin, extra=extra)
    with pytest.raises(MailError) as refused:
        await post_one_click(target(url), settings)
    assert type(refused.value) is MailError and refused.value.code == "unsubscribe_refused"
    assert reason in refused.value.message and refused.value.message.endswith("Nothing was contacted.")
    assert "passed every rule" in refused.value.message and "what the network answered now" in refused.value.message
    assert "secret" not in refused.value.message
    assert dials.connects == [] and dials.lookups == []
    assert web_standin.connections == []
    # A dry run refuses alike, and contacts nobody either.
    with pytest.raises(MailError) as planned:
        await plan_one_click(target(url), settings)
    assert planned.value.message == refused.value.message


# --- production: one lookup, every address checked, the checked address dialled -----------------------------


async def test_any_refused_address_among_the_answers_refuses(dials: Dials) -> None:
    dials.answers["news.example"] = ["93.184.216.34", "2606:4700::1111", "10.0.0.1"]
    with pytest.raises(MailError) as refused:
        await post_one_click(target(URL), PRODUCTION)
    assert refused.value.code == "unsubscribe_refused" and "resolves to 10.0.0.1, private-use" in refused.value.message
    assert dials.lookups == ["news.example"] and dials.connects == []


@pytest.mark.parametrize(
    ("answers", "reason"),
    [
        (["127.0.0.1"], "loopback (127.0.0.0/8"),  # no exception for loopback outside test mode
        (["::ffff:10.1.2.3"], "IPv4-mapped"),
        (["::ffff:8.8.8.8"], "IPv4-mapped"),  # a mapped form is refused even of a global address
        (["fe80::1"], "link-local (fe80::/10"),
        (["2001:db8::5"], "documentation (2001:db8::/32"),
        (["2001:0:4136:e378:8000:63bf:3fff:fdd2"], "Teredo"),
        (["ff02::1"], "multicast"),
        (["0.0.0.0"], "'this host on this network'"),
    ],
)
async def test_production_lookup_answers_that_are_refused(dials: Dials, answers: list[str], reason: str) -> None:
    dials.answers["localhost"] = answers
    with pytest.raises(MailError) as refused:
        await post_one_click(target("https://localhost/u"), PRODUCTION)
    assert refused.value.code == "unsubscribe_refused" and reason in refused.value.message
    assert dials.connects == []


async def test_an_ip_literal_is_dialled_without_a_lookup(dials: Dials) -> None:
    # A literal the URL rule refused never gets here (policy.one_click_target checks its address).
    for url, dialled in (
        ("https://93.184.216.34/u", "93.184.216.34"),
        ("https://[2606:4700::1111]/u", "2606:4700::1111"),
    ):
        with pytest.raises(WebRequestFailed) as failed:
            await post_one_click(target(url), PRODUCTION)  # the fixture refuses the dial: tests never go out
        assert failed.value.request_sent is False and dials.connects[-1][:2] == (dialled, 443)
    assert dials.lookups == []


async def test_the_checked_address_is_dialled_and_the_name_never_looked_up_again(dials: Dials) -> None:
    """A rebinding resolver: global at the first lookup, loopback at any later one."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    dials.answers["news.example"] = lambda: next(answers)
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), PRODUCTION)  # the fixture refuses the dial: tests never go out
    assert dials.lookups == ["news.example"]
    assert dials.connects == [("93.184.216.34", 443)]
    assert failed.value.request_sent is False and "refused" in failed.value.message


async def test_every_checked_address_is_tried_in_order_until_one_connects(dials: Dials) -> None:
    dials.answers["news.example"] = ["2606:4700::1111", "93.184.216.34"]
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), PRODUCTION)
    assert [c[:2] for c in dials.connects] == [("2606:4700::1111", 443), ("93.184.216.34", 443)]
    assert "2606:4700::1111, 93.184.216.34" in failed.value.message and failed.value.request_sent is False


async def test_a_name_that_does_not_exist_is_refused_and_a_failing_resolver_is_retryable(dials: Dials) -> None:
    with pytest.raises(MailError) as refused:
        await post_one_click(target("https://nowhere.example/u"), PRODUCTION)
    assert refused.value.code == "unsubscribe_refused" and "does not resolve" in refused.value.message
    dials.answers["news.example"] = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), PRODUCTION)
    assert failed.value.request_sent is False and failed.value.retryable is True
    assert "Temporary failure in name resolution" in failed.value.message
    assert dials.connects == []


async def test_the_deadline_covers_the_lookup(dials: Dials) -> None:
    stuck = threading.Event()

    def slow_lookup() -> list[str]:
        stuck.wait(10)
        return ["93.184.216.34"]

    dials.answers["news.example"] = slow_lookup
    started = time.monotonic()
    with pytest.raises(WebRequestFailed) as failed:
        await post_one_click(target(URL), PRODUCTION, timeout_s=0.5)
    elapsed = time.monotonic() - started
    stuck.set()
    assert failed.value.request_sent is False and "lookup of news.example" in failed.value.message
    assert 0.5 <= elapsed < 5.0  # the lookup would take 10 s; slack for a machine under load
    assert dials.connects == []


async def test_a_dry_run_resolves_and_checks_but_connects_nowhere(web_standin: WebStandIn, dials: Dials) -> None:
    plan = await plan_one_click(target(URL), settings_for(web_standin))
    assert plan.target.host == "news.example" and [(str(a), p) for a, p in plan.addresses] == [
        ("127.0.0.1", web_standin.port)
    ]
    dials.answers["news.example"] = ["93.184.216.34", "2606:4700::1111", "93.184.216.34"]  # a repeat, once
    plan = await plan_one_click(target(URL), PRODUCTION)
    assert [str(a) for a, _ in plan.addresses] == ["93.184.216.34", "2606:4700::1111"]
    assert dials.connects == [] and web_standin.connections == []


# --- the tool call's own deadline ---------------------------------------------------------------------------


async def test_the_tool_calls_deadline_cuts_the_request_and_says_what_it_was_doing(web_standin: WebStandIn) -> None:
    web_standin.answer = Answer.SLOW
    with deadline.call_scope(30.0) as progress:
        task = asyncio.ensure_future(post_one_click(target(URL), settings_for(web_standin)))
        while not web_standin.waiting.is_set():
            await asyncio.sleep(0.01)
        assert "waiting for news.example to answer the one-click unsubscribe request" in progress.doing
        progress.expire()  # what the tool wrapper does when the call's deadline passes
        with pytest.raises(WebRequestFailed) as failed:
            await asyncio.wait_for(task, 5)
    assert failed.value.request_sent is True and "The request had gone out" in failed.value.message
    [connection] = web_standin.settled()
    assert connection.gave_up.is_set()


async def test_a_cancelled_call_closes_its_connection(web_standin: WebStandIn) -> None:
    web_standin.answer = Answer.SLOW
    task = asyncio.ensure_future(post_one_click(target(URL), settings_for(web_standin)))
    while not web_standin.waiting.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [connection] = web_standin.settled(timeout=5.0)  # well before the request's own deadline of 10 s
    assert connection.gave_up.is_set() and connection.request is not None and connection.request.after == b""


# --- the request's bytes -----------------------------------------------------------------------------------


def test_request_bytes_for_an_ip_literal_host() -> None:
    raw = request_bytes(target("https://[2606:4700::1111]/u?x=1"))
    assert raw.startswith(b"POST /u?x=1 HTTP/1.1\r\nHost: [2606:4700::1111]\r\n")
    assert raw.endswith(b"\r\n\r\nList-Unsubscribe=One-Click")


TCP_SYN_SENT = 2  # linux/tcp_states.h: the SYN is out and unanswered


def _tcp_state(sock: socket.socket) -> int:
    # The first byte of struct tcp_info (linux/tcp.h) is the connection's state.
    return socket.socket.getsockopt(sock, socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] if sock.fileno() != -1 else -1


@pytest.mark.skipif(not hasattr(socket, "TCP_INFO"), reason="reads the TCP state through Linux's TCP_INFO")
async def test_a_cancelled_call_ends_a_connect_that_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A listener whose accept queue is full drops the SYN, so connect() hangs; cancelling the call
    must cut that socket at once, not leave its thread blocked until the 10 s deadline."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):  # fill the accept queue (its length is backlog + 1 on Linux)
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    dialled: list[socket.socket] = []
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        dialled.append(sock)
        real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    settings = web_settings({**TEST_ENDPOINT, "MG_WEB_RESOLVE": f"news.example=127.0.0.1:{port}"})
    try:
        task = asyncio.ensure_future(post_one_click(target(URL), settings))
        await wait_until_async(lambda: dialled and _tcp_state(dialled[0]) == TCP_SYN_SENT, 5, "a hanging connect")
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The worker thread closes its socket once connect() returns: at once when cut.
        # (5 s: well before the 10 s deadline, with slack for a machine under load)
        await wait_until_async(lambda: dialled[0].fileno() == -1, 5, "the hanging connect cut")
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


# --- the only module that dials the web ----------------------------------------------------------------------

# What opens an outgoing connection by hand or speaks HTTP as a client. imapclient and aiosmtplib
# open Gmail's connections (the import-linter contracts keep them in gmail/); Google's token
# endpoint is oauth/google.py's.
DIALLING = ("http.client", "urllib.request", "create_connection", ".connect(", "wrap_socket", "HTTPSConnection")
MAY_DIAL = {
    "gmail/web.py": {".connect(", "wrap_socket"},
    "gmail/smtp.py": {".connect("},  # aiosmtplib's SMTP.connect, to Gmail's submission server
    "oauth/google.py": {"urllib.request"},
}


def test_gmail_web_is_the_only_module_that_dials_the_web() -> None:
    package = Path(__file__).resolve().parent.parent / "src" / "mcp_multi_gmail"
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        hits = {needle for needle in DIALLING if needle in text}
        if hits:
            found[path.relative_to(package).as_posix()] = hits
    assert found == MAY_DIAL
