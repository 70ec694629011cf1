"""Pydantic models of the raw JSON configuration.

Every object is strict: an unknown key is refused, because a misspelt safeguard
(say `alowed_recipients`) would otherwise silently mean "no limit". Types are strict too
(no "true" → True coercion). Keys whose absence means something different from an empty
value (`allowed_recipients`, `classification_labels`) are told apart via `model_fields_set`.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic_core import PydanticCustomError

from ..deadline import DEFAULT_CALL_TIMEOUT_S

DEFAULT_SWEEP_LIMIT = 1000

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# Deliberately simple: one "@", something before it, a dot inside the domain, no whitespace and
# no control characters (an address goes into LOGIN, MAIL FROM and headers).
_EMAIL = re.compile(r"^[^@\s\x00-\x1f\x7f]+@[^@\s.\x00-\x1f\x7f]+(?:\.[^@\s.\x00-\x1f\x7f]+)+$")
# Line breaks, NUL and other controls (C0, DEL, C1, U+2028/9) and unpaired surrogates: a label with
# one would break the IMAP command it goes into, a path with NUL cannot be opened at all.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")

NonEmpty = Annotated[str, StringConstraints(min_length=1)]


def _check_name(value: str) -> str:
    if not NAME_PATTERN.match(value):
        raise PydanticCustomError(
            "bad_name",
            "musí začínat malým písmenem nebo číslicí a obsahovat jen malá písmena bez diakritiky, číslice, „-“ a „_“",
        )
    return value


def _check_email(value: str) -> str:
    if not _EMAIL.match(value):
        raise PydanticCustomError("not_email", "musí být e-mailová adresa")
    return value


def _check_plain_text(value: str) -> str:
    if _CONTROL.search(value.replace("\t", " ")):
        raise PydanticCustomError("control_chars", "nesmí obsahovat konec řádku, znak NUL ani jiné řídicí znaky")
    return value


AccountName = Annotated[str, AfterValidator(_check_name)]
Email = Annotated[str, AfterValidator(_check_email)]
# Labels (they go into IMAP commands), display names (into headers) and paths.
PlainText = Annotated[str, StringConstraints(min_length=1), AfterValidator(_check_plain_text)]
SmtpPort = Literal[465, 587]


class _Strict(BaseModel):
    """A part of the configuration file: unknown keys refused, no type coercion, immutable once loaded."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class RawSignature(_Strict):
    text: str | None = None
    text_file: PlainText | None = None
    html: str | None = None
    html_file: PlainText | None = None


class RawAlias(_Strict):
    address: Email
    name: PlainText | None = None
    purpose: NonEmpty | None = None
    default_signature: NonEmpty | None = None


class RawAccount(_Strict):
    name: AccountName
    address: Email
    password: NonEmpty | None = None
    password_env: NonEmpty | None = None
    # "oauth": sign-in through the user's own Google client (XOAUTH2), no app password.
    auth: Literal["app_password", "oauth"] = "app_password"
    shared: bool = False
    work_scope: Literal["everything", "inbox"] = "everything"
    unread_only: bool = False
    can_send: bool = False
    # Leaving mailing lists: the one opt-out message a signed List-Unsubscribe asks for, or a one-click POST.
    can_unsubscribe: bool = False
    watch: bool = False
    # Absent = the top-level `watch_idle` (told apart via model_fields_set, see own_watch_idle).
    watch_idle: bool = True
    assignment_labels: list[PlainText] = Field(default_factory=list)
    my_label: PlainText | None = None
    # Absent = no limit, [] = nobody: an explicit null is refused rather than read as "no limit".
    allowed_recipients: list[NonEmpty] = Field(default_factory=list)
    processed_label: PlainText | None = "processed"
    # Absent = inherit the top-level set; {} = never classify this mailbox.
    classification_labels: dict[PlainText, NonEmpty] = Field(default_factory=dict)
    signatures: dict[NonEmpty, RawSignature] = Field(default_factory=dict)
    default_signature: NonEmpty | None = None
    aliases: list[RawAlias] = Field(default_factory=list)
    smtp_port: SmtpPort | None = None
    max_connections: int = 4
    # Absent = the top-level `sweep_limit`: the most messages one mg_sweep may change.
    sweep_limit: int | None = None
    # Absent = the top-level `follow_up_after`: how long a sent message waits before it is overdue.
    follow_up_after: str | None = None
    # The parent label of the reminder labels (docs/pripominky.md, docs/en/follow-ups.md).
    reminder_label: PlainText = "Připomínky"

    @property
    def limits_recipients(self) -> bool:
        return "allowed_recipients" in self.model_fields_set

    @property
    def own_classifications(self) -> bool:
        return "classification_labels" in self.model_fields_set

    @property
    def own_watch_idle(self) -> bool:
        return "watch_idle" in self.model_fields_set


class RawConfig(_Strict):
    accounts: Annotated[list[RawAccount], Field(min_length=1)]
    classification_labels: dict[PlainText, NonEmpty] = Field(default_factory=dict)
    smtp_port: SmtpPort | None = None
    download_dir: PlainText | None = None
    attachment_dirs: list[PlainText] = Field(default_factory=list)
    quote_locale: Literal["cs", "en"] = "cs"
    passwords_file: PlainText | None = None
    # Google's downloaded "Desktop app" client JSON, for the mailboxes with "auth": "oauth".
    oauth_client_file: PlainText | None = None
    watch_hours: str | None = None
    watch_interval: str | None = None
    # false = 1.5.0's poll-only watcher: no IDLE connection, a check every watch_interval only.
    watch_idle: bool = True
    call_timeout_s: int = DEFAULT_CALL_TIMEOUT_S
    # The most messages one mg_sweep may change, for every mailbox without its own sweep_limit.
    sweep_limit: int = DEFAULT_SWEEP_LIMIT
    # True: mg_send_message asks the client to have the user confirm every call (docs/en/security.md).
    confirm_sends: bool = False
    # How long a sent message waits for an answer before mg_awaiting_replies lists it ("3d", "36h").
    follow_up_after: str = "3d"
    # The user's calendar: an IANA zone name; absent = the machine's local zone.
    timezone: PlainText | None = None
