"""The server's one web request to a host that is not Google's: an RFC 8058 one-click unsubscribe
POST. No other module opens a web connection to anyone but Google (oauth/google.py, the token
endpoint of a mailbox signed in with Google).

What goes out is fixed here and nowhere else: one POST of exactly `List-Unsubscribe=One-Click`
(RFC 8058 §3.1), with no cookie, no authorization, no referrer and nothing else of the user's
(§3.2). Before anything is sent:
- the URL was decided by policy.one_click_target (https on port 443, a host, no user or password,
  only URL characters, an IP literal globally reachable): this module takes only what it built;
- the host is resolved once, and every address it resolves to must be globally reachable
  (gmail/special_addresses.py); one refused address refuses the request, as a fact of the network
  at that moment (the overview, which resolves nothing, cannot know it);
- the connection goes to the checked address itself, and TLS verifies the certificate for the
  host's name (SNI too), so a second lookup cannot hand out another address (DNS rebinding).
A redirect is reported, never followed (RFC 8058 §3.1 forbids senders to answer one). Nothing of
the answer is read past its status line, so nothing the endpoint wrote reaches a result. One
deadline (10 s) covers the lookup, the connection, TLS, the request and the status line.

Tests cannot reach a public address, so `MG_WEB_RESOLVE` (host=ip:port, comma-separated; the host
a name or an IP literal a URL may name) and
`MG_WEB_CA_FILE` point the request at a local stand-in; both count only beside
`MG_GMAIL_ENDPOINT` (gmail/endpoint.py), and then no other host resolves at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from ipaddress import IPv4Address, IPv4Network, ip_address
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from .. import __version__, deadline
from ..errors import MailError
from .endpoint import EndpointError, resolve_endpoint, shared_tls_context
from .special_addresses import Address, refusal

T = TypeVar("T")
S = TypeVar("S", bound=socket.socket)

WEB_RESOLVE_ENV = "MG_WEB_RESOLVE"  # tests only: "host=ip:port,host2=ip:port"
WEB_CA_FILE_ENV = "MG_WEB_CA_FILE"  # tests only: a PEM trusted beside the system's, never instead

ONE_CLICK_TIMEOUT_S = 10.0
ONE_CLICK_BODY = b"List-Unsubscribe=One-Click"
HTTPS_PORT = 443
USER_AGENT = f"mcp-multi-gmail/{__version__} (RFC 8058 one-click unsubscribe)"
# RFC 9110 §4.1 asks senders and recipients to support at least 8000 octets in a URI.
MAX_URL_LENGTH = 8000
# The most of the answer read to find its final status line (interim 1xx answers skipped).
MAX_ANSWER_HEAD = 8192
# Threads of our own: the MCP stdio transport reads and writes through anyio's default pool.
WORKER_THREADS = 4
# In test mode, the only addresses exempt from the address rule: IPv4 loopback named in the map.
_STANDIN_NETWORK = IPv4Network("127.0.0.0/8")

logger = logging.getLogger("mcp_multi_gmail")

_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
_HOST_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_MAP_ENTRY = re.compile(r"([^=\s]+)=(\[[^\]]+\]|[^:\[\]\s]+):(\d{1,5})")
_STATUS_LINE = re.compile(rb"HTTP/[0-9]\.[0-9] ([1-5][0-9]{2})(?:[ \t][\x20-\x7e\t\x80-\xff]*)?")


# --- the settings: production, or a test's stand-in -----------------------------------------------


@dataclass(frozen=True)
class WebSettings:
    """Where the one web request may go. `resolve` is empty and `ca_file` None unless in test mode
    (MG_GMAIL_ENDPOINT set); `ignored` names the test variables set without it (start-up warns)."""

    resolve: Mapping[str, tuple[str, int]]
    ca_file: Path | None
    test_mode: bool
    ignored: tuple[str, ...] = ()


PRODUCTION = WebSettings(resolve=MappingProxyType({}), ca_file=None, test_mode=False)


def web_settings(environ: Mapping[str, str]) -> WebSettings:
    """The settings from the environment: MG_WEB_RESOLVE and MG_WEB_CA_FILE count only in test mode
    (MG_GMAIL_ENDPOINT set), so no production process is pointed at loopback by one variable.
    Raises EndpointError (Czech) for a malformed map or a missing CA file."""
    raw_map = environ.get(WEB_RESOLVE_ENV, "").strip()
    raw_ca = environ.get(WEB_CA_FILE_ENV, "").strip()
    if not resolve_endpoint(environ).overridden:
        ignored = tuple(name for name, raw in ((WEB_RESOLVE_ENV, raw_map), (WEB_CA_FILE_ENV, raw_ca)) if raw)
        return WebSettings(resolve=MappingProxyType({}), ca_file=None, test_mode=False, ignored=ignored)
    ca_file = Path(raw_ca).resolve() if raw_ca else None
    if ca_file is not None and not ca_file.is_file():
        raise EndpointError(f"{WEB_CA_FILE_ENV} ukazuje na {ca_file}, který neexistuje.")
    return WebSettings(resolve=MappingProxyType(_parse_map(raw_map)), ca_file=ca_file, test_mode=True)


def _parse_map(raw: str) -> dict[str, tuple[str, int]]:
    found: dict[str, tuple[str, int]] = {}
    for entry in (part.strip() for part in raw.split(",")):
        if not entry:
            continue
        match = _MAP_ENTRY.fullmatch(entry)
        host = match.group(1).lower() if match else ""
        address = match.group(2).strip("[]") if match else ""
        port = int(match.group(3)) if match else 0
        problem = None
        if match is None:
            problem = "nemá tvar host=ip:port"
        elif not is_host_name(host) and literal_address(host) is None:
            problem = f"{host} není jméno serveru ani IP adresa"
        elif not _is_ip(address):
            problem = f"{address} není IP adresa"
        elif not 1 <= port <= 65535:
            problem = f"port {port} je mimo 1–65535"
        elif host in found:
            problem = f"{host} je v seznamu dvakrát"
        if problem is not None:
            raise EndpointError(
                f"{WEB_RESOLVE_ENV} má tvar host=ip:port, více položek oddělených čárkou (například "
                f"news.example=127.0.0.1:8443); položka „{entry}“: {problem}."
            )
        found[_map_key(host)] = (str(ip_address(address)), port)
    return found


def _is_ip(text: str) -> bool:
    try:
        ip_address(text)
    except ValueError:
        return False
    return True


def literal_address(host: str) -> Address | None:
    """The address a URL's host writes as an IP literal (IPv6 with or without its brackets), else None."""
    try:
        return ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return None


def _map_key(host: str) -> str:
    """A host as the test-mode map names it: a name lower-cased, an IP literal in its canonical form."""
    literal = literal_address(host)
    return str(literal) if literal is not None else host.lower()


def is_host_name(host: str) -> bool:
    # A DNS name (RFC 1123 labels; '_' too, which some hosts carry); a last label of digits only is
    # not one, and would otherwise be read as a number form of an IPv4 address ("127.1", "2130706433").
    return (
        len(host) <= 253
        and _HOST_NAME.fullmatch(host) is not None
        and not host.rsplit(".", 1)[-1].replace("_", "").isdigit()
    )


# --- what the request may go to ---------------------------------------------------------------------


@dataclass(frozen=True)
class OneClickTarget:
    """A URL that policy.one_click_target passed: the host (lowercase) and the request target (path
    and query, as sent). `literal` is set when the host is an IP address written in the URL."""

    host: str
    request_target: str
    literal: Address | None = None

    @property
    def authority(self) -> str:
        """The host as a URL and the Host field write it (an IPv6 literal in brackets)."""
        return f"[{self.host}]" if self.literal is not None and self.literal.version == 6 else self.host

    @property
    def shown(self) -> str:
        """Scheme, host and path, as results show what was contacted: never the query, which names the subscriber."""
        return f"https://{self.authority}{self.request_target.partition('?')[0]}"


@dataclass(frozen=True)
class OneClickPlan:
    """What the request would contact: the host and every address it resolved to, all checked."""

    target: OneClickTarget
    addresses: tuple[tuple[Address, int], ...] = field(default=())


@dataclass(frozen=True)
class OneClickAnswer:
    status: int  # the HTTP status code (a 3xx is reported, never followed)
    host: str  # the host name contacted
    address: str  # the IP address connected to


class WebRequestFailed(MailError):
    """The request failed after its host had resolved and passed the checks (or its lookup failed
    for a reason that may pass). `request_sent`: whether the POST's bytes had started to go out,
    so the endpoint may have acted on it."""

    def __init__(self, message: str, *, request_sent: bool) -> None:
        super().__init__("upstream_error", message, retryable=not request_sent)
        self.request_sent = request_sent


def _refused_now(reason: str) -> MailError:
    return MailError(
        "unsubscribe_refused",
        f"The one-click unsubscribe URL passed every rule, but the request was refused when it was to be made: "
        f"{reason}. This is what the network answered now (mg_list_subscriptions looks up no host, so it shows "
        "one_click: true for this list). Nothing was contacted.",
    )


async def plan_one_click(
    target: OneClickTarget, settings: WebSettings, *, timeout_s: float = ONE_CLICK_TIMEOUT_S
) -> OneClickPlan:
    """Every check of `post_one_click`, the lookup included, and no connection (a dry run)."""
    return await _plan(target, settings, time.monotonic() + timeout_s, timeout_s)


async def _plan(target: OneClickTarget, settings: WebSettings, until: float, timeout_s: float) -> OneClickPlan:
    if settings.test_mode:
        entry = settings.resolve.get(_map_key(target.host))
        if entry is None:
            raise _refused_now(
                f"its host {target.host} does not resolve (test mode: only the hosts in {WEB_RESOLVE_ENV} do)"
            )
        candidates: tuple[tuple[Address, int], ...] = ((ip_address(entry[0]), entry[1]),)
    elif target.literal is not None:
        candidates = ((target.literal, HTTPS_PORT),)
    else:
        candidates = await _look_up(target.host, until, timeout_s)
    for address, _port in candidates:
        if settings.test_mode and isinstance(address, IPv4Address) and address in _STANDIN_NETWORK:
            continue  # the test's own stand-in, named in MG_WEB_RESOLVE
        why = refusal(address)
        if why is not None:
            raise _refused_now(f"its host {target.host} resolves to {address}, {why}")
    return OneClickPlan(target=target, addresses=candidates)


async def _look_up(host: str, until: float, timeout_s: float) -> tuple[tuple[Address, int], ...]:
    """The host's addresses, from one getaddrinfo on a worker thread within the deadline."""

    def lookup() -> list[tuple[object, ...]]:
        return [info[4] for info in socket.getaddrinfo(host, HTTPS_PORT, type=socket.SOCK_STREAM)]

    deadline.note(f"looking up {host} for the one-click unsubscribe")
    try:
        found = await _on_worker(lookup, until, abandon=lambda: None)
    except TimeoutError:
        raise WebRequestFailed(
            f"The lookup of {host} did not finish within the deadline of {timeout_s:g} s. Nothing was sent.",
            request_sent=False,
        ) from None
    except socket.gaierror as error:
        if error.errno in _NO_SUCH_NAME:
            raise _refused_now(f"its host {host} does not resolve") from None
        raise WebRequestFailed(
            f"The lookup of {host} failed ({error.strerror or 'no reason given'}). Nothing was sent.",
            request_sent=False,
        ) from None
    except OSError as error:
        raise WebRequestFailed(
            f"The lookup of {host} failed ({type(error).__name__}). Nothing was sent.", request_sent=False
        ) from None
    addresses: list[tuple[Address, int]] = []
    for sockaddr in found:
        address = ip_address(str(sockaddr[0]))
        if (address, HTTPS_PORT) not in addresses:
            addresses.append((address, HTTPS_PORT))
    if not addresses:
        raise _refused_now(f"its host {host} resolves to no address")
    return tuple(addresses)


_NO_SUCH_NAME = {
    code for code in (getattr(socket, name, None) for name in ("EAI_NONAME", "EAI_NODATA", "EAI_ADDRFAMILY")) if code
}


# --- the request -------------------------------------------------------------------------------------


def request_bytes(target: OneClickTarget) -> bytes:
    """The whole request, as it goes out: nothing here comes from the user, the mailbox or the message
    except the URL's host, path and query."""
    head = (
        f"POST {target.request_target} HTTP/1.1\r\n"
        f"Host: {target.authority}\r\n"
        f"User-Agent: {USER_AGENT}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(ONE_CLICK_BODY)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("ascii") + ONE_CLICK_BODY


async def post_one_click(
    target: OneClickTarget, settings: WebSettings, *, timeout_s: float = ONE_CLICK_TIMEOUT_S
) -> OneClickAnswer:
    """Send the one-click unsubscribe POST to `target` and return the answer's status line.

    MailError("unsubscribe_refused") for what the lookup refuses before any connection (a host that
    does not resolve, an address not globally reachable); WebRequestFailed ("upstream_error") for
    what fails after (connection, TLS, deadline, a broken answer)."""
    until = time.monotonic() + timeout_s
    plan = await _plan(target, settings, until, timeout_s)
    exchange = _Exchange(plan.target.host, request_bytes(plan.target), settings.ca_file, until, timeout_s)
    deadline.note(f"sending the one-click unsubscribe request to {plan.target.host}")
    try:
        status, address = await _on_worker(partial(exchange.run, plan.addresses), until, abandon=exchange.abandon)
    except TimeoutError:
        raise exchange.failure(f"no answer within the deadline of {timeout_s:g} s") from None
    except _Failed as failed:
        raise exchange.failure(failed.what) from None
    logger.info("one-click unsubscribe: %s (%s) answered HTTP %d", plan.target.host, address, status)
    return OneClickAnswer(status=status, host=plan.target.host, address=address)


class _Failed(Exception):
    """Why the exchange on the worker thread ended early (whether the request went out is the
    exchange's own record, `_Exchange.sent`)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _Exchange:
    """One request on a worker thread, and what the awaiting task may do to it: abandon it (cut its
    socket). Once abandoned, nothing more goes out: `sent` is final from then on."""

    def __init__(self, host: str, request: bytes, ca_file: Path | None, until: float, timeout_s: float) -> None:
        self.host = host
        self.request = request
        self.ca_file = ca_file
        self.until = until
        self.within = f"within the deadline of {timeout_s:g} s"
        self.sent = False
        self._abandoned = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def abandon(self) -> bool:
        """Stop the request where it is; whether its bytes had started to go out."""
        with self._lock:
            self._abandoned = True
            sock = self._sock
            sent = self.sent
        if sock is not None:
            deadline.cut(sock)
        return sent

    def failure(self, what: str) -> WebRequestFailed:
        """The error for a request that ended early; abandoning it first makes `sent` final."""
        sent = self.abandon()
        tail = "The request had gone out, so the list may have acted on it." if sent else "Nothing was sent."
        return WebRequestFailed(
            f"The one-click unsubscribe request to {self.host} failed: {what}. {tail}", request_sent=sent
        )

    @contextlib.contextmanager
    def _using(self, sock: S) -> Iterator[S]:
        """`sock` as this exchange's socket: cut at the call's deadline or when abandoned, closed after."""
        progress = deadline.current()
        try:
            if progress is not None and not progress.register(sock):
                raise _Failed("the call's deadline passed")
            with self._lock:
                if self._abandoned:
                    raise _Failed("given up")
                self._sock = sock
            yield sock
        finally:
            if progress is not None:
                progress.unregister(sock)
            sock.close()

    def _begin_sending(self) -> None:
        with self._lock:
            if self._abandoned:
                raise _Failed("given up")
            self.sent = True
        # What a tool call's own deadline error will say it was doing.
        deadline.note(f"waiting for {self.host} to answer the one-click unsubscribe request (it had gone out)")

    def _left(self) -> float:
        left = self.until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left

    def run(self, candidates: tuple[tuple[Address, int], ...]) -> tuple[int, str]:
        """Connect to the first checked address that accepts, then TLS, the request, the status line."""
        refused: OSError | None = None
        for address, port in candidates:
            try:
                sock = socket.socket(socket.AF_INET if address.version == 4 else socket.AF_INET6, socket.SOCK_STREAM)
            except OSError as error:  # no IPv6 on this machine, say
                refused = error
                continue
            with self._using(sock):
                try:
                    sock.settimeout(self._left())
                    sock.connect((str(address), port))
                except TimeoutError:
                    raise _Failed(f"no connection to {address} {self.within}") from None
                except OSError as error:
                    refused = error
                    continue
                return self._over_tls(sock, str(address)), str(address)
        raise _Failed(f"the connection to {_where(candidates)} failed ({_network_reason(refused)})")

    def _over_tls(self, sock: socket.socket, address: str) -> int:
        # Built here, not on the event loop: the first one loads the system trust store (~0.1 s of CPU).
        context = shared_tls_context(self.ca_file)
        tls = context.wrap_socket(sock, server_hostname=self.host, do_handshake_on_connect=False)
        with self._using(tls):
            try:
                tls.settimeout(self._left())
                tls.do_handshake()
            except ssl.SSLCertVerificationError as error:
                raise _Failed(
                    f"its certificate is not valid for {self.host} (verification code {error.verify_code})"
                ) from None
            except ssl.SSLError as error:
                raise _Failed(
                    f"the TLS handshake with {address} failed ({error.reason or type(error).__name__})"
                ) from None
            except TimeoutError:
                raise _Failed(f"the TLS handshake did not finish {self.within}") from None
            except OSError as error:
                raise _Failed(f"the TLS handshake with {address} broke off ({_network_reason(error)})") from None
            self._begin_sending()
            try:
                tls.settimeout(self._left())
                tls.sendall(self.request)
                return _final_status(tls, self._left)
            except TimeoutError:
                raise _Failed(f"no answer {self.within}") from None
            except (OSError, ssl.SSLError) as error:
                raise _Failed(f"the connection broke off ({_network_reason(error)})") from None


def _where(candidates: tuple[tuple[Address, int], ...]) -> str:
    return ", ".join(str(address) for address, _port in candidates)


def _network_reason(error: BaseException | None) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "refused"
    if isinstance(error, ConnectionResetError):
        return "reset"
    return type(error).__name__ if error is not None else "no address"


def _final_status(tls: ssl.SSLSocket, left: Callable[[], float]) -> int:
    """The status code of the final answer. Interim 1xx answers (100 Continue, 103 Early Hints) are
    skipped with their header fields; of the final one nothing past the status line is read."""
    answer = _AnswerReader(tls, left)
    while True:
        status = answer.status_line()
        if status >= 200 or status == 101:
            return status
        while answer.line():  # an interim answer's header fields, up to its empty line
            pass


class _AnswerReader:
    """Reads an answer one byte at a time, so that not a byte past the final status line is taken
    out of the connection, and at most MAX_ANSWER_HEAD bytes in all."""

    def __init__(self, tls: ssl.SSLSocket, left: Callable[[], float]) -> None:
        self._tls = tls
        self._left = left
        self._budget = MAX_ANSWER_HEAD

    def _byte(self) -> bytes:
        if self._budget <= 0:
            raise _Failed("its answer did not bring a final status line")
        self._tls.settimeout(self._left())
        byte = self._tls.recv(1)
        if not byte:
            raise _Failed("it closed the connection without answering")
        self._budget -= 1
        return byte

    def line(self) -> bytes:
        taken = bytearray()
        while not taken.endswith(b"\n"):
            taken += self._byte()
        return bytes(taken).rstrip(b"\r\n")

    def status_line(self) -> int:
        # Something that is not HTTP fails at its first bytes, not at the deadline (it may never send a line end).
        start = b"".join(self._byte() for _ in range(5))
        match = _STATUS_LINE.fullmatch(start + self.line()) if start == b"HTTP/" else None
        if match is None:
            raise _Failed("its answer did not begin with an HTTP status line")
        return int(match.group(1))


# --- worker threads ----------------------------------------------------------------------------------

_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _workers() -> ThreadPoolExecutor:
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="mg-web")
        return _EXECUTOR


async def _on_worker(work: Callable[[], T], until: float, *, abandon: Callable[[], object]) -> T:
    """Run `work` on one of our threads (with the caller's context variables) until `until`. At the
    deadline, or when the caller is cancelled, `abandon` cuts what the thread holds; TimeoutError."""
    submitted = _workers().submit(contextvars.copy_context().run, work)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(submitted), timeout=max(until - time.monotonic(), 0.0))
    except asyncio.CancelledError:
        abandon()
        raise
    except TimeoutError:
        abandon()
        raise
    finally:
        with contextlib.suppress(Exception):
            submitted.cancel()  # not yet on a thread: it never runs
