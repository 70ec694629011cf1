"""The parts of the one-time sign-in: PKCE, state, the address to open, the loopback listener, the exchange.

As Google documents for desktop apps (https://developers.google.com/identity/protocols/oauth2/native-app):
the browser comes back to `http://127.0.0.1:<free port>` (the loopback redirect; the copy-and-paste
flow is gone), the request carries a PKCE S256 challenge (RFC 7636) and a `state` that is checked
(RFC 6749 §10.12), `access_type=offline` and `prompt=consent` so that a refresh token comes back
even on a second consent, and `login_hint` with the mailbox's address.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlencode, urlsplit

from ..config import OAuthClient
from .google import post_form

SCOPE = "https://mail.google.com/"  # IMAP and SMTP (https://developers.google.com/gmail/imap/xoauth2-protocol)


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, code_challenge) for the S256 method (RFC 7636 §4.1, §4.2)."""
    verifier = secrets.token_urlsafe(64)  # 86 characters from the unreserved set
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    return secrets.token_urlsafe(24)


def auth_url(client: OAuthClient, redirect_uri: str, address: str, state: str, challenge: str) -> str:
    query = {
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": SCOPE,
        "access_type": "offline",
        "prompt": "consent",
        "login_hint": address,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    separator = "&" if urlsplit(client.auth_uri).query else "?"
    return f"{client.auth_uri}{separator}{urlencode(query)}"


@dataclass(frozen=True)
class Redirect:
    """What the browser brought back: a code, or Google's `error` (access_denied on a refusal)."""

    state: str
    code: str | None
    error: str | None


_PAGE = (
    "<!doctype html><html lang=cs><meta charset=utf-8><title>mcp-multi-gmail</title>"
    "<body style='font-family:sans-serif;max-width:36em;margin:3em auto'><h1>{title}</h1><p>{text}</p></body></html>"
)


class _Handler(BaseHTTPRequestHandler):
    server: _Listener

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        if "code" not in query and "error" not in query:
            self.send_error(404)  # the browser's favicon and the like
            return
        redirect = Redirect(
            state=query.get("state", [""])[0], code=query.get("code", [None])[0], error=query.get("error", [None])[0]
        )
        if redirect.code is not None:
            title, text = "Hotovo", "Přihlášení doběhlo. Okno můžete zavřít a vrátit se do terminálu."
        else:
            title, text = "Přihlášení neproběhlo", "Google přístup nepovolil. Podrobnosti jsou v terminálu."
        body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.server.arrived(redirect)

    def log_message(self, format: str, *args: object) -> None:
        pass  # the request line holds the code: never on stderr


class _Listener(HTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.redirect: Redirect | None = None
        self.done = threading.Event()

    def arrived(self, redirect: Redirect) -> None:
        if self.redirect is None:
            self.redirect = redirect
        self.done.set()


class LoopbackListener:
    """Listens on 127.0.0.1 on a free port until the browser comes back once (or the time is up)."""

    def __init__(self) -> None:
        self._server = _Listener()
        self._thread = threading.Thread(target=self._server.serve_forever, name="mg-sign-in", daemon=True)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LoopbackListener:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait(self, timeout_s: float) -> Redirect | None:
        """The first redirect, or None after `timeout_s`."""
        self._server.done.wait(timeout_s)
        return self._server.redirect


def exchange_code(
    client: OAuthClient, code: str, verifier: str, redirect_uri: str, tls: ssl.SSLContext
) -> dict[str, object]:
    """The authorization code for tokens (RFC 6749 §4.1.3 with RFC 7636's verifier)."""
    return post_form(
        client.token_uri,
        {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": redirect_uri,
            "client_id": client.client_id,
            "client_secret": client.client_secret,
        },
        tls,
    )
