"""What every tool call reads: the current configuration, where Gmail is, and remembered SMTP ports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .config import Account, Config, load_config
from .errors import MailError
from .gmail.connections import Connections
from .gmail.endpoint import Endpoint, resolve_endpoint
from .layout import AddonLayout, project_dir

# Where the watcher keeps its files; the send journal lives beside them.
STATE_DIR_ENV = "MG_WATCH_DIR"


@dataclass
class Runtime:
    config: Config  # replaced whole by mg_reload_config; tools read it per call
    endpoint: Endpoint
    layout: AddonLayout | None
    environ: Mapping[str, str]
    # SMTP port that worked per account name (465 or 587, probed once); survives a reload.
    smtp_ports: dict[str, int] = field(default_factory=dict)
    # (account name, Message-ID) of every send whose bytes were handed to Gmail in this process: a
    # repeat is refused even when Gmail never filed the message in Sent (or the copy failed).
    handed_over: set[tuple[str, str]] = field(default_factory=set)
    # The server's state folder (watcher files, send journal); None = MG_WATCH_DIR, else the project folder.
    state_dir: Path | None = None
    # Per-mailbox connection caps and the worker threads IMAP sessions run on.
    connections: Connections = field(default_factory=Connections)

    @classmethod
    def load(
        cls,
        config_path: Path,
        *,
        environ: Mapping[str, str],
        layout: AddonLayout | None = None,
        state_dir: Path | None = None,
    ) -> Runtime:
        """The one way to build a runtime (server, demo, tests): the configuration file, and where
        Gmail is, from `environ`. Raises ConfigError or EndpointError with the Czech report."""
        config = load_config(config_path, layout=layout, environ=environ)
        endpoint = resolve_endpoint(environ)
        return cls(config=config, endpoint=endpoint, layout=layout, environ=dict(environ), state_dir=state_dir)

    def state_folder(self) -> Path:
        if self.state_dir is not None:
            return self.state_dir
        override = self.environ.get(STATE_DIR_ENV, "").strip()
        return Path(override) if override else project_dir()

    def worker_threads(self) -> Connections:
        """The worker threads, sized from the caps of the mailboxes configured now."""
        self.connections.size_for([a.max_connections for a in self.config.accounts])
        return self.connections

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
