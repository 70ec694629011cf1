"""The signed-in mailboxes' tokens: kept in the secrets folder, refreshed before they expire.

`oauth-tokeny.json` (beside the client file) holds one entry per mailbox name: its address, the
refresh token from the one-time sign-in, and the current access token with its expiry. It is
written atomically (a temporary file, then a rename) with mode 0600. Parallel tool calls, the
watcher and the servers of other conversations share one refresh: a thread lock in the process
and an advisory lock on a file beside it (as the send journal does) cover reading, refreshing
and writing, so whoever comes second finds the fresh token and uses it.

Access tokens last an hour (Google's `expires_in`); each is refreshed a small margin before the
end, not only after Gmail refused it (https://developers.google.com/identity/protocols/oauth2/native-app).
A refresh that Google answers with `invalid_grant` (revoked, password changed, the 7-day limit
of a project left in "Testing") is remembered for that refresh token, so no call asks again
until the user signs in anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import ssl
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .. import statefile
from ..config import SignIn
from .advice import damaged_tokens, endpoint_refused, endpoint_unreachable, not_signed_in, signed_out
from .google import TokenEndpointError, post_form

VERSION = 1
# Refresh this long before the access token's end (less for a token shorter than four minutes).
MARGIN_S = 60.0

# The clock the expiry is measured with (tests replace it, with the emulator's own clock).
clock: Callable[[], float] = time.time

_THREAD_LOCKS: dict[Path, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()
# Refresh tokens (by their hash) Google answered `invalid_grant` for, in this process.
_REVOKED: set[str] = set()

SignInState = Literal["signed_in", "not_signed_in", "revoked"]


@dataclass(frozen=True)
class Grant:
    """One mailbox's entry; the tokens never appear in a repr."""

    address: str
    refresh_token: str = field(repr=False)
    access_token: str = field(repr=False)
    expires_at: float
    refresh_at: float

    def fresh(self, now: float) -> bool:
        return bool(self.access_token) and now < self.refresh_at


def _fingerprint(refresh_token: str) -> str:
    return hashlib.sha256(refresh_token.encode("utf-8")).hexdigest()


def grant_from(address: str, refresh_token: str, answer: dict[str, object], now: float) -> Grant:
    """The entry for a token endpoint's answer (RFC 6749 §5.1); the refresh token stays unless a new one came."""
    access = answer.get("access_token")
    if not isinstance(access, str) or not access:
        raise TokenEndpointError("refused", "no access_token")
    lifetime = answer.get("expires_in")
    seconds = float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else 3600.0
    renewed = answer.get("refresh_token")
    return Grant(
        address=address,
        refresh_token=renewed if isinstance(renewed, str) and renewed else refresh_token,
        access_token=access,
        expires_at=now + seconds,
        refresh_at=now + seconds - min(MARGIN_S, seconds / 4),
    )


def _thread_lock(path: Path) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(path, threading.Lock())


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """The tokens file to oneself, across threads and processes, while reading, refreshing and writing."""
    with _thread_lock(path), statefile.locked(path.parent / f".{path.name}.lock"):
        yield


def read_grants(path: Path) -> dict[str, Grant]:
    """Every entry of the file ({} when there is none yet); ValueError when it is damaged."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    data: object = None
    with contextlib.suppress(ValueError, RecursionError):
        data = json.loads(raw.decode("utf-8"))
    accounts = data.get("accounts") if isinstance(data, dict) else None
    if not isinstance(accounts, dict):
        raise ValueError("not a tokens file")
    grants: dict[str, Grant] = {}
    for name, entry in accounts.items():
        if not isinstance(entry, dict):
            raise ValueError("not a tokens file")
        try:
            grants[str(name)] = Grant(
                address=str(entry["address"]),
                refresh_token=str(entry["refresh_token"]),
                access_token=str(entry.get("access_token", "")),
                expires_at=float(entry.get("expires_at", 0)),
                refresh_at=float(entry.get("refresh_at", 0)),
            )
        except (KeyError, TypeError, ValueError):
            raise ValueError("not a tokens file") from None
    return grants


def write_grants(path: Path, grants: dict[str, Grant]) -> None:
    """Replace the file atomically, mode 0600 from the first byte (call under `locked`)."""
    body = {
        "version": VERSION,
        "accounts": {
            name: {
                "address": g.address,
                "refresh_token": g.refresh_token,
                "access_token": g.access_token,
                "expires_at": g.expires_at,
                "refresh_at": g.refresh_at,
            }
            for name, g in grants.items()
        },
    }
    statefile.write_atomically(path, json.dumps(body, indent=2))


def save_grant(path: Path, name: str, grant: Grant) -> None:
    """Store one mailbox's fresh sign-in, keeping the others' entries."""
    with locked(path):
        try:
            grants = read_grants(path)
        except ValueError:
            grants = {}  # a damaged file is replaced by the sign-in that repairs it
        grants[name] = grant
        write_grants(path, grants)


def too_open(path: Path) -> bool:
    """Whether others than the owner may read the tokens file (the start-up warns)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return os.name == "posix" and bool(stat.S_IMODE(mode) & 0o077)


def sign_in_state(sign_in: SignIn) -> SignInState:
    """What the file says, with no network: signed in, never signed in, or known to be revoked."""
    try:
        grant = read_grants(sign_in.client.tokens_file).get(sign_in.name)
    except (ValueError, OSError):
        return "not_signed_in"
    if grant is None or grant.address.casefold() != sign_in.address.casefold():
        return "not_signed_in"
    return "revoked" if _fingerprint(grant.refresh_token) in _REVOKED else "signed_in"


def access_token(sign_in: SignIn, tls: ssl.SSLContext, *, refused: str | None = None) -> str:
    """A usable access token for the mailbox; refreshed first when close to its end or when Gmail
    just `refused` it (unless another call has refreshed it meanwhile). Raises MailError."""
    client, name, address = sign_in.client, sign_in.name, sign_in.address
    path = client.tokens_file
    with locked(path):
        try:
            grants = read_grants(path)
        except ValueError:
            raise damaged_tokens(name, path, client.config) from None
        except OSError as error:
            raise damaged_tokens(name, path, client.config, reason=error.strerror) from None
        grant = grants.get(name)
        if grant is None or grant.address.casefold() != address.casefold():
            raise not_signed_in(name, address, client.config)
        fingerprint = _fingerprint(grant.refresh_token)
        if fingerprint in _REVOKED:
            raise signed_out(name, address, client.config)
        now = clock()
        if grant.fresh(now) and grant.access_token != refused:
            return grant.access_token
        try:
            answer = post_form(
                client.token_uri,
                {
                    "grant_type": "refresh_token",
                    "refresh_token": grant.refresh_token,
                    "client_id": client.client_id,
                    "client_secret": client.client_secret,
                },
                tls,
            )
            renewed = grant_from(grant.address, grant.refresh_token, answer, now)
        except TokenEndpointError as error:
            if error.failure == "invalid_grant":
                _REVOKED.add(fingerprint)
                raise signed_out(name, address, client.config) from None
            if error.failure == "network":
                raise endpoint_unreachable(name, error.code) from None
            raise endpoint_refused(name, error.code, client.path) from None
        grants[name] = renewed
        write_grants(path, grants)
        return renewed.access_token
