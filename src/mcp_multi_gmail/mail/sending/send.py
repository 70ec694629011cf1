"""mg_send_message: policy first, one SMTP attempt, never twice, then the Sent copy verified.

The Message-ID is derived from the content and the UTC date, and Sent is searched for it before
anything goes out: a retry after a timeout finds the first send and is refused as a duplicate
instead of delivering the message again.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from ... import deadline, policy, progress
from ...config import Account
from ...domain import Address
from ...errors import MailError
from ...gmail import smtp
from ...gmail.imap import SENT, ImapSession
from ...request import Prepared, Request
from ...runtime import Runtime
from ..core import budget
from ..core.session import in_session
from ..reminding import ReplyReminder, check_reply_by, remind_message
from .journal import SendJournal, duplicate
from .prepare import (
    Original,
    no_quote_warning,
    prepare,
    read_original,
    subject_of,
)

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # compose loads at the first send, not at start-up
    from ...gmail.compose import Composed

# Gmail files SMTP mail into Sent by itself, after an undocumented delay that reports put at up to
# about ten seconds. Look for it with growing pauses for this long before storing a copy ourselves:
# a copy appended too early is a second copy once Gmail's own arrives.
SENT_WAIT_S = 15.0
SENT_PAUSES_S = (0.5, 0.5, 1.0, 1.0, 2.0, 2.0)  # then LAST_PAUSE_S until the wait is over
LAST_PAUSE_S = 3.0
# The wait for the copy ends this long before the call's deadline, so the answer is back in time.
DEADLINE_MARGIN_S = 0.5
NOT_CONFIRMED = "not confirmed yet: the call's deadline (call_timeout_s) ended the wait"


class SentCopy(BaseModel):
    saved: bool
    filed_by: Literal["gmail", "server"] | None = Field(
        description='"gmail" when Gmail filed its own copy; "server" when Gmail had not filed it after the '
        "wait and this server appended the copy itself"
    )
    folder: str | None
    uid: int | None
    error: str | None
    waited_s: float | None = Field(
        default=None, description="Seconds spent looking for Gmail's own copy in Sent before the answer"
    )
    note: str | None = Field(default=None, description="What happened to the Sent copy, when it is not the usual")


class SendResult(BaseModel):
    account: str
    from_: Address = Field(alias="from")
    message_id: str
    accepted: list[str]
    rejected: list[str]
    pending: list[str]
    smtp_response: str
    smtp_port: int
    sent_copy: SentCopy
    attachments: list[str]
    signature: str | None
    quoted: bool
    warning: str | None
    reply_reminder: ReplyReminder | None = Field(default=None, description="With expect_reply_by")
    cut: list[budget.Cut] = budget.cut_field()

    model_config = {"populate_by_name": True}


def _message_id(account: Account, prepared: Prepared, repeat: bool) -> str:
    from ...gmail.compose import content_message_id

    if repeat:
        domain = prepared.sender[0].rpartition("@")[2]
        return f"{uuid.uuid4().hex}.mg@{domain}"  # a deliberate second send is a new message
    return content_message_id(prepared, account=account.name, day=datetime.now(UTC).date())


def _find_in_sent(session: ImapSession, bare: str) -> int | None:
    """The copy in Sent, by its header: X-GM-RAW answers from an index that lags behind new mail."""
    session.open(SENT)
    uids = session.search_header_ids([bare])
    return max(uids) if uids else None


def sent_pauses(total_s: float) -> list[float]:
    """The pauses between looks into Sent: short at first (Gmail is usually quick), adding up to total_s."""
    pauses: list[float] = []
    left = total_s
    for pause in (*SENT_PAUSES_S, *([LAST_PAUSE_S] * int(total_s / LAST_PAUSE_S + 1))):
        if left <= 0:
            break
        pauses.append(min(pause, left))
        left -= pauses[-1]
    return pauses


@dataclass
class _Before:
    original: Original


def _handed_over_before(account: Account, message_id: str) -> MailError:
    return MailError(
        "duplicate_send",
        f'This exact message was already handed to Gmail from mailbox "{account.name}" earlier in this '
        f"session, as <{message_id}>; what happened to it was reported then. Nothing was sent now. If the user "
        "really wants it delivered (again), call again with repeat: true.",
    )


def _before_sending(
    session: ImapSession, account: Account, prepared: Prepared, message_id: str, repeat: bool
) -> _Before:
    """On one IMAP connection, before anything goes out: the duplicate check and the quote."""
    if not repeat:
        earlier = _find_in_sent(session, message_id)
        if earlier is not None:
            raise MailError(
                "duplicate_send",
                f'This exact message was already sent today from mailbox "{account.name}": it is in '
                f'"{session.folder(SENT)}" as <{message_id}>. Nothing was sent now. If the user really wants '
                "it delivered a second time, call again with repeat: true.",
            )
    original = Original(None, None)
    request = prepared.request
    if prepared.in_reply_to and (request.quote_original or request.subject is None):
        original = read_original(session, account, prepared.in_reply_to, with_quote=request.quote_original)
    return _Before(original)


def _not_confirmed(folder: str | None, waited: float | None) -> SentCopy:
    """The copy in Sent after the call's deadline ended the wait for it: the message went out."""
    note = (
        "Gmail accepted the message, so it went out and must NOT be sent again; its copy in Sent is not "
        "confirmed yet, because the call's deadline (call_timeout_s) ended the wait. Gmail usually files it "
        "within seconds."
    )
    return SentCopy(
        saved=False, filed_by=None, folder=folder, uid=None, error=NOT_CONFIRMED, waited_s=waited, note=note
    )


def _verify_sent_copy(session: ImapSession, composed: Composed, *, append: bool) -> SentCopy:
    folder = session.folder(SENT)
    started = time.monotonic()
    until = started + SENT_WAIT_S
    call = deadline.current()
    # The call's deadline may come first: then the wait ends there, and no copy is appended (Gmail's
    # own may still come, and an early APPEND would be a second one).
    cut = call is not None and call.deadline - DEADLINE_MARGIN_S < until
    if call is not None and cut:
        until = call.deadline - DEADLINE_MARGIN_S
    pauses = iter(sent_pauses(SENT_WAIT_S))
    while True:
        uid = _find_in_sent(session, composed.message_id)
        waited = round(time.monotonic() - started, 1)
        if uid is not None:
            return SentCopy(saved=True, filed_by="gmail", folder=folder, uid=uid, error=None, waited_s=waited)
        pause = next(pauses, None)
        if pause is None or time.monotonic() >= until:
            break
        progress.report(waited, SENT_WAIT_S, f"sent; waiting {waited:g} s so far for Gmail to file it in Sent")
        time.sleep(max(0.0, min(pause, until - time.monotonic())))
    if cut:
        return _not_confirmed(folder, waited)
    if not append:
        return SentCopy(saved=False, filed_by=None, folder=folder, uid=None, error="not in Sent", waited_s=waited)
    # Gmail did not file it within the wait: append the very bytes that went out, Bcc header restored.
    try:
        uid = session.append(SENT, composed.data, ["\\Seen"], None)
    except Exception as error:  # noqa: BLE001 - the mail has gone: a failed copy is reported, never raised
        return SentCopy(saved=False, filed_by=None, folder=folder, uid=None, error=str(error), waited_s=waited)
    note = (
        f"Gmail had not filed the message in Sent after {waited:g} s, so this server stored the copy there "
        "itself. If Gmail files its own copy later, Sent shows the message twice; it was sent once."
    )
    return SentCopy(saved=True, filed_by="server", folder=folder, uid=uid, error=None, waited_s=waited, note=note)


async def _choose_port(runtime: Runtime, account: Account) -> int:
    """The configured port, else the one that worked before in this process, else a login probe."""
    known = account.smtp_port or runtime.smtp_ports.get(account.name)
    if known is not None:
        return known
    try:
        port = await smtp.choose_port(
            account.name, account.address, account.login, runtime.endpoint, smtp.probe_order(None, None)
        )
    except MailError as error:
        if error.code == "upstream_error" and "Nothing was sent" not in error.message:
            # A port that cannot be reached: passing. A refusal keeps its own class (a demand to sign
            # in through a browser is not retryable) and already says that nothing was sent.
            raise MailError(
                error.code, f"{error.message} Nothing was sent.", retryable=error.retryable, kind=error.kind
            ) from None
        raise
    runtime.smtp_ports[account.name] = port
    return port


async def send_message(
    runtime: Runtime, account_name: str, request: Request, *, repeat: bool, expect_reply_by: str | None = None
) -> SendResult:
    account = runtime.account(account_name)
    prepared = prepare(runtime.config, account, request, sending=True)
    wanted = check_reply_by(runtime, account, expect_reply_by) if expect_reply_by is not None else None
    result = await send_prepared(runtime, account, prepared, repeat=repeat)
    if wanted is not None:
        result.reply_reminder = await remind_message(runtime, account, result.message_id, wanted, "mg_send_message")
    return result


async def send_prepared(runtime: Runtime, account: Account, prepared: Prepared, *, repeat: bool) -> SendResult:
    """Send a message that policy has passed: the journal, one SMTP attempt, the Sent copy verified.
    mg_send_message passes its request through `prepare`; a mailto opt-out through the policy's
    unsubscribe rules (mail/subscriptions/unsubscribe.py)."""
    from ...gmail.compose import Draft, compose

    message_id = _message_id(account, prepared, repeat)
    if not repeat and (account.name, message_id) in runtime.handed_over:
        raise _handed_over_before(account, message_id)
    # The journal on disk outlives the process: a repeat after a crash is refused whatever Sent shows.
    journal = SendJournal(runtime.state_folder())
    journalled = journal.find(account.name, message_id)
    if journalled is not None and not repeat:
        raise duplicate(account.name, journalled)
    deadline.with_progress(_nothing_sent_yet)
    before = await in_session(runtime, account, lambda s: _before_sending(s, account, prepared, message_id, repeat))
    quote_wanted = prepared.request.quote_original and prepared.in_reply_to is not None
    composed = compose(
        Draft(prepared, subject_of(prepared, before.original), before.original.quote if quote_wanted else None),
        message_id=message_id,
        date=datetime.now(UTC),
        quote_locale=runtime.config.quote_locale,
    )
    policy.check_message_size(len(composed.data), len(prepared.files))
    port = await _choose_port(runtime, account)
    # A big message on a slow line takes its time in DATA: the deadline grows with the upload.
    deadline.extend(deadline.upload_allowance_s(len(composed.smtp_data)))

    def accepted(submission: smtp.Submission) -> None:
        # Gmail's final 250: from here on the call is a success, even if its deadline passes during the
        # QUIT that follows or ends the wait for Sent.
        runtime.handed_over.add((account.name, composed.message_id))
        deadline.with_progress(lambda progress: _accepted(progress, composed.message_id))
        deadline.settle(
            lambda: _result(account, prepared, composed, submission, port, _not_confirmed(None, None), extra=[])
        )

    try:
        submission = await smtp.submit(
            runtime.endpoint,
            port,
            account.address,
            account.login,
            prepared.sender[0],
            composed.envelope_recipients,
            composed.smtp_data,
            before_data=lambda: journal.record(account.name, composed.message_id),
            on_accepted=accepted,
        )
    except smtp.SendFailed as failure:
        if not failure.maybe_sent:
            journal.forget(account.name, composed.message_id)
            raise _send_error(runtime, account, port, failure, composed) from None
        # The bytes were handed over and then the line broke: Gmail's Sent folder tells what happened.
        runtime.handed_over.add((account.name, composed.message_id))
        runtime.smtp_ports.pop(account.name, None)
        filed = await _sent_copy(runtime, account, composed, append=False)
        if not filed.saved:
            raise _send_error(runtime, account, port, failure, composed) from None
        submission = smtp.Submission(
            failure.accepted, failure.rejected, f"(no final answer from Gmail: {failure.reason})"
        )
        broke = (
            "The connection broke before Gmail's final answer, but Gmail filed the message in Sent, so it "
            "went out. Do not send it again."
        )
        return _result(account, prepared, composed, submission, port, filed, extra=[broke])

    sent_copy = await _sent_copy(runtime, account, composed, append=True)
    return _result(account, prepared, composed, submission, port, sent_copy, extra=[])


def _nothing_sent_yet(progress: deadline.CallProgress) -> None:
    progress.not_sent = "The message had not been handed to Gmail yet: nothing was sent, and trying again is safe."


def _accepted(progress: deadline.CallProgress, message_id: str) -> None:
    progress.handed_over = (
        f"Gmail had already accepted the message <{message_id}>: it went out and must NOT be sent again; only "
        "its copy in Sent was not confirmed."
    )


def _result(
    account: Account,
    prepared: Prepared,
    composed: Composed,
    submission: smtp.Submission,
    port: int,
    sent_copy: SentCopy,
    *,
    extra: list[str],
) -> SendResult:
    request = prepared.request
    warnings = [
        *extra,
        *(
            w
            for w in (
                no_quote_warning(prepared, request.quote_original, composed.quoted),
                _not_reached(submission) if submission.rejected else None,
                None
                if sent_copy.saved
                else "The message was sent; its copy in the Sent folder is not confirmed yet. It went out: it "
                "must NOT be sent again."
                if sent_copy.error == NOT_CONFIRMED
                else "The message was sent but cannot be found in the Sent folder, and a copy could not be stored. "
                "It went out: it must NOT be sent again.",
            )
            if w
        ),
    ]
    return SendResult(
        account=account.name,
        from_=Address(name=prepared.sender[1], address=prepared.sender[0]),
        message_id=composed.message_id,
        accepted=submission.accepted,
        rejected=submission.rejected,
        pending=[],
        smtp_response=submission.response,
        smtp_port=port,
        sent_copy=sent_copy,
        attachments=[name for name, _data, _mime in prepared.files],
        signature=prepared.signature.name if prepared.signature else None,
        quoted=composed.quoted,
        warning=" ".join(warnings) or None,
    )


async def _sent_copy(runtime: Runtime, account: Account, composed: Composed, *, append: bool) -> SentCopy:
    try:
        return await in_session(runtime, account, lambda s: _verify_sent_copy(s, composed, append=append))
    except MailError as error:
        # A missing copy never turns into a send failure: the message went out.
        return SentCopy(saved=False, filed_by=None, folder=None, uid=None, error=error.message)
    except Exception as error:  # not even a surprise (a bug, a library error) turns it into a send failure
        logger.exception("looking for the Sent copy of <%s> failed unexpectedly", composed.message_id)
        return SentCopy(saved=False, filed_by=None, folder=None, uid=None, error=f"{type(error).__name__}: {error}")


def _not_reached(submission: smtp.Submission) -> str:
    """Who did not get it, each with Gmail's own reason."""
    parts = [f"{r} ({submission.refusals[r]})" if r in submission.refusals else r for r in submission.rejected]
    return f"It did NOT reach {', '.join(parts)}."


def _send_error(
    runtime: Runtime, account: Account, port: int, failure: smtp.SendFailed, composed: Composed
) -> MailError:
    if failure.maybe_sent:
        runtime.smtp_ports.pop(account.name, None)
        return MailError(
            "upstream_error",
            f"The connection to Gmail (port {port}) broke while the message was being sent from mailbox "
            f'"{account.name}" ({failure.reason}). The message may or may not have been sent, and Gmail has not '
            f"filed it in Sent. Repeating the same call is refused as a duplicate. Ask the user to check the Sent "
            f"folder for <{composed.message_id}> (or with the recipient); only if it did not arrive and the user "
            "wants it sent, call again with repeat: true.",
        )
    if failure.refused:
        return smtp.refusal_error(account.name, failure)
    runtime.smtp_ports.pop(account.name, None)
    return MailError(
        "upstream_error",
        f"The connection to Gmail (port {port}) failed at the {failure.stage} step, before the message was "
        f"handed over ({failure.reason}). Nothing was sent; trying again is safe.",
        retryable=True,
    )
