"""Google's side of sign-in with OAuth, as far as tests and the demo need it: codes, tokens, XOAUTH2.

`GoogleSignIn` issues authorization codes (checking PKCE S256, RFC 7636), access and refresh
tokens (RFC 6749), and tells the IMAP and SMTP fronts whether an XOAUTH2 bearer token is good for
the user it names (https://developers.google.com/gmail/imap/xoauth2-protocol). Its knobs are the
cases a client has to survive: short-lived access tokens, a refresh answered `invalid_grant`, a
consent given by another Google account than the one asked for, and a denied consent. It keeps
count of every token request and every XOAUTH2 attempt, so tests can say exactly what happened.
The HTTP endpoints in front of it are `oauth_http`.

All of it is touched from the emulator's loop (IMAP, SMTP) and from the HTTP server's threads,
so one lock guards it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["XOAUTH2_CHALLENGE", "AuthAttempt", "GoogleSignIn", "SignInKnobs", "parse_xoauth2"]

# Gmail's challenge after a refused XOAUTH2 (Google's XOAUTH2 page): base64 of this JSON, sent as
# an IMAP continuation or an SMTP 334 before the final refusal.
XOAUTH2_CHALLENGE = base64.b64encode(
    json.dumps({"status": "400", "schemes": "Bearer", "scope": "https://mail.google.com/"}).encode()
).decode("ascii")


@dataclass
class SignInKnobs:
    # Seconds an access token lasts (Google: 3600). A test sets a few seconds to see refreshes.
    access_lifetime_s: float = 3600.0
    # What a refresh answers: a new access token, or `invalid_grant` (revoked, password changed,
    # the 7-day limit of a project in "Testing").
    refresh_outcome: Literal["ok", "invalid_grant"] = "ok"
    # The consent page signs in this address instead of the `login_hint` (the user picked another account).
    signed_in_as: str | None = None
    # The consent page answers `error=access_denied` (the user clicked Cancel).
    deny_consent: bool = False


@dataclass(frozen=True)
class AuthAttempt:
    protocol: Literal["imap", "smtp"]
    mechanism: str  # "XOAUTH2", "LOGIN", "PLAIN"
    user: str
    ok: bool


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    address: str


@dataclass
class _Access:
    address: str
    expires_at: float


def parse_xoauth2(payload: bytes) -> tuple[str, str] | None:
    """(user, bearer token) from the base64 XOAUTH2 initial response, or None when malformed."""
    try:
        decoded = base64.b64decode(payload, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    fields = dict(part.split("=", 1) for part in decoded.split("\x01") if "=" in part)
    user, auth = fields.get("user", ""), fields.get("auth", "")
    if not user or not auth.startswith("Bearer "):
        return None
    return user, auth.removeprefix("Bearer ")


@dataclass
class GoogleSignIn:
    """One Google OAuth client (id and secret) and the tokens it has handed out."""

    client_id: str = field(default_factory=lambda: f"{secrets.randbelow(10**12)}-emulator.apps.googleusercontent.com")
    client_secret: str = field(default_factory=lambda: "GOCSPX-" + secrets.token_urlsafe(21), repr=False)
    clock: Callable[[], float] = time.time
    knobs: SignInKnobs = field(default_factory=SignInKnobs)
    token_requests: dict[str, int] = field(default_factory=lambda: {"authorization_code": 0, "refresh_token": 0})
    attempts: list[AuthAttempt] = field(default_factory=list)
    _codes: dict[str, _Code] = field(default_factory=dict, repr=False)
    _access: dict[str, _Access] = field(default_factory=dict, repr=False)
    _refresh: dict[str, str] = field(default_factory=dict, repr=False)  # refresh token -> address
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # ------------------------------------------------------------------ the consent page

    def consent(self, query: dict[str, str]) -> dict[str, str]:
        """What the auth page sends back to `redirect_uri`: `code` and `state`, or `error` and `state`."""
        back = {"state": query.get("state", "")}
        if self.knobs.deny_consent:
            return {"error": "access_denied", **back}
        if query.get("client_id") != self.client_id or query.get("code_challenge_method") != "S256":
            return {"error": "invalid_request", **back}
        code = secrets.token_urlsafe(32)
        with self._lock:
            self._codes[code] = _Code(
                client_id=query["client_id"],
                redirect_uri=query.get("redirect_uri", ""),
                challenge=query.get("code_challenge", ""),
                address=self.knobs.signed_in_as or query.get("login_hint", ""),
            )
        return {"code": code, **back}

    # ------------------------------------------------------------------ the token endpoint

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, object]]:
        """(HTTP status, JSON body) for one POST to the token endpoint."""
        grant_type = form.get("grant_type", "")
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return 401, {"error": "invalid_client", "error_description": "The OAuth client was not found."}
        with self._lock:
            if grant_type in self.token_requests:
                self.token_requests[grant_type] += 1
            if grant_type == "authorization_code":
                return self._exchange(form)
            if grant_type == "refresh_token":
                return self._renew(form)
        return 400, {"error": "unsupported_grant_type"}

    def _exchange(self, form: dict[str, str]) -> tuple[int, dict[str, object]]:
        code = self._codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "").encode("ascii", "replace")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode("ascii")
        if code is None or code.redirect_uri != form.get("redirect_uri") or code.challenge != challenge:
            return 400, {"error": "invalid_grant", "error_description": "Bad Request"}
        refresh = "1//" + secrets.token_urlsafe(48)
        self._refresh[refresh] = code.address
        return 200, {**self._new_access(code.address), "refresh_token": refresh}

    def _renew(self, form: dict[str, str]) -> tuple[int, dict[str, object]]:
        address = self._refresh.get(form.get("refresh_token", ""))
        if address is None or self.knobs.refresh_outcome == "invalid_grant":
            return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
        return 200, self._new_access(address)

    def _new_access(self, address: str) -> dict[str, object]:
        token = "ya29." + secrets.token_urlsafe(48)
        lifetime = self.knobs.access_lifetime_s
        self._access[token] = _Access(address, self.clock() + lifetime)
        return {
            "access_token": token,
            "expires_in": int(lifetime) if float(lifetime).is_integer() else lifetime,
            "scope": "https://mail.google.com/",
            "token_type": "Bearer",
        }

    # ------------------------------------------------------------------ what IMAP and SMTP ask

    def accepts(self, protocol: Literal["imap", "smtp"], user: str, token: str) -> bool:
        """Whether `token` is in date and was issued for `user`; every attempt is counted."""
        with self._lock:
            access = self._access.get(token)
            ok = (
                access is not None
                and access.address.casefold() == user.strip().casefold()
                and self.clock() < access.expires_at
            )
            self.attempts.append(AuthAttempt(protocol, "XOAUTH2", user.strip(), ok))
        return ok

    def note_password_login(self, protocol: Literal["imap", "smtp"], mechanism: str, user: str, ok: bool) -> None:
        with self._lock:
            self.attempts.append(AuthAttempt(protocol, mechanism, user.strip(), ok))

    def revoke_access_tokens(self, address: str) -> None:
        """Gmail stops accepting the access tokens already issued (still in date), the refresh tokens stay."""
        with self._lock:
            for token in [t for t, a in self._access.items() if a.address.casefold() == address.casefold()]:
                del self._access[token]

    def revoke_sign_in(self, address: str) -> None:
        """The user removed the app's access: refresh and access tokens of `address` stop working."""
        self.revoke_access_tokens(address)
        with self._lock:
            for token in [t for t, a in self._refresh.items() if a.casefold() == address.casefold()]:
                del self._refresh[token]

    def tokens_of(self) -> list[str]:
        """Every token and the client secret handed out so far (a test greps outputs for them)."""
        with self._lock:
            return [*self._access, *self._refresh, self.client_secret]

    def attempts_of(self, user: str) -> list[AuthAttempt]:
        with self._lock:
            return [a for a in self.attempts if a.user.casefold() == user.casefold()]
