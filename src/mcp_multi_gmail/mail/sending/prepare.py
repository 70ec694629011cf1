"""What drafts and sends share: the policy checks, the signature, the quote, the attachments.

Every permission is the policy module's decision; this module asks it first, before any
connection is opened, so a refusal changes nothing and sends nothing.
"""

from __future__ import annotations

import mimetypes
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ... import policy
from ...config import Account, Config, Signature
from ...errors import invalid_input, not_found
from ...gmail.imap import ALL_MAIL, ImapSession
from ...gmail.parse.envelope import gmail_msgid_of
from ...gmail.parse.filenames import type_for
from ...request import Prepared, Request
from ..core import inputs
from ..core.lookup import find_message

if TYPE_CHECKING:  # compose and parse load at the first draft or send, not at start-up
    from ...gmail.compose import Quote


def choose_signature(account: Account, alias_address: str | None, wanted: str | bool | None) -> Signature | None:
    """Named signature, else the alias's default, else the account's, else none; never silently unsigned."""
    if wanted is False:
        return None
    name: str | None
    if isinstance(wanted, str):
        name = wanted
    else:
        alias = next(
            (a for a in account.aliases if alias_address and a.address.casefold() == alias_address.casefold()), None
        )
        name = (alias.default_signature if alias else None) or account.default_signature
        if name is None:
            return None
    found = account.signatures.get(name)
    if found is None:
        known = ", ".join(f'"{n}"' for n in account.signatures)
        have = f"It has: {known}." if known else "It has no signatures configured."
        raise not_found(f'Mailbox "{account.name}" has no signature called "{name}". {have}')
    return found


def _read_attachment(path: Path) -> bytes:
    """Read the vetted real path without following a symlink swapped in since the check."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise not_found(f"No readable file at {path} ({error.strerror}).") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise invalid_input(f"{path} is not a regular file.")
        return handle.read()


def _file_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # gone since the check: reading it below reports that
        return 0


def prepare(config: Config, account: Account, request: Request, *, sending: bool) -> Prepared:
    # Attachments first: a refused file stops everything before anything else is looked at.
    allowed = policy.resolve_attachments(request.attachments, config.attachment_dirs)
    policy.check_single_name(allowed)
    recipients = [*request.to, *request.cc, *request.bcc]
    if sending:
        policy.check_can_send(account.name, account.can_send)
    policy.check_has_to(request.to, sending=sending)
    policy.check_recipients(account.name, account.allowed_recipients if sending else None, recipients)
    sender = policy.resolve_sender(
        account.name, account.address, [(a.address, a.name) for a in account.aliases], request.from_alias
    )
    if request.subject is not None:
        policy.check_header_value("subject", request.subject)
    elif not request.in_reply_to:
        raise invalid_input(
            'A subject is needed. Only a reply (in_reply_to) may leave it out: it then gets "Re: " and the '
            "answered message's subject."
        )
    in_reply_to = inputs.message_id(request.in_reply_to) if request.in_reply_to else None
    policy.check_count("references", request.references, policy.MAX_REFERENCES)
    for reference in request.references:
        policy.check_header_value("references", reference)
    signature = choose_signature(account, sender[0] if sender[0] != account.address else None, request.signature)
    # The size limit is policy too, asked before any connection: the text and the files alone
    # already exceed it when the assembled message certainly would.
    least = sum(len(text.encode("utf-8", "surrogatepass")) for text in (request.body, request.html_body or ""))
    least += sum(_file_size(item.path) for item in allowed)
    policy.check_message_size(least, len(allowed))
    files = []
    for item in allowed:
        content = _read_attachment(item.path)
        mime = type_for(item.filename) or mimetypes.guess_type(item.filename)[0] or "application/octet-stream"
        files.append((item.filename, content, mime))
    return Prepared(request, sender, signature, files, in_reply_to)


@dataclass(frozen=True)
class Original:
    """The answered message: its thread (to check joining), subject, and readable body (to quote)."""

    thread_id: int | None
    quote: Quote | None
    subject: str | None = None


# Reply prefixes: "Re:", "RE:", "re:", "Re[2]:", "Re :" (a "Fwd:" is kept: the reply then reads "Re: Fwd: …").
_REPLY_PREFIX = re.compile(r"^\s*re\s*(\[\d+\])?\s*:", re.IGNORECASE)
# Reply and forward prefixes in the languages users meet most, for comparing subjects as Gmail's
# threading does (it ignores them, or at least "Re:").
_ANY_PREFIX = re.compile(r"^\s*(?:(?:re|fw|fwd|aw|wg|sv|vs|odp|tr|rv|antw|atb)\s*(?:\[\d+\])?\s*:\s*)+", re.I)


def reply_subject(original: str | None) -> str:
    """The subject of a reply: "Re: " and the original's, without doubling a "Re:" already there."""
    text = " ".join((original or "").split())  # one line, whatever the original's header held
    if _REPLY_PREFIX.match(text):
        return text
    return f"Re: {text}".rstrip()


def same_topic(subject: str | None, other: str | None) -> bool:
    """Whether two subjects are the same once reply/forward prefixes, spacing and case are set aside."""

    def topic(value: str | None) -> str:
        return " ".join(_ANY_PREFIX.sub("", value or "").split()).casefold()

    return topic(subject) == topic(other)


def detached_warning(who: str, subject: str | None, original_subject: str | None, in_reply_to: str) -> str:
    """Why a reply did not join its thread, as far as can be told from here."""
    if gmail_msgid_of(in_reply_to) is not None:
        cause = (
            "the answered message has no Message-ID (it was shown as its Gmail id), so the reply cannot "
            "name it in In-Reply-To or References, which Gmail needs to put a reply into a thread"
        )
    elif not same_topic(subject, original_subject):
        cause = (
            f'the likely cause is the subject: "{subject or ""}" is not the answered message\'s '
            f'"{original_subject or ""}" (Gmail threads a reply only when the subjects match, apart from '
            'a "Re:"). Keep the original subject, or leave the subject out to get "Re: <original subject>"'
        )
    else:
        cause = (
            f"the subjects match, so the likely cause is the In-Reply-To value <{in_reply_to}>: check that it "
            "is the Message-ID of the message being answered"
        )
    return (
        f"{who} is not in the thread of the message it answers, so sending it would start a separate "
        f"conversation: {cause}."
    )


def read_original(session: ImapSession, account: Account, bare: str, *, with_quote: bool) -> Original:
    """Find the answered message in All Mail; not there → not_found, and nothing is saved or sent."""
    from ...gmail.compose import Quote
    from ...gmail.parse.transfer import decode_body

    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    item = session.fetch([uid], ["X-GM-THRID", "ENVELOPE", "BODYSTRUCTURE"]).get(uid)
    if item is None:
        raise not_found(f'The message <{bare}> disappeared from mailbox "{account.name}" while being read.')
    subject = item.envelope.subject if item.envelope else None
    if not with_quote or item.parts is None:
        return Original(item.thread_id, None, subject)
    bodies = [p for p in item.parts if p.disposition != "attachment" and p.filename is None]
    text_part = next((p for p in bodies if p.mime_type == "text/plain"), None)
    html_part = next((p for p in bodies if p.mime_type == "text/html"), None)
    wanted = [p for p in (text_part, html_part) if p is not None]
    raw = session.fetch_parts(uid, [p.part_id for p in wanted])
    decoded = {p.mime_type: decode_body(raw[p.part_id], p.encoding, p.charset) for p in wanted if p.part_id in raw}
    envelope = item.envelope
    author = envelope.from_ if envelope else None
    quote = Quote(
        author_name=author.name if author else None,
        author_address=author.address if author else None,
        date=envelope.date if envelope else None,
        text=decoded.get("text/plain"),
        html=decoded.get("text/html"),
    )
    return Original(item.thread_id, quote, subject)


def subject_of(prepared: Prepared, original: Original) -> str:
    """The subject given, or for a reply without one, "Re: " and the answered message's subject."""
    given = prepared.request.subject
    return given if given is not None else reply_subject(original.subject)


def no_quote_warning(prepared: Prepared, quote_wanted: bool, quoted: bool) -> str | None:
    if quote_wanted and prepared.in_reply_to and not quoted:
        return (
            "The message being answered has no readable body to quote, so the reply carries no history; "
            "that matters most when it is passed on to someone new."
        )
    return None
