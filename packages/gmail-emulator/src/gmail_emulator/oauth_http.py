"""Google's OAuth endpoints on loopback (HTTPS, the emulator's CA): a consenting auth page and the token endpoint.

`GET /o/oauth2/auth?…` stands for accounts.google.com's consent screen: it answers at once with
the redirect a browser would follow after the user clicked Allow (or Cancel, under the
`deny_consent` knob). `POST /token` stands for oauth2.googleapis.com/token. `client_file()` writes
the JSON Google Cloud's "Download JSON" gives for a Desktop app client, pointing at these two.

    with GoogleOAuth(emulator) as google:
        google.client_file(tmp / "klient.json")
        ...
        google.provider.knobs.access_lifetime_s = 3
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit

from .oauth import GoogleSignIn, SignInKnobs

if TYPE_CHECKING:
    from .controller import GmailEmulator

__all__ = ["GoogleOAuth"]

AUTH_PATH = "/o/oauth2/auth"
TOKEN_PATH = "/token"
_MAX_FORM = 64 * 1024


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != AUTH_PATH:
            self.send_error(404)
            return
        query = dict(parse_qsl(parts.query))
        redirect = query.get("redirect_uri", "")
        if not redirect.startswith(("http://127.0.0.1:", "http://[::1]:", "http://localhost:")):
            self._json(400, {"error": "redirect_uri_mismatch"})  # Google allows only loopback for Desktop apps
            return
        back = self.server.provider.consent(query)
        self.send_response(302)
        self.send_header("Location", f"{redirect}{'&' if '?' in redirect else '?'}{urlencode(back)}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        if urlsplit(self.path).path != TOKEN_PATH:
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_FORM:
            self._json(413, {"error": "invalid_request"})
            return
        form = dict(parse_qsl(self.rfile.read(length).decode("utf-8", "replace")))
        status, body = self.server.provider.token(form)
        self._json(status, body)

    def _json(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # request lines carry codes and tokens: never logged


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, provider: GoogleSignIn, context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.provider = provider
        self.socket = context.wrap_socket(self.socket, server_side=True)


class GoogleOAuth:
    """The endpoints over `emulator`'s current store; a `reset()` of the emulator detaches them."""

    def __init__(
        self, emulator: GmailEmulator, *, knobs: SignInKnobs | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self.emulator = emulator
        self.provider = GoogleSignIn(clock=clock or emulator.store.clock, knobs=knobs or SignInKnobs())
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca = emulator._ca  # the CA the emulator's IMAP and SMTP certificates chain to
        if ca is None:
            raise RuntimeError("the emulator is not running")
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self._server = _Server(self.provider, context)
        self._thread = threading.Thread(target=self._server.serve_forever, name="emulator-oauth", daemon=True)

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GoogleOAuth:
        self._thread.start()
        self.emulator.store.google = self.provider
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.emulator.running and self.emulator.store.google is self.provider:
            self.emulator.store.google = None
        self._server.shutdown()
        self._server.server_close()

    def client_json(self) -> dict[str, object]:
        """Google Cloud's "Download JSON" of a Desktop app client, with these endpoints."""
        return {
            "installed": {
                "client_id": self.provider.client_id,
                "project_id": "emulator",
                "auth_uri": self.base_url + AUTH_PATH,
                "token_uri": self.base_url + TOKEN_PATH,
                "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                "client_secret": self.provider.client_secret,
                "redirect_uris": ["http://localhost"],
            }
        }

    def client_file(self, path: Path) -> Path:
        path.write_text(json.dumps(self.client_json(), indent=2), encoding="utf-8")
        return path
