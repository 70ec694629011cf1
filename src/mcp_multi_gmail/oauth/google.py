"""One POST to Google's token endpoint (RFC 6749 §4.1.3 and §6), with the standard library.

Neither the request (it carries the client secret, a code or a refresh token) nor the answer's
tokens ever reach an exception text: errors say only what kind of failure it was and Google's
error code (RFC 6749 §5.2), which names no secret.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Literal
from urllib.parse import urlencode, urlsplit

from .. import deadline

TOKEN_TIMEOUT_S = 20.0
_LOOPBACK = ("127.0.0.1", "::1", "localhost")
_ERROR_CODE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz_")

Failure = Literal["invalid_grant", "refused", "network"]


class TokenEndpointError(Exception):
    """`failure`: invalid_grant (the sign-in is gone), refused (another OAuth error), network."""

    def __init__(self, failure: Failure, code: str) -> None:
        super().__init__(f"{failure}: {code}")
        self.failure: Failure = failure
        self.code = code  # Google's `error` value, or a short description of the network failure


def _opener(uri: str, tls: ssl.SSLContext) -> urllib.request.OpenerDirector:
    # A loopback endpoint (tests, the demo) never goes through a proxy the environment names.
    loopback = (urlsplit(uri).hostname or "") in _LOOPBACK
    proxies = urllib.request.ProxyHandler({}) if loopback else urllib.request.ProxyHandler()
    return urllib.request.build_opener(proxies, urllib.request.HTTPSHandler(context=tls))


def _error_code(body: bytes) -> str:
    try:
        data = json.loads(body.decode("utf-8"))
    except ValueError:
        return "unknown"
    code = data.get("error") if isinstance(data, dict) else None
    # Only a plain error code is kept: nothing of the answer that could be free text.
    if isinstance(code, str) and code and set(code) <= _ERROR_CODE_CHARS and len(code) <= 40:
        return code
    return "unknown"


def post_form(uri: str, fields: dict[str, str], tls: ssl.SSLContext) -> dict[str, object]:
    """POST `fields` form-encoded to `uri`; the JSON answer, or TokenEndpointError."""
    request = urllib.request.Request(
        uri,
        data=urlencode(fields).encode("ascii"),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        method="POST",
    )
    failure: TokenEndpointError | None = None
    body = b""
    try:
        with _opener(uri, tls).open(request, timeout=deadline.remaining(TOKEN_TIMEOUT_S)) as answer:
            body = answer.read()
    except urllib.error.HTTPError as error:
        code = _error_code(error.read())
        kind: Failure = "invalid_grant" if code == "invalid_grant" else "refused"
        if error.code >= 500:
            kind = "network"  # Google's own trouble: waiting cures it
        failure = TokenEndpointError(kind, code if code != "unknown" else f"HTTP {error.code}")
    except (urllib.error.URLError, OSError, ValueError) as error:
        failure = TokenEndpointError("network", type(error).__name__)
    if failure is not None:
        raise failure  # outside the except blocks: no urllib exception rides along as context
    try:
        data = json.loads(body.decode("utf-8"))
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise TokenEndpointError("refused", "not JSON")
    return data
