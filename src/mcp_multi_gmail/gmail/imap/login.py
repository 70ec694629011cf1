"""Connecting and logging in: implicit TLS, LOGIN or XOAUTH2, and the LOGOUT that always follows.

`logged_in` is the whole lifetime of one session: connect, log in, hand the session over,
translate whatever broke into the caller's error, log out (or drop the socket).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ... import deadline
from ...config import SignIn
from ...errors import MailError
from ..connections import OPEN
from ..endpoint import Endpoint
from ..refusals import THROTTLED, command_refused, login_refused
from ..special_folders import SpecialFolders
from ..xoauth2 import imap_login
from . import tokens
from .answers import text
from .failures import TooManyConnections, connection_broke, gmail_reason, network_error, too_many_connections
from .session import ImapSession

if TYPE_CHECKING:
    from imapclient import IMAPClient

# Connect quickly (a blocked port stays silent), but let big fetches take their time. Both are
# shortened to what is left of the call's deadline.
CONNECT_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 120.0
# The LOGOUT after the answer has gone back: short, because nothing useful depends on it.
LOGOUT_TIMEOUT_S = 5.0

# imapclient would otherwise log protocol lines; stdout is the MCP channel and stays silent anyway.
logging.getLogger("imapclient").setLevel(logging.WARNING)
logger = logging.getLogger(__name__)
_THROTTLED = THROTTLED.encode()

_CLIENT_CLASS: type[IMAPClient] | None = None


def _client_class() -> type[IMAPClient]:
    """IMAPClient without the CAPABILITY that imaplib sends before LOGIN.

    Gmail's greeting carries no capabilities, and its LOGIN answer carries all of them (imapclient
    asks after LOGIN if an answer ever lacks them). Asking before LOGIN cost a round trip per call
    for nothing this client uses before it is logged in."""
    global _CLIENT_CLASS
    if _CLIENT_CLASS is None:
        from imapclient import IMAPClient, tls

        class _NoEarlyCapability(tls.IMAP4_TLS):  # type: ignore[misc]
            # Told when Gmail throttles: a successful answer that ends in " [THROTTLED]".
            on_throttled: Callable[[str], None] | None = None

            def _get_capabilities(self) -> None:
                self.capabilities = ("IMAP4REV1",)  # what imaplib checks before it lets us log in

            def _command_complete(self, name: str, tag: Any) -> Any:
                typ, data = super()._command_complete(name, tag)
                said = self.on_throttled
                if typ == "OK" and said is not None and any(_THROTTLED in _upper(item) for item in data or ()):
                    said(name)
                return typ, data

        class _Client(IMAPClient):  # type: ignore[misc]
            def _create_IMAP4(self) -> Any:
                connect_timeout = getattr(self._timeout, "connect", None)
                return _NoEarlyCapability(self.host, self.port, self.ssl_context, connect_timeout)

        _CLIENT_CLASS = _Client
        tokens.install()
    return _CLIENT_CLASS


def _upper(item: object) -> bytes:
    return bytes(item).upper() if isinstance(item, bytes | bytearray) else b""


def _log_throttling(client: IMAPClient, account: str) -> None:
    """Say on stderr (once per session) that Gmail throttles the mailbox; the call itself goes on."""
    told = False

    def said(command: str) -> None:
        nonlocal told
        if not told:
            told = True
            logger.warning(
                'schránka "%s": Gmail ji teď brzdí (odpověď na %s končila „%s“), nejspíš po velkém provozu přes '
                "IMAP. Volání se povedlo, jen odpovědi chodí pomaleji.",
                account,
                command,
                THROTTLED,
            )

    imap = getattr(client, "_imap", None)
    if imap is not None and hasattr(type(imap), "on_throttled"):
        imap.on_throttled = said


def connect(endpoint: Endpoint, *, early_capability: bool = False) -> IMAPClient:
    """`early_capability`: ask CAPABILITY before LOGIN as imaplib does (the probe reports that answer)."""
    from imapclient import IMAPClient
    from imapclient.imapclient import SocketTimeout

    client_class = IMAPClient if early_capability else _client_class()
    client = client_class(
        endpoint.imap_host,
        port=endpoint.imap_port,
        ssl=True,
        ssl_context=endpoint.tls_context(),
        timeout=SocketTimeout(connect=deadline.remaining(CONNECT_TIMEOUT_S), read=deadline.remaining(READ_TIMEOUT_S)),
    )
    client.normalise_times = False  # keep INTERNALDATE's own offset; we convert to UTC ourselves
    # imapclient writes a SEARCH line and its CRLF separately; with Nagle's algorithm on, the CRLF
    # then waits for the server's delayed ACK (~40 ms per SEARCH on Linux). Send at once instead.
    with contextlib.suppress(OSError, AttributeError):
        client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return client


def log_in(client: IMAPClient, account: str, address: str, password: str | SignIn, tls: ssl.SSLContext) -> None:
    """LOGIN (or XOAUTH2 for a signed-in mailbox); a refusal raises the caller's error
    (TooManyConnections when one more try may help)."""
    refused = login_refusal(client, account, address, password, tls)
    if refused is not None:
        raise refused


def login_refusal(
    client: IMAPClient, account: str, address: str, password: str | SignIn, tls: ssl.SSLContext
) -> MailError | None:
    """LOGIN, or XOAUTH2 with the sign-in's access token (gmail/xoauth2.py: one refresh and one more
    try when Gmail refuses a token in date); None once logged in, else the caller's error for Gmail's
    refusal. A connection that drops during LOGIN raises (as Gmail's BYE said, or as a retryable
    network error)."""
    if not isinstance(password, SignIn):
        return _attempt(client, account, address, password, xoauth2=False)

    def attempt(token: str) -> None:
        refused = _attempt(client, account, address, token, xoauth2=True)
        if refused is not None:
            raise refused

    try:
        imap_login(password, tls, attempt)
    except MailError as refused:
        return refused
    return None


def check_access_token(account: str, address: str, token: str, endpoint: Endpoint) -> None:
    """One XOAUTH2 login with `token` (the sign-in checks whose account it is); raises MailError."""
    from imapclient.exceptions import IMAPClientError

    try:
        client = connect(endpoint)
    except (OSError, ssl.SSLError, IMAPClientError) as error:
        raise network_error(account, error) from None
    try:
        refused = _attempt(client, account, address, token, xoauth2=True)
    finally:
        log_out(client)
    if refused is not None:
        raise refused


def _attempt(client: IMAPClient, account: str, address: str, secret: str, *, xoauth2: bool) -> MailError | None:
    from imapclient.exceptions import IMAPClientAbortError, LoginError

    try:
        if xoauth2:
            client.oauth2_login(address, secret)
        else:
            client.login(address, secret)
    except LoginError as error:
        # imapclient wraps a connection dropped during LOGIN in LoginError too: that is the
        # network, not a refused password, and must stay retryable (unless Gmail's BYE said why).
        if isinstance(error.__context__, IMAPClientAbortError | OSError):
            raise connection_broke(account, error.__context__) from None
        refused = login_refused(account, gmail_reason(error), web_alert=_web_alert(client))
        if too_many_connections(gmail_reason(error)):
            return TooManyConnections(refused)
        return refused
    return None


def _web_alert(client: IMAPClient) -> bool:
    """Whether Gmail sent `* NO [WEBALERT <url>] Web login required.` before refusing the login
    (imaplib files the response code under its own name)."""
    untagged = getattr(getattr(client, "_imap", None), "untagged_responses", None) or {}
    if "WEBALERT" in untagged:
        return True
    return any("WEBALERT" in text(line).upper() for line in untagged.get("NO", []))


def log_out(client: IMAPClient) -> None:
    # A LOGOUT is still owed to Gmail (a dropped socket counts against its connection limit), but
    # nobody waits for it any more: a silent server must not keep the worker for the full read timeout.
    with contextlib.suppress(Exception):
        client.socket().settimeout(LOGOUT_TIMEOUT_S)
    try:
        client.logout()
    except Exception:  # noqa: BLE001 - closing is best effort: whatever LOGOUT raised, the socket still goes
        with contextlib.suppress(Exception):
            client.shutdown()


@contextmanager
def logged_in(
    account: str, address: str, password: str | SignIn, endpoint: Endpoint, folders: SpecialFolders | None = None
) -> Iterator[ImapSession]:
    """Connect and log in; always log out (or drop the socket) afterwards. `folders`: where the
    mailbox's special folders are remembered across sessions (None: looked up in each session)."""
    with OPEN.held():
        yield from _session_lifetime(account, address, password, endpoint, folders)


def _session_lifetime(
    account: str, address: str, password: str | SignIn, endpoint: Endpoint, folders: SpecialFolders | None
) -> Iterator[ImapSession]:
    from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

    try:
        client = connect(endpoint)
    except (OSError, ssl.SSLError, IMAPClientError) as error:
        raise network_error(account, error) from None
    progress = deadline.current()
    sock = client.socket()
    session: ImapSession | None = None
    _log_throttling(client, account)
    try:
        if not OPEN.track(sock):
            raise ConnectionAbortedError("the server is shutting down")  # its client has gone
        if progress is not None and not progress.register(sock):
            raise TimeoutError("the call's deadline passed")  # abandoned while connecting
        log_in(client, account, address, password, endpoint.tls_context())
        # Cache the capabilities Gmail sent with the login answer now: EXAMINE flushes imaplib's
        # untagged responses, and a later check would cost an extra CAPABILITY round trip.
        client.capabilities()
        key = (endpoint.imap_host, endpoint.imap_port, address.casefold())
        session = ImapSession(client, account, (folders, key) if folders is not None else None)
        yield session
        OPEN.answered(sock)
    except MailError:
        raise
    except IMAPClientAbortError as error:
        raise connection_broke(account, error, changed=session is not None and session.changes_sent) from None
    except (TimeoutError, OSError, ssl.SSLError) as error:
        raise network_error(account, error, changed=session is not None and session.changes_sent) from None
    except IMAPClientError as error:
        changed = session is not None and session.changes_sent
        raise command_refused(account, gmail_reason(error), changed=changed) from None
    finally:
        if session is not None and session.dead:
            with contextlib.suppress(Exception):
                client.shutdown()
        else:
            log_out(client)
        OPEN.untrack(sock)
        if progress is not None:
            progress.unregister(sock)
