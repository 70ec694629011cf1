"""mg_unsubscribe: leave a list, once, by what its own signed header offers.

The message named is only a pointer to its list: the newest message of that list (same List-Id,
else same sender) that carries List-Unsubscribe is read, and the URL or address comes from its
header and nowhere else. The policy module decides on that header and Gmail's verdict
(policy.check_one_click / check_mailto); a one-click goes through gmail/web.py, the one web
request; a mailto opt-out through the send path (mail/sending/send.py: the journal, one SMTP attempt,
the Sent copy verified). The list (its group and signer, never its URL) is claimed in the record of
lists left (mail/subscriptions/unsubscribed.py) before anyone is contacted, in one locked step with
the look for an earlier claim, so two calls at once make one request; a second call is refused
unless forced. When the request went out but its record cannot be written, the result still says
that the unsubscribe was made. `dry_run` runs every check, the host's lookup included, and contacts
nobody.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from ... import deadline, policy
from ...config import Account
from ...domain import Address
from ...errors import MailError
from ...gmail import web
from ...gmail.imap import ALL_MAIL, ImapSession
from ...gmail.parse.envelope import EnvelopeInfo
from ...gmail.parse.listheaders import LIST_UNSUBSCRIBE, ListFacts, list_facts
from ...headers import address_problem
from ...request import Prepared, Request
from ...runtime import Runtime
from ..core import budget, inputs
from ..core.lookup import disappeared, find_message
from ..core.session import in_session
from ..core.summary import iso
from ..sending import SentCopy, send_prepared
from .overview import group_messages, order, read_decision_fields
from .unsubscribed import Left, LeftLists, now_iso

Method = Literal["one_click", "mailto"]
# The newest candidates of a list read to find its newest message.
MAX_CANDIDATES = 1_000
# The newer messages of the list whose signatures are read, newest first, for one its signer signed.
SIGNED_CANDIDATES = 20
# The web request ends this long before the call's deadline, so the answer is back in time.
DEADLINE_MARGIN_S = 0.5

logger = logging.getLogger("mcp_multi_gmail")


class OneClickOutcome(BaseModel):
    status: int | None = Field(description="The HTTP status the endpoint answered; null without an answer")
    redirect: bool = Field(description="A 3xx: RFC 8058 forbids it, it was not followed, nothing more was sent")
    host: str
    address: str | None = Field(description="The IP address connected to (or, in a dry run, that would be)")


class OptOutMail(BaseModel):
    to: str
    subject: str
    body: str
    message_id: str | None = Field(description="The sent message's Message-ID; null in a dry run")
    sent_copy: SentCopy | None = None


class UnsubscribeResult(BaseModel):
    account: str
    method: Method
    dry_run: bool = Field(description="true: every check ran and nobody was contacted")
    done: bool = Field(description="The endpoint accepted the one-click (2xx) or the opt-out mail was sent")
    list_id: str | None
    list_name: str | None = Field(description="The List-Id's phrase, written by the sender")
    sender: Address | None = Field(description="From of the message acted on, written by the sender")
    message_id: str | None = Field(description="The newest message of the list, whose header was used")
    received_at: str | None
    signed_by: str = Field(description="Domain of the DKIM signature Gmail passed that covers the header")
    contacted: str = Field(description="What was (or in a dry run would be) contacted: https://host/path or mailto:")
    one_click: OneClickOutcome | None = None
    mailto: OptOutMail | None = None
    remembered: bool = Field(
        description="Recorded as left: a second call is refused unless force: true. false with done: true: the "
        "record could not be written, and `note` says what to do"
    )
    note: str | None = None
    cut: list[budget.Cut] = budget.cut_field()


@dataclass(frozen=True)
class _Chosen:
    uid: int
    envelope: EnvelopeInfo | None
    received: datetime | None
    facts: ListFacts


def _candidates(session: ImapSession, facts: ListFacts) -> list[int]:
    """Messages that may be of the same list: by sender (Gmail's index) and by List-Id (the header
    search, which Gmail may answer with nothing); the fetched fields decide which really are."""
    found: set[int] = set()
    if facts.sender and address_problem(facts.sender) is None:
        found.update(session.search_raw(f"from:{facts.sender}"))
    if facts.list_id is not None:
        found.update(session.search_header("List-Id", facts.list_id.id) or [])
    return sorted(found)[-MAX_CANDIDATES:]


def _newest_of_list(session: ImapSession, account: Account, bare: str) -> _Chosen:
    """The newest message of the named one's list whose List-Unsubscribe a signer of the named one's
    signed too. Anyone can write a List-Id, and sign their own mail: a newer message of another
    signer is not taken for the list's, or a hostile mail could redirect the user's unsubscribe. An
    unsigned named message stands alone (and policy refuses it)."""
    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    given = read_decision_fields(session, [uid]).get(uid)
    if given is None:
        raise disappeared(bare, account)
    facts = list_facts(given.auth_header or b"")
    signers = facts.signers(LIST_UNSUBSCRIBE)
    if facts.group is not None and signers:
        group = group_messages(session, sorted({*_candidates(session, facts), uid}), account).get(facts.group)
        newer = sorted((m for m in group.offers if order(m) > order(given)), key=order) if group else []
        read = read_decision_fields(session, [m.uid for m in newer[-SIGNED_CANDIDATES:]]) if newer else {}
        for item in sorted(read.values(), key=order, reverse=True):
            found = list_facts(item.auth_header or b"")
            if found.signers(LIST_UNSUBSCRIBE) & signers:
                return _Chosen(item.uid, item.envelope, item.internaldate, found)
    return _Chosen(given.uid, given.envelope, given.internaldate, facts)


def _already(entry: Left) -> MailError:
    answered = f", answered {entry.status}" if entry.status is not None else ""
    if entry.pending:
        return MailError(
            "unsubscribe_refused",
            f"An unsubscribe from this list by {entry.method} ({entry.target}) began on {entry.at} (UTC) and its "
            "outcome is not recorded: another call may be making it right now, or the server stopped while the "
            "request was out, so it may have reached the list. Nothing was contacted now. Only if the user wants "
            "another try, call again with force: true.",
        )
    return MailError(
        "unsubscribe_refused",
        f"This list was already left on {entry.at} (UTC) by {entry.method} ({entry.target}{answered}). Nothing was "
        "contacted now. Mail sent before then may still arrive for a few days. Only if the user wants another "
        "try, call again with force: true.",
    )


def _not_recorded(error: MailError, made: str, retry: str) -> str:
    """The note of an unsubscribe that was made but could not be recorded as done."""
    return (
        f"The unsubscribe was made ({made}), but the record of lists left could not be updated: {error.message} "
        f"This server may not remember that the list was left: do not call mg_unsubscribe for this list again "
        f"({retry})."
    )


def _web_timeout() -> float:
    call = deadline.current()
    left = call.remaining() - DEADLINE_MARGIN_S if call is not None else web.ONE_CLICK_TIMEOUT_S
    return round(max(0.1, min(web.ONE_CLICK_TIMEOUT_S, left)), 1)


async def unsubscribe(
    runtime: Runtime, account_name: str, message_id: str, method: Method, *, dry_run: bool, force: bool
) -> UnsubscribeResult:
    account = runtime.account(account_name)
    policy.check_can_unsubscribe(account.name, account.can_unsubscribe)
    bare = inputs.message_id(message_id)
    chosen = await in_session(runtime, account, lambda s: _newest_of_list(s, account, bare))
    facts = chosen.facts
    if method == "one_click":
        target = policy.check_one_click(account.name, facts)
        contacted = target.shown
    else:
        opt_out = policy.check_mailto(account.name, facts)
        contacted = f"mailto:{opt_out.address}"
    signer = facts.signed_by(
        *(("list-unsubscribe", "list-unsubscribe-post") if method == "one_click" else ("list-unsubscribe",))
    )
    # The list as the overview groups it, as its signer vouches for it: policy passed a signed header.
    vouching = facts.signed_by(LIST_UNSUBSCRIBE)
    envelope = chosen.envelope
    claim = Left(
        account=account.name,
        list=facts.group or f"message:{envelope.message_id if envelope else bare}",
        target=contacted,
        method=method,
        at=now_iso(),
        status=None,
        signer=vouching.domain if vouching else "",
        pending=True,
    )
    left = LeftLists(runtime.state_folder())
    earlier = left.find(account.name, claim.list, claim.signer or "")
    if earlier is not None and not force:
        raise _already(earlier)
    result = UnsubscribeResult(
        account=account.name,
        method=method,
        dry_run=dry_run,
        done=False,
        list_id=facts.list_id.id if facts.list_id else None,
        list_name=facts.list_id.name if facts.list_id else None,
        sender=envelope.from_ if envelope else None,
        message_id=envelope.message_id if envelope else None,
        received_at=iso(chosen.received),
        signed_by=signer.domain if signer else "",
        contacted=contacted,
        remembered=False,
    )
    if dry_run:
        if method == "one_click":
            return await _plan(runtime, target, result)
        note = "Dry run: this message would be sent from the mailbox's own address; nothing was sent."
        mail = OptOutMail(to=opt_out.address, subject=opt_out.subject, body=opt_out.body, message_id=None)
        return result.model_copy(update={"mailto": mail, "note": note})
    # The look and the claim in one locked step: of two calls at once, one finds the other's claim.
    earlier = left.claim(claim, force=force)
    if earlier is not None:
        raise _already(earlier)
    if method == "one_click":
        return await _one_click(runtime, target, result, left, claim)
    return await _mailto(runtime, account, opt_out, result, left, claim, force=force)


async def _plan(runtime: Runtime, target: web.OneClickTarget, result: UnsubscribeResult) -> UnsubscribeResult:
    plan = await web.plan_one_click(target, runtime.web, timeout_s=_web_timeout())
    address = str(plan.addresses[0][0]) if plan.addresses else None
    outcome = OneClickOutcome(status=None, redirect=False, host=plan.target.host, address=address)
    plan_note = "Dry run: the URL and every address of its host passed the checks; nothing was sent."
    return result.model_copy(update={"one_click": outcome, "note": plan_note})


def _take_back(left: LeftLists, claim: Left) -> None:
    """Nothing went out: the claim comes off the record. A failure here is logged, never raised, so
    the caller gets the error that ended the call (the claim left behind refuses the list as begun)."""
    try:
        left.settle(claim, None)
    except MailError as error:
        logger.error("unsubscribe: taking back the claim on %s failed: %s", claim.list, error.message)


async def _one_click(
    runtime: Runtime, target: web.OneClickTarget, result: UnsubscribeResult, left: LeftLists, claim: Left
) -> UnsubscribeResult:
    try:
        answer = await web.post_one_click(target, runtime.web, timeout_s=_web_timeout())
    except web.WebRequestFailed as failure:
        if not failure.request_sent:
            _take_back(left, claim)
            raise  # it never reached the endpoint: not remembered, a later call may try again
        try:
            left.settle(claim, replace(claim, at=now_iso(), pending=False))
        except MailError as error:
            logger.error("unsubscribe: recording %s as left failed: %s", claim.list, error.message)
            recorded = f"Recording the list as left failed too ({error.message})"
        else:
            recorded = "So this list is recorded as left"
        raise MailError(
            failure.code,
            f"{failure.message} The request reached the endpoint. {recorded}; do not call again for this list "
            "unless the user wants another try, and then with force: true.",
        ) from None
    except MailError:
        _take_back(left, claim)  # refused at the lookup: nothing was contacted
        raise
    redirect = 300 <= answer.status < 400
    done = 200 <= answer.status < 300
    note: str | None = None
    if redirect:
        note = (
            f"The endpoint answered {answer.status}, a redirect, which RFC 8058 forbids for one-click: it was not "
            "followed and nothing more was sent, so the unsubscribe may not have taken effect. The user can open "
            "the web_link of mg_list_subscriptions instead."
        )
    elif not done:
        note = (
            f"The endpoint answered {answer.status}, not a success, so the unsubscribe may not have taken effect. "
            "The user can open the web_link of mg_list_subscriptions instead."
        )
    remembered = True
    try:
        left.settle(claim, replace(claim, at=now_iso(), status=answer.status, pending=False))
    except MailError as error:
        remembered = False
        made = f"the POST went to {answer.host}, which answered {answer.status}"
        note = " ".join(filter(None, [note, _not_recorded(error, made, "it would post to the endpoint again")]))
    outcome = OneClickOutcome(status=answer.status, redirect=redirect, host=answer.host, address=answer.address)
    return result.model_copy(update={"one_click": outcome, "done": done, "remembered": remembered, "note": note})


async def _mailto(
    runtime: Runtime,
    account: Account,
    opt_out: policy.OptOut,
    result: UnsubscribeResult,
    left: LeftLists,
    claim: Left,
    *,
    force: bool,
) -> UnsubscribeResult:
    request = Request.server_written(opt_out.address, opt_out.subject, opt_out.body)
    # From the mailbox's own address, no signature, no quote: nothing but what the URL names.
    prepared = Prepared(request, (account.address, None), None, [], None)
    try:
        sent = await send_prepared(runtime, account, prepared, repeat=force)
    except MailError:
        # The send path's own journal answers a retry of a message that may have gone out (duplicate_send).
        _take_back(left, claim)
        raise
    mail = OptOutMail(
        to=opt_out.address,
        subject=opt_out.subject,
        body=opt_out.body,
        message_id=sent.message_id,
        sent_copy=sent.sent_copy,
    )
    remembered, note = True, sent.warning
    try:
        left.settle(claim, replace(claim, at=now_iso(), pending=False))
    except MailError as error:
        remembered = False
        made = f"the opt-out mail <{sent.message_id}> was handed to Gmail for {opt_out.address}"
        note = " ".join(filter(None, [note, _not_recorded(error, made, "the same mail would meet duplicate_send")]))
    return result.model_copy(update={"mailto": mail, "done": True, "remembered": remembered, "note": note})
