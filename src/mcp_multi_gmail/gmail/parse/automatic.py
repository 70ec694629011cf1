"""Whether a message was written by a machine, and which messages it answers.

What `mg_awaiting_replies` decides an answer on, read from one HEADER.FIELDS block:
- automatic mail: `Auto-Submitted` with any value but `no` (RFC 3834 section 5), `Precedence`
  bulk, list, junk or auto_reply, and the auto-reply markers mail servers add (`X-Autoreply`,
  `X-Autorespond`, `X-Auto-Response-Suppress` on an answer);
- an out-of-office: automatic mail that says it replies (`auto-replied`, `X-Autoreply`, a subject
  such as "Automatic reply:");
- a delivery report: `multipart/report` (RFC 6522) or a report from mailer-daemon/postmaster;
- mailing-list mail: `List-Id` (RFC 2919) or `List-Unsubscribe` (RFC 2369);
- a calendar answer: a `text/calendar` body with `method=REPLY` (RFC 6047 section 2.4);
- the ids it names in `In-Reply-To` and `References` (RFC 5322 section 3.6.4).

It decides nothing on its own: the service layer weighs these facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .authresults import ordered_headers

# Asked for in one FETCH of every message in the window (gmail/imap header_fields_item).
FIELDS = (
    "AUTO-SUBMITTED",
    "PRECEDENCE",
    "X-AUTOREPLY",
    "X-AUTORESPOND",
    "X-AUTO-RESPONSE-SUPPRESS",
    "LIST-ID",
    "LIST-UNSUBSCRIBE",
    "CONTENT-TYPE",
    "IN-REPLY-TO",
    "REFERENCES",
    "SUBJECT",
)

# Whole local parts (before "@", "+tag" dropped) of addresses nobody reads answers at.
NO_REPLY_LOCAL_PARTS = frozenset(
    {
        "no-reply",
        "noreply",
        "no_reply",
        "donotreply",
        "do-not-reply",
        "do_not_reply",
        "mailer-daemon",
        "postmaster",
        "notifications",
        "notification",
        "alerts",
        "bounces",
        "bounce",
    }
)
_BULK = {"bulk", "list", "junk"}
_ID = re.compile(r"<([^<>\s]+)>")
# Subjects of out-of-office answers in the languages a Czech user meets most.
_AWAY_SUBJECT = re.compile(
    r"^\s*(automatic reply|auto(?:matic)?[- ]?reply|out of (?:the )?office|automatická odpověď|"
    r"nepřítomnost|abwesenheitsnotiz|automatische antwort)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Facts:
    automatic: bool  # written by a machine: never an answer
    away: bool  # an automatic answer (an out-of-office): says so, the thread stays waiting
    report: bool  # a delivery report
    mailing_list: bool
    calendar_reply: bool
    names: frozenset[str]  # Message-IDs in In-Reply-To and References, bare and case-folded


def _ids(value: str) -> set[str]:
    return {found.casefold() for found in _ID.findall(value)}


def facts(block: bytes | None, sender: str | None) -> Facts:
    """The facts of one message from its header block and its From address."""
    fields: dict[str, str] = {}
    names: set[str] = set()
    for name, value in ordered_headers(block or b""):
        if name in ("in-reply-to", "references"):
            names |= _ids(value)
        fields.setdefault(name, value.strip())
    auto_submitted = fields.get("auto-submitted", "").split(";")[0].strip().casefold()
    precedence = fields.get("precedence", "").strip().casefold()
    content_type = fields.get("content-type", "").casefold()
    local = (sender or "").rpartition("@")[0].split("+")[0].casefold()
    report = content_type.startswith("multipart/report") or local in ("mailer-daemon", "postmaster")
    marked = any(name in fields for name in ("x-autoreply", "x-autorespond"))
    away = (
        auto_submitted == "auto-replied"
        or precedence == "auto_reply"
        or marked
        or bool(_AWAY_SUBJECT.match(fields.get("subject", "")))
    )
    automatic = (
        (auto_submitted not in ("", "no"))
        or precedence in _BULK
        or away
        or report
        or "x-auto-response-suppress" in fields
    )
    return Facts(
        automatic=automatic,
        away=away and not report,
        report=report,
        mailing_list="list-id" in fields or "list-unsubscribe" in fields,
        calendar_reply=content_type.startswith("text/calendar") and "reply" in content_type,
        names=frozenset(names),
    )


def is_no_reply(address: str | None) -> bool:
    """Whether an address is one nobody answers from: its whole local part, never a substring."""
    if not address or "@" not in address:
        return False
    local = address.rpartition("@")[0].split("+")[0].casefold()
    return local in NO_REPLY_LOCAL_PARTS
