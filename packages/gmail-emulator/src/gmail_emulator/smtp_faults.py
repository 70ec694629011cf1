"""The emulator's SMTP fault rules and the replies smtp.gmail.com gives when it refuses.

`SmtpFault` is the public rule a test arms (`GmailEmulator.add_smtp_fault`); the reply texts are
Gmail's own (observed: BEHAVIOURS.md, "SMTP").
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Literal

__all__ = ["Action", "Armed", "PortKind", "SmtpFault", "Stage", "bad_credentials", "fault_reply"]

PortKind = Literal["ssl", "starttls"]
Stage = Literal["connect", "ehlo", "auth", "mail", "rcpt", "data", "after_data"]
Action = Literal["421", "450", "454", "550", "535", "534", "quota", "web_login", "drop", "hold"]
_STAGES: frozenset[str] = frozenset({"connect", "ehlo", "auth", "mail", "rcpt", "data", "after_data"})
_ACTIONS: frozenset[str] = frozenset({"421", "450", "454", "550", "535", "534", "quota", "web_login", "drop", "hold"})


@dataclass(frozen=True)
class SmtpFault:
    """An injected SMTP failure.

    `stage`: where it fires - "connect" (instead of the greeting), "ehlo", "auth" (after the
    credentials were read), "mail", "rcpt", "data" (after the message content was read, the message
    is NOT accepted) or "after_data" (the message IS accepted, recorded and filed; only the reply
    changes).
    `action`: "421" (``421 4.7.0 Try again later``, then the connection closes), "550"
    (``550 5.1.1`` at rcpt: only that recipient is rejected), "535" (bad credentials), "534"
    (application-specific password required), "454" (``454 4.7.0 Too many login attempts``), "450"
    (``450 4.2.1`` a recipient receiving mail too fast, temporary), "quota" (``550 5.4.5 Daily user
    sending limit exceeded``), "web_login" (``534 5.7.14`` sign in through a web browser first) or
    "drop" (the connection is closed without a reply) or "hold" (no reply until the client goes
    away: a test can kill the client at exactly this point; `held()` counts the holds reached).
    `times`: how often the rule fires; -1 = always.
    `port_kind`: only on that port ("ssl" = 465-style, "starttls" = 587-style); None = both.
    `match`: a glob (case-insensitive) on the stage's address: the MAIL FROM address at "mail", the
    RCPT TO address at "rcpt", the login name at "auth"; the rule never fires on other stages when
    set.
    """

    stage: Stage
    action: Action
    times: int = 1
    port_kind: PortKind | None = None
    match: str | None = None

    def __post_init__(self) -> None:
        if self.stage not in _STAGES:
            raise ValueError(f"unknown SMTP fault stage {self.stage!r} (one of {sorted(_STAGES)})")
        if self.action not in _ACTIONS:
            raise ValueError(f"unknown SMTP fault action {self.action!r} (one of {sorted(_ACTIONS)})")
        if self.port_kind not in (None, "ssl", "starttls"):
            raise ValueError(f"unknown port kind {self.port_kind!r}")
        if self.times == 0 or self.times < -1:
            raise ValueError("times must be positive or -1 (always)")
        if self.action == "hold" and self.stage not in ("mail", "rcpt", "data", "after_data"):
            raise ValueError("hold works at mail, rcpt, data and after_data")

    def applies(self, stage: str, port_kind: str, address: str | None) -> bool:
        if self.stage != stage or (self.port_kind is not None and self.port_kind != port_kind):
            return False
        if self.match is None:
            return True
        return address is not None and fnmatch.fnmatchcase(address.lower(), self.match.lower())


# --------------------------------------------------------------------------- Gmail's replies


def bad_credentials(tx: str) -> str:
    return (
        "535-5.7.8 Username and Password not accepted. For more information, go to\r\n"
        f"535 5.7.8  https://support.google.com/mail/?p=BadCredentials {tx} - gsmtp"
    )


def _app_password_required(tx: str) -> str:
    return (
        "534-5.7.9 Application-specific password required. For more information, go to\r\n"
        f"534 5.7.9  https://support.google.com/mail/?p=InvalidSecondFactor {tx} - gsmtp"
    )


def _no_such_user(tx: str) -> str:
    return (
        "550-5.1.1 The email account that you tried to reach does not exist. Please try\r\n"
        "550-5.1.1 double-checking the recipient's email address for typos or\r\n"
        "550-5.1.1 unnecessary spaces. For more information, go to\r\n"
        f"550 5.1.1  https://support.google.com/mail/?p=NoSuchUser {tx} - gsmtp"
    )


def _web_login(tx: str) -> str:
    return (
        "534-5.7.14 <https://accounts.google.com/signin/continue?sarp=1&scc=1&plt=EMULATOR> Please log in\r\n"
        "534-5.7.14 via your web browser and then try again.\r\n"
        f"534 5.7.14  Learn more at https://support.google.com/mail/answer/78754 {tx} - gsmtp"
    )


def fault_reply(action: str, stage: str, tx: str) -> str:
    if action == "421":
        return f"421 4.7.0 Try again later, closing connection. ({stage.upper()}) {tx} - gsmtp"
    if action == "454":
        return f"454 4.7.0 Too many login attempts, please try again later. {tx} - gsmtp"
    if action == "450":
        return (
            "450-4.2.1 The user you are trying to contact is receiving mail at a rate that\r\n"
            f"450 4.2.1 prevents additional messages from being delivered. {tx} - gsmtp"
        )
    if action == "quota":
        return (
            "550-5.4.5 Daily user sending limit exceeded. For more information on Gmail's\r\n"
            f"550 5.4.5 sending limits go to https://support.google.com/a/answer/166852 {tx} - gsmtp"
        )
    if action == "web_login":
        return _web_login(tx)
    if action == "535":
        return bad_credentials(tx)
    if action == "534":
        return _app_password_required(tx)
    if stage == "rcpt":
        return _no_such_user(tx)
    return f"550 5.7.1 Message rejected ({stage.upper()}). {tx} - gsmtp"


@dataclass
class Armed:
    """A fault rule with its remaining shots (-1 = unlimited)."""

    fault: SmtpFault
    remaining: int
