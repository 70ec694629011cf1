"""Newsletters as Gmail stores them on arrival, for the subscription tests.

Each message carries what a list sender writes (From, List-Id, List-Unsubscribe and its Post field,
a DKIM-Signature naming the fields it signs) under what Gmail writes on delivery: its trace (the
final hop "by mx.google.com", Received-SPF) and its own Authentication-Results with one `dkim=`
result per signature, in Gmail's form (`header.i=@domain header.s=selector header.b=<first 8 of
b=>`). The fields are written out here, not by the emulator: nothing is verified anywhere (Gmail
verified the real ones), so the test states exactly what Gmail would have recorded.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from gmail_emulator import GmailEmulator

BOTH_FIELDS = ("list-unsubscribe", "list-unsubscribe-post")


@dataclass(frozen=True)
class Newsletter:
    """One list: who sends it, what its header offers, and what Gmail recorded about its signature."""

    sender: str  # From address
    name: str = "Newsletter"
    list_id: str | None = None  # without the angle brackets
    unsubscribe: str | None = None  # the whole List-Unsubscribe value
    post: bool = True  # List-Unsubscribe-Post: List-Unsubscribe=One-Click
    signs: tuple[str, ...] = BOTH_FIELDS  # besides from:to:subject:date, what h= names
    dkim: str = "pass"  # Gmail's result for the signature
    authserv: str = "mx.google.com"  # who wrote the Authentication-Results
    signed: bool = True  # False: no DKIM-Signature field and no dkim= result at all
    extra: tuple[str, ...] = field(default=())  # further header lines as written
    # A second signature that Gmail passed too, above the sender's (a mailing service's own domain):
    # (its d=, besides from:to:subject:date what its h= names).
    cosigned: tuple[str, tuple[str, ...]] | None = None

    @property
    def domain(self) -> str:
        return self.sender.rpartition("@")[2]


def _b(seed: str) -> str:
    return base64.b64encode(hashlib.sha256(seed.encode()).digest()).decode()


def newsletter(letter: Newsletter, recipient: str, number: int, when: datetime) -> tuple[bytes, str]:
    """The raw message (CRLF) and its Message-ID (bare)."""
    message_id = f"{number}.{letter.domain}.{int(when.timestamp())}@{letter.domain}"
    b = _b(message_id)
    stamp = format_datetime(when)
    lines = [
        f"Received: by 2002:a05:6a10:{number % 9999:04x}:0:0:0:0 with SMTP id x{number}csp1;\r\n        {stamp}",
        f"Return-Path: <bounce-{number}@{letter.domain}>",
        f"Received: from mail.{letter.domain} (mail.{letter.domain}. [198.51.100.{number % 250 + 1}])\r\n"
        f"        by mx.google.com with ESMTPS id a{number}si1\r\n        for <{recipient}>;\r\n        {stamp}",
        f"Received-SPF: pass (google.com: domain of bounce-{number}@{letter.domain} designates 198.51.100.7 as "
        "permitted sender) client-ip=198.51.100.7;",
    ]
    results = []
    cosigner = _b(f"cosigned {message_id}")
    if letter.cosigned is not None:
        results.append(f"dkim=pass header.i=@{letter.cosigned[0]} header.s=s2 header.b={cosigner[:8]}")
    if letter.signed:
        results.append(f"dkim={letter.dkim} header.i=@{letter.domain} header.s=s1 header.b={b[:8]}")
    results.append(f"spf=pass smtp.mailfrom=bounce-{number}@{letter.domain}")
    lines.append(f"Authentication-Results: {letter.authserv};\r\n       " + ";\r\n       ".join(results))
    if letter.cosigned is not None:
        domain, fields = letter.cosigned
        lines.append(
            f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d={domain}; s=s2;\r\n"
            f"        h={':'.join(('from', 'to', 'subject', 'date', *fields))};\r\n        bh={_b('body')};\r\n"
            f"        b={cosigner}"
        )
    if letter.signed:
        signed = ":".join(("from", "to", "subject", "date", *letter.signs))
        lines.append(
            f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d={letter.domain}; s=s1;\r\n"
            f"        h={signed};\r\n        bh={_b('body')};\r\n        b={b[:40]}\r\n         {b[40:]}"
        )
    lines += [
        f'From: "{letter.name}" <{letter.sender}>',
        f"To: {recipient}",
        f"Subject: {letter.name} #{number}",
        f"Date: {stamp}",
        f"Message-ID: <{message_id}>",
    ]
    if letter.list_id is not None:
        lines.append(f'List-Id: "{letter.name}" <{letter.list_id}>')
    if letter.unsubscribe is not None:
        lines.append(f"List-Unsubscribe: {letter.unsubscribe}")
        if letter.post:
            lines.append("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
    lines += [*letter.extra, "MIME-Version: 1.0", 'Content-Type: text/plain; charset="utf-8"']
    body = (
        f"Issue {number} of {letter.name}.\r\nTo unsubscribe click https://evil.example/body-link "
        "(a link in the body, never used)\r\n"
    )
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode(), message_id


def deliver(
    emulator: GmailEmulator, recipient: str, letter: Newsletter, count: int = 1, *, first_day: int = 1
) -> list[str]:
    """`count` issues of a list in `recipient`'s inbox, one a day (the newest `first_day` days ago);
    their Message-IDs, newest first."""
    now = datetime.now(UTC).replace(microsecond=0)
    ids = []
    for issue in range(count):
        when = now - timedelta(days=first_day + issue, hours=1)
        number = int(hashlib.sha256(f"{letter.sender} {letter.list_id} {issue}".encode()).hexdigest()[:5], 16)
        raw, message_id = newsletter(letter, recipient, number, when)
        emulator.deliver(recipient, raw, internaldate=when)
        ids.append(message_id)
    return ids
