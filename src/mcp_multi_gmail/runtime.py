"""What every tool call reads: the current configuration, where Gmail is, and remembered SMTP ports.

Also the start-up checks (location guard → configuration → warnings) that the server, `--check-config`
and `mg_reload_config` share, and repair mode: a server whose configuration did not load keeps
running with its mail tools answering `config_invalid` until a reload succeeds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from .config import Account, Config, ConfigError, SignIn, load_config
from .errors import MailError
from .gitwarn import secrets_in_git_warnings
from .gmail.connections import Connections
from .gmail.endpoint import GMAIL, Endpoint, EndpointError, resolve_endpoint
from .gmail.web import PRODUCTION, WEB_CA_FILE_ENV, WEB_RESOLVE_ENV, WebSettings, web_settings
from .layout import GUARD_MESSAGE, AddonLayout, check_location, default_download_dir, project_dir
from .oauth.advice import sign_in_command
from .oauth.tokens import sign_in_state, too_open

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
    # Start-up warnings (Czech, without the "POZOR: " prefix stderr shows); mg_list_accounts lists them.
    warnings: tuple[str, ...] = ()
    # Set while the mail tools are off because the server could not start them (repair mode).
    repair: Repair | None = None
    # The start-up checks this runtime came from, to run again when a reload should end repair mode.
    recheck: Callable[[], StartCheck] | None = field(default=None, repr=False)
    # Where the one web request (a one-click unsubscribe) may go: production, or a test's stand-in.
    web: WebSettings = PRODUCTION
    # Tests only: a deadline below the configuration's floor of 10 s, so a test of what happens at
    # the deadline waits a second or two, not ten. It outlives reloads; no file or variable sets it.
    call_timeout_override_s: float | None = None
    # What "now" is for dates of the user's calendar (reminders, waiting replies); tests set their own.
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), repr=False)
    # Mailbox name -> the user's day its empty reminder date labels were last swept (at most once a day).
    reminder_sweeps: dict[str, date] = field(default_factory=dict)
    # The waiting-reply lists of recent mg_awaiting_replies calls, for their later pages.
    follow_up_lists: Memo = field(default_factory=lambda: Memo())

    @classmethod
    def load(
        cls,
        config_path: Path,
        *,
        environ: Mapping[str, str],
        layout: AddonLayout | None = None,
        state_dir: Path | None = None,
        call_timeout_s: float | None = None,
    ) -> Runtime:
        """The one way to build a runtime (server, demo, tests): the configuration file, and where
        Gmail and the web request go, from `environ`. Raises ConfigError or EndpointError with the Czech report.
        `call_timeout_s` is for tests only (the field `call_timeout_override_s`)."""
        config = load_config(config_path, layout=layout, environ=environ)
        endpoint = resolve_endpoint(environ)
        web = web_settings(environ)
        runtime = cls(
            config=config, endpoint=endpoint, layout=layout, environ=dict(environ), state_dir=state_dir, web=web
        )
        runtime.call_timeout_override_s = call_timeout_s
        return runtime

    @property
    def call_timeout_s(self) -> float:
        """One tool call's deadline: the configuration's `call_timeout_s`, unless a test shortened it."""
        if self.call_timeout_override_s is not None:
            return self.call_timeout_override_s
        return self.config.call_timeout_s

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


class Memo:
    """Recent results keyed by their arguments, each valid while its folder's view stamp stays the
    same (gmail.imap.ImapSession.view_stamp) and for `keep` at most; shared by worker threads."""

    def __init__(self, size: int = 16, keep: timedelta = timedelta(minutes=10)) -> None:
        self._size, self._keep = size, keep
        self._found: OrderedDict[Hashable, tuple[Hashable, datetime, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, stamp: Hashable | None, now: datetime) -> Any | None:
        with self._lock:
            found = self._found.get(key)
        if stamp is None or found is None or found[0] != stamp or now - found[1] > self._keep:
            return None
        return found[2]

    def remember(self, key: Hashable, stamp: Hashable | None, now: datetime, value: Any) -> None:
        if stamp is None:
            return
        with self._lock:
            self._found[key] = (stamp, now, value)
            self._found.move_to_end(key)
            while len(self._found) > self._size:
                self._found.popitem(last=False)


# --- the start-up checks and repair mode -------------------------------------------------------

WARNING_PREFIX = "POZOR: "
Problem = Literal["config", "guard", "endpoint"]


@dataclass(frozen=True)
class Repair:
    """Why the mail tools are off: the kind of problem and the Czech report lines stderr shows."""

    problem: Problem
    lines: tuple[str, ...]
    config_path: Path

    def error(self) -> MailError:
        """What every mail tool answers meanwhile (not retryable: only a fix changes it)."""
        report = "\n".join(self.lines)
        if self.problem == "guard":
            head = (
                "This release build runs only inside Miládka, so no mailbox is available. Its message (tell the user): "
            )
            tail = "Install the add-on inside Miládka (guide://mcp-multi-gmail/nastaveni), then call mg_reload_config."
        elif self.problem == "endpoint":
            head = (
                "A test-only variable (MG_GMAIL_ENDPOINT, MG_WEB_RESOLVE or MG_WEB_CA_FILE) is wrong, so no "
                "mailbox is available. The report: "
            )
            tail = "Remove or fix it where the server is started (.mcp.json), then start a new conversation."
        else:
            head = f"The configuration {self.config_path} did not load, so no mailbox is available. The report: "
            tail = (
                "Fix the file, then call mg_reload_config: the tools work again without a restart. A line "
                "about the passwords file or a password is for the user to fix."
            )
        return MailError("config_invalid", f"{head}\n{report}\n{tail}")


@dataclass
class StartCheck:
    """What a start checked, and where: `lines` in the order a start prints them; `runtime` is None
    (and `problem` set) when it cannot start."""

    path: Path
    project: Path
    release: bool
    layout: AddonLayout | None
    environ: Mapping[str, str] = field(repr=False)
    state_dir: Path | None
    lines: list[str] = field(default_factory=list)
    runtime: Runtime | None = None
    problem: Problem | None = None

    def recheck(self) -> StartCheck:
        """The same checks again, in the same place (what a reload does to end repair mode)."""
        return check_start(
            self.path,
            project=self.project,
            release=self.release,
            layout=self.layout,
            environ=self.environ,
            state_dir=self.state_dir,
        )


def check_start(
    path: Path,
    *,
    project: Path,
    release: bool,
    layout: AddonLayout | None,
    environ: Mapping[str, str],
    state_dir: Path | None = None,
) -> StartCheck:
    """Everything a start checks before serving: location guard → config → warnings. No network."""
    check = StartCheck(path, project, release, layout, environ, state_dir)
    if check_location(project, release=release) is not None:
        check.lines.append(GUARD_MESSAGE)
        check.problem = "guard"
        return check
    try:
        runtime = Runtime.load(path, environ=environ, layout=layout, state_dir=state_dir)
    except ConfigError as error:
        check.lines.append(str(error))
        check.problem = "config"
        return check
    except EndpointError as error:
        check.lines.append(str(error))
        check.problem = "endpoint"
        return check
    check.lines.extend(start_warnings(runtime.config, runtime.endpoint, runtime.web))
    runtime.warnings = tuple(line.removeprefix(WARNING_PREFIX) for line in check.lines)
    runtime.recheck = check.recheck
    check.runtime = runtime
    return check


def report_lines(lines: list[str]) -> tuple[str, ...]:
    """The report one line per item (an error's message may hold several)."""
    return tuple("\n".join(lines).splitlines())


def start_warnings(config: Config, endpoint: Endpoint, web: WebSettings) -> list[str]:
    """The "POZOR: …" lines of a start: the configuration's, a test endpoint and web stand-in,
    passwords git would commit."""
    lines = [f"{WARNING_PREFIX}{warning}" for warning in config.warnings]
    if endpoint.overridden:
        lines.append(
            f"{WARNING_PREFIX}místo Gmailu se připojuji k {endpoint.imap_host}:{endpoint.imap_port} "
            "(MG_GMAIL_ENDPOINT, jen pro testy a ukázku)."
        )
    lines.extend(f"{WARNING_PREFIX}{line}" for line in web_warnings(web))
    lines.extend(secrets_in_git_warnings(config.secret_files))
    lines.extend(f"{WARNING_PREFIX}{line}" for line in sign_in_warnings(config))
    return lines


def web_warnings(web: WebSettings) -> list[str]:
    """Where a one-click unsubscribe goes instead of the real web, or test variables left without effect."""
    lines = []
    if web.resolve:
        names = ", ".join(f"{host}={address}:{port}" for host, (address, port) in web.resolve.items())
        lines.append(
            f"odhlášení jedním kliknutím posílám jen na {names} a na nic jiného ({WEB_RESOLVE_ENV}, jen pro testy)."
        )
    if web.ca_file is not None:
        lines.append(
            f"u odhlášení jedním kliknutím věřím i certifikátům z {web.ca_file} ({WEB_CA_FILE_ENV}, jen pro testy)."
        )
    if web.ignored:
        lines.append(
            f"{' a '.join(web.ignored)} platí jen spolu s MG_GMAIL_ENDPOINT; bez něj je nechávám bez účinku "
            "a odhlášení jedním kliknutím jde na skutečnou adresu."
        )
    return lines


def sign_in_warnings(config: Config) -> list[str]:
    """Mailboxes with "auth": "oauth" that are not signed in yet, and a tokens file others may read."""
    lines = [
        f"schránka `{a.name}` se přihlašuje přes Google, ale ještě není přihlášená; přihlaste ji ve svém "
        f"terminálu příkazem: {sign_in_command(config.path, a.name)}"
        for a in config.accounts
        if a.oauth is not None and sign_in_state(SignIn(a.name, a.address, a.oauth)) == "not_signed_in"
    ]
    client = config.oauth_client
    if client is not None and too_open(client.tokens_file):
        lines.append(
            f"soubor s přihlášením ke Googlu `{client.tokens_file}` smí číst i jiní uživatelé počítače; "
            f"omezte ho jen na sebe (chmod 600 {client.tokens_file})"
        )
    return lines


def repair_runtime(check: StartCheck) -> Runtime:
    """A runtime for a server in repair mode: no mailbox, the report, and `check`'s way to check again."""
    assert check.problem is not None, "repair mode needs a problem"
    path = check.path.absolute()
    empty = Config(
        path=path,
        accounts=(),
        download_dir=default_download_dir(check.layout),
        attachment_dirs=(),
        quote_locale="cs",
        passwords_file=None,
        watch_hours=None,
        watch_interval_ms=None,
        secret_files=(),
        warnings=(),
    )
    return Runtime(
        config=empty,
        endpoint=GMAIL,
        layout=check.layout,
        environ=dict(check.environ),
        state_dir=check.state_dir,
        repair=Repair(check.problem, report_lines(check.lines), path),
        recheck=check.recheck,
    )
