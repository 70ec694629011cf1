"""SMTP submission to Gmail: a login probe that picks the port, before anything is sent."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .. import deadline
from ..config import SignIn
from ..errors import MailError
from .endpoint import SMTPS, SUBMISSION, Endpoint
from .refusals import smtp_login_refused
from .xoauth2 import smtp_authenticate

if TYPE_CHECKING:
    import aiosmtplib  # imported at the first SMTP use, not at start-up

# A blocked port stays silent; a short connect timeout keeps a probe from hanging for minutes.
# Both are shortened to what is left of the call's deadline.
CONNECT_TIMEOUT_S = 10.0
SOCKET_TIMEOUT_S = 60.0
# Once Gmail accepted the message, QUIT is only politeness: a slow answer to it must not hold the call.
QUIT_AFTER_ACCEPTANCE_S = 5.0
# After the last answer, TLS's goodbye (close_notify) needs Gmail's reply before the socket is closed;
# aiosmtplib starts it and returns. A session waits this long for it, then drops the line, so no call
# leaves a socket open behind it (RFC 8446 §6.1; docs/en/development.md, "Sockets").
GOODBYE_S = 1.0
_GOODBYE_POLL_S = 0.005


@dataclass(frozen=True)
class ProbeFailure:
    port: int
    reason: str


class _Ends:
    """The transports a session closed, with their sockets: aiosmtplib forgets a transport as it
    closes it, while the socket under it stays open until the TLS goodbye is over."""

    def __init__(self) -> None:
        self.lines: list[tuple[asyncio.Transport, Any]] = []

    def note(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, so it can be aborted; its socket is the one under any TLS layer.
        self.lines.append((cast(asyncio.Transport, transport), transport.get_extra_info("socket")))

    def open(self) -> bool:
        return any(sock is not None and sock.fileno() != -1 for _, sock in self.lines)

    def drop(self) -> None:
        """Close every socket without a goodbye (on the loop's next turn)."""
        for transport, _ in self.lines:
            transport.abort()

    async def closed(self, limit_s: float) -> None:
        """Returns once every socket is closed; what is still open after `limit_s` is dropped."""
        loop = asyncio.get_running_loop()
        end = loop.time() + limit_s
        try:
            while self.open() and loop.time() < end:
                await asyncio.sleep(_GOODBYE_POLL_S)
        except asyncio.CancelledError:
            self.drop()  # the call's deadline: no more waiting
            raise
        if self.open():
            self.drop()
            await asyncio.sleep(0)  # abort closes the socket on the loop's next turn


@functools.cache
def _session_class() -> Callable[..., aiosmtplib.SMTP]:
    """aiosmtplib's client that hands each transport it closes to `ends` (built at the first use)."""
    import aiosmtplib

    class Session(aiosmtplib.SMTP):
        def __init__(self, ends: _Ends, **options: Any) -> None:
            self.ends = ends
            super().__init__(**options)

        def close(self) -> None:
            if self.transport is not None:
                self.ends.note(self.transport)
            super().close()

    return Session


@asynccontextmanager
async def _session(endpoint: Endpoint, gmail_port: int) -> AsyncIterator[aiosmtplib.SMTP]:
    """One SMTP session on one port; when the block ends, its socket is closed: after the TLS
    goodbye, or dropped (at once when the call's deadline cancels it)."""
    implicit = gmail_port == SMTPS
    ends = _Ends()
    client = _session_class()(
        ends,
        hostname=endpoint.smtp_host,
        port=endpoint.smtp_port(gmail_port),
        use_tls=implicit,
        start_tls=not implicit,
        tls_context=endpoint.tls_context(),
        timeout=deadline.remaining(SOCKET_TIMEOUT_S),
    )
    try:
        yield client
    except asyncio.CancelledError:
        client.close()
        ends.drop()
        raise
    except BaseException:
        client.close()
        await ends.closed(deadline.remaining(GOODBYE_S))
        raise
    client.close()
    await ends.closed(deadline.remaining(GOODBYE_S))


def _one_line(code: int, message: str) -> str:
    """Gmail's multi-line answer as one line: `550-5.1.1 The email…` lines repeat the enhanced code."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) > 1:
        first = lines[0].split(" ", 1)[0]
        lines = [lines[0]] + [line[len(first) :].strip() if line.startswith(first) else line for line in lines[1:]]
    return f"{code} {' '.join(lines)}".strip()


def _reason(error: BaseException) -> str:
    import aiosmtplib

    if isinstance(error, aiosmtplib.SMTPResponseException):
        return _one_line(error.code, error.message)
    return str(error) or type(error).__name__


async def login_probe(endpoint: Endpoint, gmail_port: int, address: str, password: str | SignIn) -> None:
    """Connect and authenticate on one port; send nothing. Raises the aiosmtplib error."""
    import aiosmtplib

    async with _session(endpoint, gmail_port) as client:
        await client.connect(timeout=deadline.remaining(CONNECT_TIMEOUT_S))
        try:
            await smtp_authenticate(client, address, password, endpoint.tls_context())
        except asyncio.CancelledError:
            client.close()  # the call's deadline: no polite QUIT, just drop the line
            raise
        finally:
            if client.is_connected:
                try:
                    await client.quit()
                except aiosmtplib.SMTPException:
                    client.close()


async def choose_port(
    account: str, address: str, password: str | SignIn, endpoint: Endpoint, candidates: tuple[int, ...]
) -> int:
    """The first candidate port that accepts our login; a refused password fails at once."""
    import aiosmtplib

    failures: list[ProbeFailure] = []
    for port in candidates:
        try:
            await login_probe(endpoint, port, address, password)
            return port
        except aiosmtplib.SMTPAuthenticationError as error:
            # Gmail answered the login itself, so the port works: another port would get the same answer.
            raise smtp_login_refused(account, error.code, _reason(error).removeprefix(f"{error.code} ")) from None
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
    # Gmail's answer for each refused recipient, word for word (it says why: no such user, too fast…).
    refusals: dict[str, str] = field(default_factory=dict)


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
        code: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason
        self.maybe_sent = maybe_sent
        self.refused = refused  # Gmail answered with an error code (as opposed to the connection breaking)
        self.accepted = accepted or []  # recipients Gmail took at RCPT before the failure
        self.rejected = rejected or []
        self.code = code  # Gmail's SMTP reply code when it refused

    @property
    def temporary(self) -> bool:
        """A 4xx answer (421 closing, 450/451/452/454…): nothing was taken, later may work."""
        return self.refused and self.code is not None and 400 <= self.code < 500

    @property
    def daily_limit(self) -> bool:
        """550 5.4.5: the account has sent as much as Gmail allows in 24 hours."""
        return self.refused and "5.4.5" in self.reason


def refusal_error(account: str, failure: SendFailed) -> MailError:
    """The error for a submission Gmail refused with a code; nothing was sent."""
    if failure.stage == "login" and failure.code is not None:
        return smtp_login_refused(account, failure.code, failure.reason.removeprefix(f"{failure.code} "))
    if failure.daily_limit:
        return MailError(
            "upstream_error",
            f'Gmail refused the message from mailbox "{account}": the account has reached Gmail\'s daily sending '
            f"limit ({failure.reason}). Nothing was sent. Gmail lifts the limit on its own within 24 hours; "
            "until then every send from this account fails the same way, so tell the user instead of retrying.",
        )
    if failure.temporary:
        return MailError(
            "upstream_error",
            f'Gmail did not take the message from mailbox "{account}" at the {failure.stage} step, for now '
            f"({failure.reason}). Nothing was sent; try again in a few minutes.",
            retryable=True,
        )
    return MailError(
        "upstream_error",
        f'Gmail refused the message from mailbox "{account}" at the {failure.stage} step: {failure.reason}. '
        "Nothing was sent.",
    )


async def _quit(client: aiosmtplib.SMTP, *, accepted: bool) -> None:
    """End a submission politely; after acceptance only briefly, and the deadline just drops the line."""
    import aiosmtplib

    if not client.is_connected:
        return
    try:
        if accepted:
            await client.quit(timeout=QUIT_AFTER_ACCEPTANCE_S)
        else:
            await client.quit()
    except (aiosmtplib.SMTPException, OSError, TimeoutError):
        client.close()
    except asyncio.CancelledError:
        client.close()  # the call's deadline during QUIT: drop the line
        raise


async def submit(
    endpoint: Endpoint,
    gmail_port: int,
    address: str,
    password: str | SignIn,
    envelope_from: str,
    recipients: list[str],
    data: bytes,
    *,
    before_data: Callable[[], object] | None = None,
    on_accepted: Callable[[Submission], object] | None = None,
) -> Submission:
    """One submission attempt through one port, stage by stage, so a failure says whether the
    message may have gone. Never retried here: a broken DATA may still have been accepted.

    `before_data` runs after the recipients were accepted and before the message's bytes go out
    (the send journal is written there); if it raises, nothing is sent. `on_accepted` runs as soon as
    Gmail's final 250 of DATA has come, before the QUIT (it must not raise): from then on the send is a
    success, even if the call's deadline passes while QUIT waits for its answer."""
    import aiosmtplib

    stage = "connect"
    accepted: list[str] = []
    rejected: list[str] = []
    refusals: dict[str, str] = {}
    codes: list[int] = []
    submission: Submission | None = None
    async with _session(endpoint, gmail_port) as client:
        try:
            await client.connect(timeout=deadline.remaining(CONNECT_TIMEOUT_S))
            stage = "login"
            await smtp_authenticate(client, address, password, endpoint.tls_context())
            stage = "mail"
            await client.mail(envelope_from)
            stage = "rcpt"
            for recipient in recipients:
                try:
                    await client.rcpt(recipient)
                    accepted.append(recipient)
                except aiosmtplib.SMTPRecipientRefused as error:
                    rejected.append(recipient)
                    refusals[recipient] = _reason(error)
                    codes.append(error.code)
                    if not client.is_connected:
                        break  # a 421 closes the connection: the rest cannot be asked
            if not accepted or not client.is_connected:
                why = "; ".join(f"{r}: {text}" for r, text in refusals.items())
                # Temporary only when every refusal was: one permanent "no such user" stays permanent.
                code = max(codes) if codes else None
                what = "refused every recipient" if not accepted else "closed the connection before the message"
                raise SendFailed("rcpt", f"Gmail {what} ({why})", maybe_sent=False, refused=True, code=code)
            if before_data is not None:
                before_data()
            stage = "data"
            deadline.note("handing the message to Gmail over SMTP")
            # aiosmtplib's timeout covers the whole upload and Gmail's answer: it grows with the size.
            upload_s = SOCKET_TIMEOUT_S + deadline.upload_allowance_s(len(data))
            response = await client.data(data, timeout=deadline.remaining(upload_s))
            submission = Submission(accepted, rejected, _one_line(response.code, response.message), refusals)
            if on_accepted is not None:
                on_accepted(submission)
        except asyncio.CancelledError:
            client.close()  # the call's deadline: drop the line, the caller reports what was known
            raise
        except SendFailed:
            raise
        except aiosmtplib.SMTPResponseException as error:
            # Gmail answered with a code (a refused login included): it refused, so nothing was accepted.
            raise SendFailed(stage, _reason(error), maybe_sent=False, refused=True, code=error.code) from None
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
            maybe = stage == "data"
            raise SendFailed(stage, _reason(error), maybe_sent=maybe, accepted=accepted, rejected=rejected) from None
        finally:
            await _quit(client, accepted=submission is not None)
    assert submission is not None  # every other way out of the try raised
    return submission
