"""mg_list_accounts and mg_reload_config: the configuration as the assistant may see it."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, fields, replace
from typing import Literal

from pydantic import BaseModel, Field

from ..config import Account, Config, ConfigError, load_config
from ..errors import MailError
from ..gmail import imap, smtp
from ..runtime import WARNING_PREFIX, Runtime, report_lines, start_warnings
from .core import budget


class AliasInfo(BaseModel):
    address: str
    name: str | None
    purpose: str | None
    default_signature: str | None


class AccountInfo(BaseModel):
    account: str = Field(description="Short name used as `account` in every tool")
    address: str
    auth: Literal["app_password", "oauth"] = Field(
        description='How it signs in: an app password, or "oauth" (the user signed in with Google once)'
    )
    shared: bool
    work_scope: Literal["everything", "inbox"]
    unread_only: bool
    assignment_labels: list[str]
    my_label: str | None
    can_send: bool
    can_unsubscribe: bool = Field(
        description="mg_unsubscribe may leave lists of this mailbox (one-click, or the opt-out mail its signed "
        "header asks for, whatever allowed_recipients says)"
    )
    allowed_recipients: list[str] | None = Field(description="null = no limit; [] = nobody may be addressed")
    processed_label: str | None = Field(
        description="Goes on every MESSAGE a pass looked at (mg_label_message); null = this mailbox is never labelled"
    )
    classification_labels: dict[str, str] = Field(
        description="Category label -> its meaning (choose by meaning); one goes on a THREAD (mg_label_thread). "
        "{} = this mailbox is not classified"
    )
    signatures: list[str] = Field(description="Signature names only")
    default_signature: str | None
    aliases: list[AliasInfo]
    watch: bool


class SmtpPort(BaseModel):
    account: str
    port: int


class AccountFailure(BaseModel):
    account: str
    code: str
    message: str
    check: Literal["imap", "smtp"]


class ListAccountsResult(BaseModel):
    accounts: list[AccountInfo]
    watch_hours: str | None
    watch_interval_minutes: float | None
    verified: bool = Field(description="True only says verification ran; the outcome is `failures`")
    smtp: list[SmtpPort] = Field(description="With verify: the SMTP port that accepted each login")
    failures: list[AccountFailure] = Field(description="With verify: every check that failed")
    warnings: list[str] = Field(
        default_factory=list, description="Start-up warnings (Czech), the lines stderr shows after POZOR:"
    )
    confirm_sends: bool = Field(default=False, description="True: the client asks the user before every send")
    cut: list[budget.Cut] = budget.cut_field()


class ReloadResult(BaseModel):
    reloaded: bool
    accounts: list[str]
    accounts_added: list[str]
    accounts_removed: list[str]
    accounts_changed: list[str]
    attachments_or_quotes_changed: bool
    watch_settings_changed: bool
    warnings: list[str]
    next: str
    instructions: str | None = Field(
        default=None,
        description="Only when this reload ended repair mode or changed them: the server instructions for "
        "the loaded configuration (they replace the ones given at start). Follow them.",
    )
    cut: list[budget.Cut] = budget.cut_field()


def describe(account: Account) -> AccountInfo:
    """Everything about a mailbox except its password, which AccountInfo has no field for."""
    # The fields both share carry over as they are (pydantic makes lists of the tuples); the rest differ.
    own = {f.name for f in fields(Account)}
    shared = {name: getattr(account, name) for name in AccountInfo.model_fields if name in own}
    return AccountInfo.model_validate(
        shared
        | {
            "account": account.name,
            "signatures": list(account.signatures),
            "aliases": [asdict(alias) for alias in account.aliases],
        }
    )


def _hours(config: Config) -> str | None:
    if config.watch_hours is None:
        return None
    start, end = config.watch_hours
    return f"{start}-{end}"


async def _verify_imap(runtime: Runtime, account: Account) -> AccountFailure | None:
    try:
        await imap.run_on_worker(
            account.name,
            account.address,
            account.login,
            runtime.endpoint,
            lambda _session: None,
            connections=runtime.worker_threads(),
            max_connections=account.max_connections,
        )
    except MailError as error:
        return AccountFailure(account=account.name, code=error.code, message=error.message, check="imap")
    return None


async def _verify_smtp(runtime: Runtime, account: Account) -> SmtpPort | AccountFailure:
    try:
        port = await smtp.choose_port(
            account.name,
            account.address,
            account.login,
            runtime.endpoint,
            smtp.probe_order(account.smtp_port, None),
        )
    except MailError as error:
        return AccountFailure(account=account.name, code=error.code, message=error.message, check="smtp")
    runtime.smtp_ports[account.name] = port
    return SmtpPort(account=account.name, port=port)


async def list_accounts(runtime: Runtime, verify: bool) -> ListAccountsResult:
    config = runtime.config
    result = ListAccountsResult(
        accounts=[describe(a) for a in config.accounts],
        watch_hours=_hours(config),
        watch_interval_minutes=None if config.watch_interval_ms is None else config.watch_interval_ms / 60000,
        verified=verify,
        smtp=[],
        failures=[],
        warnings=list(runtime.warnings),
        confirm_sends=config.confirm_sends,
    )
    if not verify:
        return _fit(result)
    # Every login check runs at once: the slowest mailbox sets the pace, not the sum.
    imap_checks = [_verify_imap(runtime, a) for a in config.accounts]
    smtp_checks = [_verify_smtp(runtime, a) for a in config.accounts if a.can_send]
    outcomes = await asyncio.gather(*imap_checks, *smtp_checks)
    for outcome in outcomes:
        if isinstance(outcome, AccountFailure):
            result.failures.append(outcome)
        elif isinstance(outcome, SmtpPort):
            result.smtp.append(outcome)
    return _fit(result)


def _cap(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit].rstrip() + budget.CUT_MARK


def _fit(result: ListAccountsResult) -> ListAccountsResult:
    """Within the result budget: the label meanings and alias purposes (the only long free texts
    here) are cut to one common length, ending in CUT_MARK, rather than the last resort leaving
    whole mailboxes out of the list, which the instructions send the assistant to for them. `cut`
    says so in one entry per kind, with their characters added up."""
    if budget.size(result) <= budget.RESULT_BUDGET:
        return result
    meanings = [m for info in result.accounts for m in info.classification_labels.values()]
    purposes = [a.purpose for info in result.accounts for a in info.aliases if a.purpose]

    def capped(limit: int) -> ListAccountsResult:
        accounts = [
            info.model_copy(
                update={
                    "classification_labels": {
                        label: _cap(meaning, limit) for label, meaning in info.classification_labels.items()
                    },
                    "aliases": [a.model_copy(update={"purpose": _cap(a.purpose, limit)}) for a in info.aliases],
                }
            )
            for info in result.accounts
        ]
        entries = [
            _texts_cut(field, texts, limit)
            for field, texts in (
                ("accounts.*.classification_labels.*", meanings),
                ("accounts.*.aliases.*.purpose", purposes),
            )
            if any(len(text) > limit for text in texts)
        ]
        return budget.with_cuts(result.model_copy(update={"accounts": accounts}), *entries)

    longest = max((len(t) for t in [*meanings, *purposes]), default=0)
    # The longest common length that fits (shorter texts stay whole); k - 1, so that a length of 0
    # can be the answer too. When even that is too large, the tools' last resort takes over.
    return budget.fit_page(lambda k: capped(k - 1), longest + 1)


def _texts_cut(field: str, texts: list[str], limit: int) -> budget.Cut:
    """One entry for every text of a kind cut to `limit` characters (`*`: in every mailbox)."""
    return budget.Cut(
        field=field,
        shown=sum(len(text) if len(text) <= limit else len(text[:limit].rstrip()) for text in texts),
        total=sum(len(text) for text in texts),
        how_to_get_the_rest=f"Each is cut to {limit} characters (ending in {budget.CUT_MARK}); no call returns "
        "more of them, the whole texts are in the configuration file",
    )


def reload_config(runtime: Runtime) -> ReloadResult:
    if runtime.repair is not None:
        return _end_repair(runtime)
    old = runtime.config
    try:
        new = load_config(old.path, layout=runtime.layout, environ=runtime.environ)
    except ConfigError as error:
        raise MailError("config_invalid", f"{error.message}\nNothing changed, the previous settings stay.") from None
    before = {a.name: a for a in old.accounts}
    after = {a.name: a for a in new.accounts}
    runtime.config = new
    runtime.warnings = _warnings(runtime)
    return ReloadResult(
        reloaded=True,
        accounts=list(after),
        accounts_added=[n for n in after if n not in before],
        accounts_removed=[n for n in before if n not in after],
        accounts_changed=[n for n in after if n in before and after[n] != before[n]],
        attachments_or_quotes_changed=(
            old.download_dir != new.download_dir
            or old.attachment_dirs != new.attachment_dirs
            or old.quote_locale != new.quote_locale
        ),
        watch_settings_changed=(
            (old.watch_hours, old.watch_interval_ms) != (new.watch_hours, new.watch_interval_ms)
            or {a.name: a.watch_idle for a in old.accounts} != {a.name: a.watch_idle for a in new.accounts}
        ),
        warnings=list(runtime.warnings),
        next=(
            "Check the change with mg_list_accounts (verify: true after a new app password), "
            "then restart the --wait watcher."
        ),
    )


def _warnings(runtime: Runtime) -> tuple[str, ...]:
    lines = start_warnings(runtime.config, runtime.endpoint, runtime.web)
    return tuple(line.removeprefix(WARNING_PREFIX) for line in lines)


def _end_repair(runtime: Runtime) -> ReloadResult:
    """Run the start-up checks again; when they pass, the same runtime (which every tool holds)
    takes the loaded configuration and the mail tools work from the next call on."""
    repair = runtime.repair
    assert repair is not None and runtime.recheck is not None, "repair mode keeps its checks"
    check = runtime.recheck()
    loaded = check.runtime
    if loaded is None:
        assert check.problem is not None
        runtime.repair = replace(repair, problem=check.problem, lines=report_lines(check.lines))
        error = runtime.repair.error()
        raise MailError("config_invalid", f"Still in repair mode. {error.message}") from None
    runtime.config, runtime.endpoint, runtime.warnings = loaded.config, loaded.endpoint, loaded.warnings
    runtime.web = loaded.web
    runtime.recheck = loaded.recheck
    runtime.repair = None
    names = loaded.config.names()
    return ReloadResult(
        reloaded=True,
        accounts=names,
        accounts_added=names,
        accounts_removed=[],
        accounts_changed=[],
        attachments_or_quotes_changed=False,
        watch_settings_changed=False,
        warnings=list(runtime.warnings),
        next=(
            "Repair mode is over: every tool works now, without a restart. Read `instructions` (they "
            "replace the ones given at start), then check the mailboxes with mg_list_accounts (verify: true)."
        ),
    )
