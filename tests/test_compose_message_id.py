"""Outgoing message composition (gmail/compose.py), the content-derived Message-ID: the same content
gives the same id, so a repeated send is recognised as one message."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest

from mcp_multi_gmail.gmail.compose import content_message_id
from support.composing import build, make_draft, parse

ID_INPUT: dict[str, Any] = {
    "account": "osobni",
    "sender": "ja@example.cz",
    "to": ["petr@example.com", "Eva@Example.com"],
    "cc": ["ota@example.com"],
    "bcc": [],
    "subject": "Schůzka",
    "body": "Ahoj,\nuvidíme se.",
    "html_body": None,
    "attachments": [("a.pdf", b"%PDF-1")],
    "in_reply_to": "orig@example.com",
    "day": date(2026, 9, 29),
}


def message_id_for(**changes: Any) -> str:
    fields = {**ID_INPUT, **changes}
    draft = make_draft(
        from_address=fields["sender"],
        to=fields["to"],
        cc=fields["cc"],
        bcc=fields["bcc"],
        subject=fields["subject"],
        body=fields["body"],
        html_body=fields["html_body"],
        attachments=[(name, content, "application/pdf") for name, content in fields["attachments"]],
        in_reply_to=fields["in_reply_to"],
    )
    return content_message_id(draft.prepared, account=fields["account"], day=fields["day"])


def test_content_message_id_is_stable_and_shaped() -> None:
    first = message_id_for()
    assert first == message_id_for()
    assert re.fullmatch(r"[0-9a-f]{32}\.mg@example\.cz", first)
    # Line endings, recipient order/case and brackets do not make it another send.
    assert first == message_id_for(
        to=["eva@example.com", " PETR@example.com"],
        body="Ahoj,\r\nuvidíme se.",
        in_reply_to="<orig@example.com>",
        sender="JA@example.cz",
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"account": "tym"},
        {"sender": "jiny@example.cz"},
        {"to": ["petr@example.com"]},
        {"cc": []},
        {"bcc": ["skryty@example.com"]},
        {"to": ["petr@example.com"], "cc": ["ota@example.com", "eva@example.com"]},
        {"subject": "Schůzka!"},
        {"body": "Ahoj,\nuvidíme se!"},
        {"html_body": "<div>Ahoj</div>"},
        {"attachments": []},
        {"attachments": [("b.pdf", b"%PDF-1")]},
        {"attachments": [("a.pdf", b"%PDF-2")]},
        {"in_reply_to": None},
        {"in_reply_to": "other@example.com"},
        {"day": date(2026, 9, 30)},
    ],
    ids=lambda changes: ",".join(changes),
)
def test_content_message_id_changes_with_any_input(changes: dict[str, Any]) -> None:
    assert message_id_for(**changes) != message_id_for()


def test_content_message_id_uses_the_utc_day_of_a_datetime() -> None:
    late = datetime(2026, 9, 30, 1, 30, tzinfo=timezone(timedelta(hours=2)))  # 29 Sep 23:30 UTC
    assert message_id_for(day=late) == message_id_for()


def test_content_message_id_feeds_compose() -> None:
    message_id = message_id_for()
    composed = build(message_id=message_id)
    assert composed.message_id == message_id
    assert parse(composed.data)["Message-ID"] == f"<{message_id}>"
