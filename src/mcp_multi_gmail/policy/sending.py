"""Sending: may this mailbox send, to whom (allowed_recipients), from which address (its aliases),
and may a message this large go out."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import MailError
from ..headers import address_problem, check_header_value, is_header_breaking, show
from .common import _quoted_list, _refuse_bare_str

MAX_MESSAGE_MB = 25  # MiB, as Gmail counts them
MAX_MESSAGE_BYTES = MAX_MESSAGE_MB * 1024 * 1024
# Upper bounds on the lists a tool takes: a message with more recipients, references or files than
# this is no real message, only a flood (and an error listing 10 000 addresses is unreadable).
# smtp.gmail.com takes at most 100 recipients a message (Google Workspace help, "Gmail sending limits
# in Google Workspace", https://support.google.com/a/answer/166852); past that Gmail refuses mid-send,
# after some recipients were accepted, so the bound is checked before anything is sent.
MAX_RECIPIENTS = 100
MAX_REFERENCES = 500


def check_can_send(account: str, can_send: bool) -> None:
    if not can_send:
        raise MailError(
            "send_forbidden",
            f'Mailbox "{account}" may not send mail: sending is not enabled for it in the '
            "configuration. Nothing was sent. A draft can still be saved with mg_save_draft "
            "for the user to review and send.",
        )


def check_has_to(to: Sequence[str], *, sending: bool) -> None:
    """`to` needs at least one address, as in 1.5.0: a message only to Cc/Bcc has no To header."""
    _refuse_bare_str("to", to)
    if not any(address.strip() for address in to):
        done = "Nothing was sent." if sending else "Nothing was saved."
        raise MailError(
            "invalid_input",
            f"The message needs at least one address in `to`; cc and bcc alone are not enough. {done}",
        )


def check_recipients(account: str, allowed: Sequence[str] | None, recipients: Sequence[str]) -> None:
    """Every to/cc/bcc recipient must be a plain address and, if a list is configured, on it."""
    _refuse_bare_str("recipients", recipients)
    if allowed is not None:
        _refuse_bare_str("allowed", allowed)
    if not recipients:
        raise MailError("send_forbidden", f'The message from mailbox "{account}" has no recipient. Nothing was sent.')
    if len(recipients) > MAX_RECIPIENTS:
        raise MailError(
            "invalid_input",
            f"{len(recipients)} recipients (to, cc and bcc together) in one message; Gmail takes at most "
            f"{MAX_RECIPIENTS}. Nothing was sent or saved. Split the recipients into several messages of at most "
            f"{MAX_RECIPIENTS} each.",
        )

    # Controls are looked for before trimming: the caller may hand the untrimmed value to SMTP.
    malformed = [
        r for r in recipients if any(is_header_breaking(ch) for ch in r) or address_problem(r.strip()) is not None
    ]
    trimmed = [r.strip() for r in recipients]
    if malformed:
        raise MailError(
            "invalid_input",
            f"Not a plain e-mail address: {_quoted_list(malformed)}. Give each recipient as a bare "
            "address such as name@example.com, one address per list entry, without a display name, "
            "angle brackets, quotes, commas, semicolons, brackets or spaces, and with national characters "
            "only after the @. Nothing was sent.",
        )
    if allowed is None:
        return

    entries = {a.strip().lower() for a in allowed}
    # An entry "@d" allows the whole domain d and only it: "x@evil-d" and "x@sub.d" are other
    # domains. A plain address has one @ and a non-empty domain, so an entry of "@" alone
    # allows nobody.
    domains = {e[1:] for e in entries if e.startswith("@")}

    def permitted(address: str) -> bool:
        low = address.lower()
        return low in entries or low.rpartition("@")[2] in domains

    refused = list(dict.fromkeys(r for r in trimmed if not permitted(r)))
    if refused:
        if allowed:
            rule = f"Its allowed_recipients list allows only: {_quoted_list(list(allowed))}."
        else:
            rule = "Its allowed_recipients list is empty, which allows nobody."
        raise MailError(
            "send_forbidden",
            f'Mailbox "{account}" may not write to {_quoted_list(refused)}. {rule} Nothing was sent.',
        )


def resolve_sender(
    account: str,
    account_address: str,
    aliases: Sequence[tuple[str, str | None]],
    from_alias: str | None,
) -> tuple[str, str | None]:
    """The From address and display name: the account itself, or one of its configured aliases."""
    if from_alias is None or not from_alias.strip():
        return account_address, None
    wanted = from_alias.strip().lower()
    if wanted == account_address.strip().lower():
        return account_address, None
    for address, name in aliases:
        if address.strip().lower() == wanted:
            check_header_value("From", address)
            display = name.replace('"', "").strip() if name is not None else ""
            if display:
                check_header_value("From display name", display)
            return address, display or None
    if aliases:
        known = "Its aliases are: " + ", ".join(f"{addr} ({name})" if name else addr for addr, name in aliases)
    else:
        known = f"It has no aliases configured, so it writes only as {account_address}"
    raise MailError(
        "send_forbidden",
        f'Mailbox "{account}" may not write as "{show(from_alias.strip())}". {known}. Nothing was sent.',
    )


def check_message_size(size_bytes: int, attachment_count: int) -> None:
    """Gmail refuses messages over 25 MiB; refuse before anything is sent or stored."""
    if size_bytes <= MAX_MESSAGE_BYTES:
        return
    # Rounded up, so a message just over the limit never reads as exactly 25.0 MB.
    size_mb = math.ceil(size_bytes * 10 / (1024 * 1024)) / 10
    note = ""
    if attachment_count > 0:
        note = (
            f", counting its {attachment_count} attachment(s) - encoding makes them about a third "
            "larger than the files on disk"
        )
    raise MailError(
        "send_forbidden",
        f"The assembled message is {size_mb:.1f} MB, over the {MAX_MESSAGE_MB:.1f} MB "
        f"Gmail accepts{note}. Nothing was sent or saved.",
    )
