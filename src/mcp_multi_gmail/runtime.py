"""What every tool call reads: the current configuration, where Gmail is, and remembered SMTP ports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .config import Account, Config
from .errors import MailError
from .gmail.endpoint import Endpoint
from .layout import AddonLayout


@dataclass
class Runtime:
    config: Config  # replaced whole by mg_reload_config; tools read it per call
    endpoint: Endpoint
    layout: AddonLayout | None
    environ: Mapping[str, str]
    # SMTP port that worked per account name; survives a reload (digest §2.15).
    smtp_ports: dict[str, int] = field(default_factory=dict)
    # (account name, Message-ID) of every send whose bytes were handed to Gmail in this process: a
    # repeat is refused even when Gmail never filed the message in Sent (or the copy failed).
    handed_over: set[tuple[str, str]] = field(default_factory=set)

    @property
    def config_path(self) -> Path:
        return self.config.path

    def account(self, name: str) -> Account:
        found = self.config.account(name)
        if found is None:
            names = ", ".join(self.config.names())
            raise MailError(
                "account_unknown",
                f'No mailbox called "{name}" is configured. Configured mailboxes: {names}. '
                "Use mg_list_accounts to see them.",
            )
        return found

    def accounts_for(self, name: str) -> list[Account]:
        """One mailbox, or every mailbox for "all"."""
        if name == "all":
            return list(self.config.accounts)
        return [self.account(name)]
