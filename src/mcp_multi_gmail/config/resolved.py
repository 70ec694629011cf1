"""The configuration as the rest of the server sees it: resolved, absolute, immutable."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..deadline import DEFAULT_CALL_TIMEOUT_S
from .zone import UserZone


@dataclass(frozen=True)
class Signature:
    name: str
    text: str | None  # always filled after loading (derived from the HTML when only that was given)
    html: str | None  # None for a text-only signature


@dataclass(frozen=True)
class Alias:
    address: str
    name: str | None
    purpose: str | None
    default_signature: str | None


@dataclass(frozen=True)
class OAuthClient:
    """The user's own Google "Desktop app" client, and where its mailboxes' sign-ins are kept."""

    path: Path  # the client JSON as downloaded from Google Cloud
    client_id: str
    client_secret: str = field(repr=False)  # never shown: repr/str must be safe to log
    auth_uri: str
    token_uri: str
    tokens_file: Path  # beside the client file, mode 0600
    config: Path  # the configuration naming it (the sign-in command repeats its path)


@dataclass(frozen=True)
class SignIn:
    """What a mailbox with "auth": "oauth" logs in with: its name and address, and the client."""

    name: str
    address: str
    client: OAuthClient


@dataclass(frozen=True)
class Account:
    name: str
    address: str
    password: str = field(repr=False)  # never shown: repr/str of an Account must be safe to log
    shared: bool
    work_scope: Literal["everything", "inbox"]
    unread_only: bool
    can_send: bool
    watch: bool
    assignment_labels: tuple[str, ...]
    my_label: str | None
    allowed_recipients: tuple[str, ...] | None  # None = no limit, () = nobody
    processed_label: str | None  # None = this mailbox is never labelled
    # Dict fields take part in equality (reload compares accounts) but not in the hash.
    classification_labels: dict[str, str] = field(hash=False)
    signatures: dict[str, Signature] = field(hash=False)
    default_signature: str | None
    aliases: tuple[Alias, ...]
    smtp_port: int | None  # None = probe 465, then 587
    max_connections: int = 4  # simultaneous IMAP connections this server opens to the mailbox
    sweep_limit: int = 1000  # the most messages one mg_sweep may change in this mailbox
    watch_idle: bool = True  # the watcher keeps an IDLE connection for it (else it only polls)
    auth: Literal["app_password", "oauth"] = "app_password"
    oauth: OAuthClient | None = None  # set for "auth": "oauth" (then `password` is "")
    can_unsubscribe: bool = False  # leaving lists (policy.check_can_unsubscribe); independent of can_send
    follow_up_after_s: int = 3 * 86_400  # a sent message older than this without an answer is overdue
    reminder_label: str = "Připomínky"  # the parent of the reminder labels

    @property
    def login(self) -> str | SignIn:
        """What IMAP and SMTP log in with: the app password, or the sign-in whose tokens are kept."""
        return SignIn(self.name, self.address, self.oauth) if self.oauth is not None else self.password


@dataclass(frozen=True)
class Config:
    path: Path
    accounts: tuple[Account, ...]
    download_dir: Path
    attachment_dirs: tuple[Path, ...]
    quote_locale: Literal["cs", "en"]
    passwords_file: Path | None
    watch_hours: tuple[int, int] | None
    watch_interval_ms: int | None
    secret_files: tuple[Path, ...]  # files holding app passwords (for the git warning)
    warnings: tuple[str, ...]  # Czech, without the "POZOR: " prefix the CLI adds
    call_timeout_s: int = DEFAULT_CALL_TIMEOUT_S  # one deadline for every tool call
    confirm_sends: bool = False  # mg_send_message asks for the user's confirmation in the client
    oauth_client: OAuthClient | None = None
    timezone: str | None = None  # the user's IANA zone; None = the machine's local zone

    @property
    def zone(self) -> UserZone:
        return UserZone(self.timezone)

    def account(self, name: str) -> Account | None:
        return next((a for a in self.accounts if a.name == name), None)

    def names(self) -> list[str]:
        return [a.name for a in self.accounts]
