"""Sign-in with Google against the emulator's OAuth endpoints: a configuration, a signed-in mailbox,
a settable clock, and the check that no token or secret ever reached an output."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gmail_emulator.oauth_http import GoogleOAuth
from mcp_multi_gmail.config import OAuthClient
from mcp_multi_gmail.oauth import tokens

OSOBNI = "osobni@example.cz"
REDIRECT = "http://127.0.0.1:9"


class Clock:
    """One clock for the emulator's token expiry and the server's refresh margin."""

    def __init__(self, now: float = 1_900_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def oauth_config(tmp_path: Path, google: GoogleOAuth, **account: Any) -> Path:
    """A configuration whose mailbox `osobni` signs in with Google; `tym` keeps its app password."""
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir(exist_ok=True)
    google.client_file(secrets_dir / "klient.json")
    entry = {"name": "osobni", "address": OSOBNI, "auth": "oauth", "can_send": True, **account}
    body = {
        "oauth_client_file": "secrets/klient.json",
        "accounts": [entry, {"name": "tym", "address": "tym@example.com", "password": "tymovehesloheslo"}],
        "download_dir": str(tmp_path / "downloads"),
    }
    path = tmp_path / "multigmail.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def sign_in_directly(google: GoogleOAuth, client: OAuthClient, name: str = "osobni", address: str = OSOBNI) -> None:
    """What `--sign-in` leaves behind, without a browser: the consent, the exchange, the tokens file."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    provider = google.provider
    back = provider.consent(
        {
            "client_id": provider.client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "login_hint": address,
            "state": "s",
        }
    )
    form = {
        "grant_type": "authorization_code",
        "code": back["code"],
        "code_verifier": verifier,
        "redirect_uri": REDIRECT,
        "client_id": provider.client_id,
        "client_secret": provider.client_secret,
    }
    status, answer = provider.token(form)
    assert status == 200
    provider.token_requests["authorization_code"] -= 1  # only what the server itself asks is counted
    refresh = answer["refresh_token"]
    assert isinstance(refresh, str)
    grant = tokens.grant_from(address, refresh, answer, tokens.clock())
    tokens.save_grant(client.tokens_file, name, grant)


def assert_no_secret(google: GoogleOAuth, outputs: Iterable[str]) -> None:
    """None of the tokens handed out, nor the client secret, in any of `outputs`, also not as the
    base64 XOAUTH2 string a token travels in."""
    plain = google.provider.tokens_of()
    users = {a.user for a in google.provider.attempts}
    encoded = [
        base64.b64encode(f"user={user}\x01auth=Bearer {token}\x01\x01".encode()).decode()
        for user in users
        for token in plain
    ]
    secrets_ = plain + encoded
    texts = list(outputs)
    found = [(secret[:8] + "…", text[:80]) for secret in secrets_ for text in texts if secret in text]
    assert found == [], found
