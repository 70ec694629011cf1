"""SMTP submission to Gmail: a login probe that picks the port, before anything is sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import MailError
from .endpoint import SMTPS, SUBMISSION, Endpoint

if TYPE_CHECKING:
    import aiosmtplib  # imported at the first SMTP use, not at start-up

# A blocked port stays silent; a short connect timeout keeps a probe from hanging for minutes.
CONNECT_TIMEOUT_S = 10.0
SOCKET_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ProbeFailure:
    port: int
    reason: str


def _client(endpoint: Endpoint, gmail_port: int) -> aiosmtplib.SMTP:
    import aiosmtplib

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
    import aiosmtplib

    if isinstance(error, aiosmtplib.SMTPResponseException):
        return f"{error.code} {error.message}".strip()
    return str(error) or type(error).__name__


async def login_probe(endpoint: Endpoint, gmail_port: int, address: str, password: str) -> None:
    """Connect and authenticate on one port; send nothing. Raises the aiosmtplib error."""
    import aiosmtplib

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
    import aiosmtplib

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


@dataclass(frozen=True)
class Submission:
    accepted: list[str]
    rejected: list[str]
    response: str


class SendFailed(Exception):
    """A submission that did not complete. `maybe_sent` is True only once the message bytes were
    on their way (during or after DATA): then Gmail may have accepted it and it must not be retried."""

    def __init__(
        self,
        stage: str,
        reason: str,
        *,
        maybe_sent: bool,
        refused: bool = False,
        accepted: list[str] | None = None,
        rejected: list[str] | None = None,
    ) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason
        self.maybe_sent = maybe_sent
        self.refused = refused  # Gmail answered with an error code (as opposed to the connection breaking)
        self.accepted = accepted or []  # recipients Gmail took at RCPT before the failure
        self.rejected = rejected or []


async def submit(
    endpoint: Endpoint,
    gmail_port: int,
    address: str,
    password: str,
    envelope_from: str,
    recipients: list[str],
    data: bytes,
) -> Submission:
    """One submission attempt through one port, stage by stage, so a failure says whether the
    message may have gone. Never retried here: a broken DATA may still have been accepted."""
    import aiosmtplib

    client = _client(endpoint, gmail_port)
    stage = "connect"
    accepted: list[str] = []
    rejected: list[str] = []
    try:
        await client.connect(timeout=CONNECT_TIMEOUT_S)
        stage = "login"
        await client.login(address, password)
        stage = "mail"
        await client.mail(envelope_from)
        stage = "rcpt"
        for recipient in recipients:
            try:
                await client.rcpt(recipient)
                accepted.append(recipient)
            except aiosmtplib.SMTPRecipientRefused:
                rejected.append(recipient)
        if not accepted:
            raise SendFailed("rcpt", "Gmail refused every recipient", maybe_sent=False, refused=True)
        stage = "data"
        response = await client.data(data)
    except aiosmtplib.SMTPAuthenticationError:
        raise
    except SendFailed:
        raise
    except aiosmtplib.SMTPResponseException as error:
        # Gmail answered with a code: it refused, and a refusal means nothing was accepted.
        raise SendFailed(stage, _reason(error), maybe_sent=False, refused=True) from None
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
        maybe = stage == "data"
        raise SendFailed(stage, _reason(error), maybe_sent=maybe, accepted=accepted, rejected=rejected) from None
    finally:
        if client.is_connected:
            try:
                await client.quit()
            except (aiosmtplib.SMTPException, OSError, TimeoutError):
                client.close()
    return Submission(accepted, rejected, f"{response.code} {response.message}".strip())
