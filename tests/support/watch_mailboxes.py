"""The three mailboxes the --wait watcher's tests configure, and the line the watcher prints on new mail."""

from __future__ import annotations

from typing import Any

from mcp_multi_gmail.watch.loop import NEW_MAIL_ADVICE

OSOBNI = "osobni@example.cz"
PRACE = "tym@example.com"
AUTOMATY = "upozorneni@example.com"
ACCOUNTS: list[dict[str, Any]] = [
    {"name": "osobni", "address": OSOBNI, "password": "osobniheslohesla"},
    {"name": "prace", "address": PRACE, "password": "tymovehesloheslo"},
    {"name": "automaty", "address": AUTOMATY, "password": "automatyheslooko"},
]


def new_mail_line(counts: str) -> str:
    return f"nová pošta: {counts}. {NEW_MAIL_ADVICE}"
