"""SMTP submission to Gmail: a login probe that picks the port, before anything is sent."""

from __future__ import annotations

from dataclasses import dataclass

import aiosmtplib

from ..errors import MailError
from .endpoint import SMTPS, SUBMISSION, Endpoint

# A blocked port stays silent; a short connect timeout keeps a probe from hanging for minutes.
CONNECT_TIMEOUT_S = 10.0
SOCKET_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ProbeFailure:
    port: int
    reason: str


def _client(endpoint: Endpoint, gmail_port: int) -> aiosmtplib.SMTP:
    implicit = gmail_port == SMTPS
    return aiosmtplib.SMTP(
        hostname=endpoint.smtp_host,
        port=endpoint.smtp_port(gmail_port),
        use_tls=implicit,
        start_tls=not implicit,
        tls_context=endpoint.tls_context(),
        timeout=SOCKET_TIMEOUT_S,
    )


def _reason(error: BaseException) -> str:
    if isinstance(error, aiosmtplib.SMTPResponseException):
        return f"{error.code} {error.message}".strip()
    return str(error) or type(error).__name__


async def login_probe(endpoint: Endpoint, gmail_port: int, address: str, password: str) -> None:
    """Connect and authenticate on one port; send nothing. Raises the aiosmtplib error."""
    client = _client(endpoint, gmail_port)
    await client.connect(timeout=CONNECT_TIMEOUT_S)
    try:
        await client.login(address, password)
    finally:
        try:
            await client.quit()
        except aiosmtplib.SMTPException:
            client.close()


async def choose_port(
    account: str, address: str, password: str, endpoint: Endpoint, candidates: tuple[int, ...]
) -> int:
    """The first candidate port that accepts our login; a refused password fails at once."""
    failures: list[ProbeFailure] = []
    for port in candidates:
        try:
            await login_probe(endpoint, port, address, password)
            return port
        except aiosmtplib.SMTPAuthenticationError as error:
            raise MailError(
                "auth_failed", f'Mailbox "{account}": Gmail refused the SMTP login: {_reason(error)}'
            ) from None
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
            failures.append(ProbeFailure(port, _reason(error)))
    tried = ", ".join(f"{endpoint.smtp_host}:{f.port} ({f.reason})" for f in failures)
    if len(candidates) == 1:
        advice = "If the network blocks this port, set smtp_port to the other one (465 or 587)."
    else:
        advice = "The network or hosting provider most likely blocks outgoing SMTP; ask for port 587 or 465."
    raise MailError(
        "upstream_error",
        f'Could not connect to Gmail to send from mailbox "{account}": {tried}. {advice}',
        retryable=True,
    )


def probe_order(configured: int | None, remembered: int | None) -> tuple[int, ...]:
    """Configured port only; else the port that worked before in this process; else 465 then 587."""
    if configured is not None:
        return (configured,)
    if remembered is not None:
        return (remembered,)
    return (SMTPS, SUBMISSION)
