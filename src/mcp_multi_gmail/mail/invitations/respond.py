"""mg_respond_invitation: the answer to an invitation, as the organizer's calendar reads it.

An iTIP REPLY (RFC 5546 §3.2.3) sent by iMIP (RFC 6047) to the ORGANIZER, in the invitation's
thread: `multipart/mixed` of a short text in the user's language and `text/calendar;
method=REPLY` (gmail/itip.py, gmail/compose.py). It goes out through mg_send_message's own path
(mail/sending): the send policy, the journal against a second send, the Sent copy verified.

Refused, with nothing sent: a message that is no invitation, a cancelled event, a method other
than REQUEST, no organizer, this mailbox not among the attendees, and an invitation that a
newer one (a higher SEQUENCE for the same UID and occurrence) in the mailbox has replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from ...config import Account
from ...errors import MailError, invalid_input
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession
from ...gmail.itip import reply_calendar
from ...gmail.parse.calevent import EventReading, choose_event, read_event
from ...gmail.parse.icalendar import CalendarError, Component, Property, read_calendar
from ...gmail.parse.transfer import decode_bytes
from ...request import CalendarPart, Request
from ...runtime import Runtime
from ..core import budget, inputs
from ..core.invitations import MAX_CALENDAR_BYTES, calendar_parts, read_invitations
from ..core.lookup import find_message
from ..core.session import in_session
from ..core.summary import self_addresses
from ..sending import SendResult, send_prepared
from ..sending.prepare import prepare

Response = Literal["accepted", "declined", "tentative"]
# Messages looked at for a newer version of the invitation, newest first: the thread's and the organizer's.
NEWER_LOOKED_AT = 50

CALENDAR_NOTE = (
    "The organizer's calendar takes this answer. The user's own Google Calendar entry, which Gmail added by "
    "itself, may keep its old state: to change it there too, the user answers in Google Calendar (or with "
    "Gmail's Yes/No/Maybe buttons under the invitation)."
)
# The text beside the REPLY, in the language the user's quotes are in (config quote_locale).
_LINES = {
    "cs": {
        "accepted": "Přijímám pozvánku: {what}.",
        "declined": "Pozvánku odmítám: {what}.",
        "tentative": "Možná přijdu: {what}.",
    },
    "en": {
        "accepted": "I accept the invitation: {what}.",
        "declined": "I decline the invitation: {what}.",
        "tentative": "I may attend: {what}.",
    },
}


class RespondResult(BaseModel):
    account: str
    response: Response
    organizer: str = Field(description="Where the answer went")
    attendee: str = Field(description="The address that answered, as the invitation addressed it (may be an alias)")
    uid: str | None
    sequence: int
    occurrence: str | None = Field(
        description="RECURRENCE-ID when the answer is for one occurrence; null: the whole event"
    )
    sent: SendResult
    calendar_note: str = Field(description="What changes where: read it to the user")
    cut: list[budget.Cut] = budget.cut_field()


@dataclass(frozen=True)
class _Invitation:
    reading: EventReading
    event: Component
    attendee: Property
    subject: str | None


def _refuse(message_id: str, why: str) -> Exception:
    return invalid_input(f"<{message_id}> cannot be answered: {why} Nothing was sent.")


def _attendee_line(event: Component, own: frozenset[str]) -> Property | None:
    for prop in event.all("ATTENDEE"):
        value = prop.value.strip()
        address = value[7:] if value.lower().startswith("mailto:") else value
        if address.strip().casefold() in own:
            return prop
    return None


def _read(session: ImapSession, uid: int, item: Fetched, bare: str, own: frozenset[str]) -> _Invitation:
    parts = [part for part in calendar_parts(item.parts) if (part.size or 0) <= MAX_CALENDAR_BYTES]
    if not parts:
        raise _refuse(bare, "it is not an invitation (it carries no calendar part).")
    answers = session.fetch_beginnings([uid], {part.part_id: (part.size or 0) + 1 for part in parts}).get(uid, {})
    reason = "its calendar part could not be fetched."
    for part in parts:
        raw = answers.get(part.part_id)
        if raw is None:
            continue
        data = decode_bytes(raw, part.encoding)
        try:
            reading = read_event(data, part.charset, own)
            event, _changed = choose_event(read_calendar(data, part.charset))
        except CalendarError as error:
            reason = f"its calendar cannot be read ({error})."
            continue
        attendee = _attendee_line(event, own)
        subject = item.envelope.subject if item.envelope else None
        return _Invitation(reading, event, attendee, subject) if attendee else _no_attendee(bare, reading, own)
    raise _refuse(bare, f"it is not an invitation: {reason}")


def _no_attendee(bare: str, reading: EventReading, own: frozenset[str]) -> _Invitation:
    _check(bare, reading)  # a cancelled or REPLY message says so first
    raise _refuse(
        bare,
        f"none of this mailbox's addresses ({', '.join(sorted(own))}) is among the invitation's attendees "
        "(it may have been forwarded to the user, or sent to a list).",
    )


def _check(bare: str, reading: EventReading) -> None:
    if reading.cancelled:
        raise _refuse(bare, "the event was cancelled.")
    if reading.method != "REQUEST":
        raise _refuse(
            bare, f"its method is {reading.method or 'not given'}; only an invitation (METHOD:REQUEST) is answered."
        )
    if reading.organizer is None or not reading.organizer.address:
        raise _refuse(bare, "the invitation names no organizer to send the answer to.")


def _newer(session: ImapSession, account: Account, item: Fetched, found: _Invitation) -> str | None:
    """The Message-ID of a newer version of the same invitation in the mailbox, if there is one."""
    reading = found.reading
    organizer = reading.organizer.address if reading.organizer else None
    uids = set(session.search(["X-GM-THRID", item.thread_id])) if item.thread_id else set()
    if organizer:
        uids |= set(session.search(["FROM", organizer]))
    uids.discard(item.uid)
    newest = sorted(uids)[-NEWER_LOOKED_AT:]
    if not newest:
        return None
    fetched = session.fetch(newest, ["ENVELOPE", "BODYSTRUCTURE"])
    occurrence = reading.recurrence_id.utc or reading.recurrence_id.value if reading.recurrence_id else None
    for uid, (invitation, _why) in read_invitations(session, fetched.values(), account).items():
        if invitation is None or invitation.uid != reading.uid or invitation.sequence <= reading.sequence:
            continue
        other = invitation.recurrence_id.utc or invitation.recurrence_id.value if invitation.recurrence_id else None
        if other == occurrence or other is None:
            envelope = fetched[uid].envelope
            return (envelope.message_id if envelope else None) or f"UID {uid}"
    return None


def _look(session: ImapSession, account: Account, bare: str) -> _Invitation:
    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    item = session.fetch([uid], ["X-GM-THRID", "ENVELOPE", "BODYSTRUCTURE"]).get(uid)
    if item is None:
        raise _refuse(bare, "it disappeared while being read.")
    found = _read(session, uid, item, bare, frozenset(self_addresses(account)))
    _check(bare, found.reading)
    newer = _newer(session, account, item, found)
    if newer is not None:
        raise _refuse(
            bare,
            f"a newer version of this invitation (a higher SEQUENCE) is in the mailbox as <{newer}>; answer that one.",
        )
    return found


def _text(locale: str, response: Response, what: str, comment: str | None) -> str:
    body = _LINES.get(locale, _LINES["en"])[response].format(what=what).replace(": .", ".")
    return f"{body}\n\n{comment}" if comment else body


async def respond_invitation(
    runtime: Runtime, account_name: str, message_id: str, response: Response, comment: str | None
) -> RespondResult:
    bare = inputs.message_id(message_id)
    account = runtime.account(account_name)
    found = await in_session(runtime, account, lambda s: _look(s, account, bare))
    reading = found.reading
    organizer = reading.organizer.address if reading.organizer and reading.organizer.address else ""
    attendee_value = found.attendee.value.strip()
    attendee = attendee_value[7:] if attendee_value.lower().startswith("mailto:") else attendee_value
    body = _text(runtime.config.quote_locale, response, reading.summary or found.subject or "", comment)
    occurrence = found.event.first("RECURRENCE-ID")
    calendar = CalendarPart(
        method="REPLY",
        text=reply_calendar(found.event, found.attendee, response, comment),
        key="|".join(
            [reading.uid or "", str(reading.sequence), occurrence.value if occurrence else "", attendee, response]
        ),
    )
    request = Request.server_written(
        organizer,
        None,  # "Re: " and the invitation's subject keeps the answer in its thread
        body,
        in_reply_to=bare,
        from_alias=attendee if attendee.casefold() != account.address.casefold() else None,
        calendar=calendar,
    )
    prepared = prepare(runtime.config, account, request, sending=True)
    try:
        sent = await send_prepared(runtime, account, prepared, repeat=False)
    except MailError as error:
        if error.code != "duplicate_send":
            raise
        # The send path's own words offer `repeat`, which this tool does not have.
        raise MailError(
            "duplicate_send",
            f'This same answer ({response}) to <{bare}> was already handed to Gmail from mailbox "{account.name}" '
            "today; nothing was sent now. A different answer can be sent; the same one again cannot.",
        ) from None
    return RespondResult(
        account=account.name,
        response=response,
        organizer=organizer,
        attendee=attendee,
        uid=reading.uid,
        sequence=reading.sequence,
        occurrence=occurrence.value if occurrence else None,
        sent=sent,
        calendar_note=CALENDAR_NOTE,
    )
