"""Building outgoing messages in tests of gmail/compose.py: a draft from flat field values, a quoted
original, the composed message, and the standard library's reading of it.
"""

from __future__ import annotations

import dataclasses
import email
import email.policy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from email.message import EmailMessage
from typing import Any

import pytest

from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.compose import Composed, Draft, Quote, compose
from mcp_multi_gmail.request import Prepared, Request

SENT_AT = datetime(2026, 9, 29, 10, 0, tzinfo=timezone(timedelta(hours=2)))
# 12:05 UTC is 14:05 in Prague (summer time).
ORIGINAL_AT = datetime(2026, 9, 28, 12, 5, tzinfo=UTC)


def make_draft(**changes: Any) -> Draft:
    """A draft from flat field values; each goes where it lives (request, prepared, draft)."""
    fields: dict[str, Any] = {
        "from_address": "ja@example.cz",
        "from_name": None,
        "to": ["petr@example.com"],
        "cc": [],
        "bcc": [],
        "subject": "Schůzka",
        "body": "Ahoj,\nuvidíme se zítra.",
        "html_body": None,
        "in_reply_to": None,
        "references": [],
        "signature": None,
        "quote": None,
        "attachments": [],
    }
    unknown = set(changes) - set(fields)
    assert not unknown, unknown
    fields.update(changes)
    request = Request(
        to=fields["to"],
        cc=fields["cc"],
        bcc=fields["bcc"],
        subject=fields["subject"],
        body=fields["body"],
        html_body=fields["html_body"],
        in_reply_to=fields["in_reply_to"],
        references=fields["references"],
        quote_original=fields["quote"] is not None,
        signature=None,
        from_alias=None,
        attachments=[],
    )
    prepared = Prepared(
        request,
        (fields["from_address"], fields["from_name"]),
        fields["signature"],
        fields["attachments"],
        fields["in_reply_to"],
    )
    return Draft(prepared, fields["subject"], fields["quote"])


def make_quote(**changes: Any) -> Quote:
    base = Quote(
        author_name="Jan Novák",
        author_address="jan@example.com",
        date=ORIGINAL_AT,
        text="Dobrý den,\n\nposílám návrh.",
        html=None,
    )
    return dataclasses.replace(base, **changes)


def build(draft: Draft | None = None, *, locale: str = "cs", message_id: str = "abc123.mg@example.cz") -> Composed:
    return compose(
        draft or make_draft(),
        message_id=message_id,
        date=SENT_AT,
        quote_locale="cs" if locale == "cs" else "en",
    )


def parse(data: bytes) -> EmailMessage:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def header_block(data: bytes) -> bytes:
    return data.partition(b"\r\n\r\n")[0]


def bodies(data: bytes) -> tuple[str, str]:
    msg = parse(data)
    plain = msg.get_body(("plain",))
    markup = msg.get_body(("html",))
    assert isinstance(plain, EmailMessage) and isinstance(markup, EmailMessage)
    # Text travels in canonical form (CRLF); compare it with LF line ends.
    return plain.get_content().replace("\r\n", "\n"), markup.get_content().replace("\r\n", "\n")


def refused(call: Callable[[], object], *fragments: str) -> MailError:
    with pytest.raises(MailError) as info:
        call()
    assert info.value.code == "invalid_input", info.value.message
    for fragment in fragments:
        assert fragment in info.value.message
    return info.value
