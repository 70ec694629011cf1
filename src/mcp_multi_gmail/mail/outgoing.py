"""What drafts and sends share: the policy checks, the signature, the quote, the attachments.

Every permission is the policy module's decision; this module asks it first, before any
connection is opened, so a refusal changes nothing and sends nothing.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import policy
from ..config import Account, Config, Signature
from ..errors import invalid_input, not_found
from ..gmail.imap import ALL_MAIL, ImapSession
from . import inputs
from .read import find_message

if TYPE_CHECKING:  # compose and parse load at the first draft or send, not at start-up
    from ..gmail.compose import Draft, Quote


@dataclass(frozen=True)
class Request:
    """The arguments of mg_save_draft / mg_send_message."""

    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    body: str
    html_body: str | None
    in_reply_to: str | None
    references: list[str]
    quote_original: bool
    signature: str | bool | None  # a name, False for none, None for the default
    from_alias: str | None
    attachments: list[str]


@dataclass(frozen=True)
class Prepared:
    """A request that passed every check, with its files read."""

    request: Request
    sender: tuple[str, str | None]
    signature: Signature | None
    files: list[tuple[str, bytes, str]]
    in_reply_to: str | None  # bare

    @property
    def recipients(self) -> list[str]:
        return [*self.request.to, *self.request.cc, *self.request.bcc]


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
    policy.check_header_value("subject", request.subject)
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
        mime = mimetypes.guess_type(item.filename)[0] or "application/octet-stream"
        files.append((item.filename, content, mime))
    return Prepared(request, sender, signature, files, in_reply_to)


@dataclass(frozen=True)
class Original:
    """The answered message: its thread (to check joining) and its readable body (to quote)."""

    thread_id: int | None
    quote: Quote | None


def read_original(session: ImapSession, account: Account, bare: str, *, with_quote: bool) -> Original:
    """Find the answered message in All Mail; not there → not_found, and nothing is saved or sent."""
    from ..gmail.compose import Quote
    from ..gmail.parse import decode_body

    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    item = session.fetch([uid], ["X-GM-THRID", "ENVELOPE", "BODYSTRUCTURE"]).get(uid)
    if item is None:
        raise not_found(f'The message <{bare}> disappeared from mailbox "{account.name}" while being read.')
    if not with_quote or item.parts is None:
        return Original(item.thread_id, None)
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
    return Original(item.thread_id, quote)


def draft_of(prepared: Prepared, quote: Quote | None) -> Draft:
    from ..gmail.compose import Draft

    request = prepared.request
    return Draft(
        from_address=prepared.sender[0],
        from_name=prepared.sender[1],
        to=request.to,
        cc=request.cc,
        bcc=request.bcc,
        subject=request.subject,
        body=request.body,
        html_body=request.html_body,
        in_reply_to=prepared.in_reply_to,
        references=request.references,
        signature=prepared.signature,
        quote=quote,
        attachments=prepared.files,
    )


def no_quote_warning(prepared: Prepared, quote_wanted: bool, quoted: bool) -> str | None:
    if quote_wanted and prepared.in_reply_to and not quoted:
        return (
            "The message being answered has no readable body to quote, so the reply carries no history; "
            "that matters most when it is passed on to someone new."
        )
    return None
