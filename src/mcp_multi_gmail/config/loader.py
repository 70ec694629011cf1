"""Load the configuration: read, check the schema, resolve, and report every problem at once."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..layout import AddonLayout, default_download_dir
from .durations import MIN_INTERVAL_MS, parse_age_s, parse_duration_ms, parse_hours
from .models import RawAccount, RawConfig
from .oauth_client import read_oauth_client
from .passwords import PLACEHOLDER, PasswordsFile, read_passwords_file, resolve_password
from .paths import absolute_from
from .report import ConfigError, Problems, schema_report
from .resolved import Account, Alias, Config, OAuthClient
from .signatures import resolve_signatures
from .zone import zone_problem

# Gmail allows 15 IMAP connections per account, shared with the user's other mail clients.
MIN_CONNECTIONS, MAX_CONNECTIONS = 1, 10
MIN_CALL_TIMEOUT_S, MAX_CALL_TIMEOUT_S = 10, 600
# A sweep's whole record and its result stay small enough to handle at 10 000 messages.
MIN_SWEEP_LIMIT, MAX_SWEEP_LIMIT = 1, 10_000
# The settings an Account takes just as the file wrote them; every other one is resolved or defaulted.
_AS_WRITTEN = (
    "name", "address", "shared", "work_scope", "unread_only", "can_send", "can_unsubscribe", "watch", "my_label",
    "processed_label", "default_signature", "max_connections", "auth", "reminder_label",
)  # fmt: skip


def _check_sweep_limit(who: str | None, value: int, problems: Problems) -> None:
    if not MIN_SWEEP_LIMIT <= value <= MAX_SWEEP_LIMIT:
        problems.add(
            f'{f"{who}: " if who else ""}"sweep_limit" je {value}, čeká se číslo od {MIN_SWEEP_LIMIT} '
            f"do {MAX_SWEEP_LIMIT} "
            "(kolik zpráv smí změnit jedno mg_sweep; výchozí 1000)"
        )


def load_config(path: Path, *, layout: AddonLayout | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Load and check `path`; raise ConfigError with the whole Czech report when anything is wrong.

    `layout` (Miládka's add-on folder, if any) decides where relative data paths point;
    `environ` (default os.environ) holds the variables named by `password_env`.
    """
    config_path = Path(os.path.abspath(path))
    raw = _read_json(config_path)
    model = _check_schema(config_path, raw)
    return _resolve(config_path, model, layout, os.environ if environ is None else environ)


def _read_json(path: Path) -> object:
    # Errors are raised outside the `except` blocks so no parser exception rides along as context.
    try:
        data: bytes | None = path.read_bytes()
    except OSError:
        data = None
    if data is None:
        raise ConfigError(
            f"Nastavení `{path}` nejde přečíst (soubor chybí, nebo k němu není přístup). "
            "Zkontrolujte cestu za --config v souboru .mcp.json ve složce Miládky."
        )
    position = ""
    try:
        return json.loads(data.decode("utf-8").removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        position = f" (řádek {exc.lineno}, sloupec {exc.colno})"
    except UnicodeDecodeError:
        position = " (soubor není v kódování UTF-8)"
    except RecursionError:  # hundreds of nested brackets: a report (repair mode), never a crash at start
        position = " (hodnoty jsou vnořené příliš hluboko)"
    # The parser's own message is left out on purpose: it can quote text around the fault.
    raise ConfigError(
        f"Nastavení `{path}` není platný JSON{position}. Zkontrolujte uvozovky kolem textů a čárky "
        "mezi položkami (obsah souboru se nevypisuje, může obsahovat hesla)."
    )


def _check_schema(path: Path, raw: object) -> RawConfig:
    errors: list[ErrorDetails] = []
    try:
        return RawConfig.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
    raise ConfigError(schema_report(path, errors))


def _resolve(path: Path, model: RawConfig, layout: AddonLayout | None, environ: Mapping[str, str]) -> Config:
    problems = Problems()
    warnings: list[str] = []
    config_dir = path.parent
    # Data paths follow the vault in Miládka, else the config file; never the working directory.
    data_base = layout.vault_root if layout is not None else config_dir

    watch_hours = None
    if model.watch_hours is not None:
        watch_hours = parse_hours(model.watch_hours)
        if watch_hours is None:
            problems.add(f'"watch_hours" je "{model.watch_hours}", čeká se rozsah hodin jako "9-19"')
    watch_interval_ms = None
    if model.watch_interval is not None:
        watch_interval_ms = parse_duration_ms(model.watch_interval)
        if watch_interval_ms is None or watch_interval_ms < MIN_INTERVAL_MS:
            problems.add(f'"watch_interval" je "{model.watch_interval}", čeká se třeba "5m", nejméně "1m"')

    if not MIN_CALL_TIMEOUT_S <= model.call_timeout_s <= MAX_CALL_TIMEOUT_S:
        problems.add(
            f'"call_timeout_s" je {model.call_timeout_s}, čeká se počet sekund od {MIN_CALL_TIMEOUT_S} '
            f"do {MAX_CALL_TIMEOUT_S} (výchozí 60)"
        )
    _check_sweep_limit(None, model.sweep_limit, problems)
    follow_up_after_s = _follow_ups(model, problems)

    names = [a.name for a in model.accounts]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.add(
            "jména schránek se opakují ("
            + ", ".join(f"`{n}`" for n in duplicates)
            + "); každá schránka potřebuje vlastní jméno, jinak by jedna z nich byla nedosažitelná"
        )

    passwords_file = None
    if model.passwords_file is not None:
        passwords_file = read_passwords_file(absolute_from(data_base, model.passwords_file), problems)

    oauth_client = _oauth_client(model, path, data_base, environ, problems)

    _check_classifications("classification_labels", model.classification_labels, problems)
    accounts = tuple(
        _resolve_account(
            acc, model, config_dir, passwords_file, oauth_client, environ, problems, warnings, follow_up_after_s
        )
        for acc in model.accounts
    )
    if problems:
        raise ConfigError(problems.report(path))
    warnings.extend(window_never_clears(a.name) for a in accounts if a.processed_label is None and not a.unread_only)

    secret_files: list[Path] = []
    if passwords_file is not None:
        secret_files.append(passwords_file.path)
    if any(a.password is not None for a in model.accounts):
        secret_files.append(path)
    if oauth_client is not None:
        secret_files.extend((oauth_client.path, oauth_client.tokens_file))
    return Config(
        path=path,
        accounts=accounts,
        download_dir=(
            absolute_from(data_base, model.download_dir)
            if model.download_dir is not None
            else default_download_dir(layout)
        ),
        attachment_dirs=tuple(absolute_from(data_base, d) for d in model.attachment_dirs),
        quote_locale=model.quote_locale,
        passwords_file=passwords_file.path if passwords_file is not None else None,
        watch_hours=watch_hours,
        watch_interval_ms=watch_interval_ms,
        secret_files=tuple(secret_files),
        warnings=tuple(warnings),
        call_timeout_s=model.call_timeout_s,
        confirm_sends=model.confirm_sends,
        oauth_client=oauth_client,
        timezone=model.timezone,
    )


def _follow_ups(model: RawConfig, problems: Problems) -> int:
    """The top-level follow_up_after in seconds; an unusable `timezone` is reported."""
    if model.timezone is not None and (zone := zone_problem(model.timezone)) is not None:
        problems.add(zone)
    return _follow_up_after(None, model.follow_up_after, problems)


def _follow_up_after(who: str | None, text: str, problems: Problems) -> int:
    seconds = parse_age_s(text)
    if seconds is None or not 3_600 <= seconds <= 365 * 86_400:
        problems.add(f'{f"{who}: " if who else ""}"follow_up_after" je "{text}", čeká se třeba "3d" nebo "36h"')
        return 3 * 86_400
    return seconds


def _oauth_client(
    model: RawConfig, path: Path, data_base: Path, environ: Mapping[str, str], problems: Problems
) -> OAuthClient | None:
    if model.oauth_client_file is not None:
        return read_oauth_client(absolute_from(data_base, model.oauth_client_file), path, environ, problems)
    if any(a.auth == "oauth" for a in model.accounts):
        problems.add(
            'schránky s "auth": "oauth" potřebují "oauth_client_file": cestu k JSON klienta Google '
            "(typ Desktopová aplikace), uloženému vedle souboru hesel"
        )
    return None


def window_never_clears(name: str) -> str:
    """Without a processed label only reading mail takes it out of the pass; without unread_only nothing does."""
    return (
        f'schránka „{name}“ má "processed_label": null, ale ne "unread_only": true. Bez štítku zpracování '
        "z okna průchodu nic nezmizí a okno se nikdy nevyčistí (window_clear zůstane false). Doplňte "
        '"unread_only": true, nebo nastavte "processed_label".'
    )


def _resolve_account(
    acc: RawAccount,
    model: RawConfig,
    config_dir: Path,
    passwords_file: PasswordsFile | None,
    oauth_client: OAuthClient | None,
    environ: Mapping[str, str],
    problems: Problems,
    warnings: list[str],
    follow_up_after_s: int,
) -> Account:
    who = f"schránka `{acc.name}`"
    if acc.auth == "oauth":
        password = None
        _refuse_password(acc, passwords_file, problems)
    else:
        password = resolve_password(acc, passwords_file, environ, problems, warnings)
    signatures = resolve_signatures(acc.name, acc.signatures, config_dir, problems)

    # Checked against the written keys: an unreadable signature file is already reported once.
    if acc.default_signature is not None and acc.default_signature not in acc.signatures:
        problems.add(f'{who} odkazuje na podpis "{acc.default_signature}", který v "signatures" není')
    for alias in acc.aliases:
        if alias.default_signature is not None and alias.default_signature not in acc.signatures:
            problems.add(
                f'{who} / alias {alias.address} odkazuje na podpis "{alias.default_signature}", '
                'který v "signatures" není'
            )

    if not MIN_CONNECTIONS <= acc.max_connections <= MAX_CONNECTIONS:
        problems.add(
            f'{who}: "max_connections" je {acc.max_connections}, čeká se číslo od {MIN_CONNECTIONS} do '
            f"{MAX_CONNECTIONS} (Gmail dovolí 15 spojení na účet včetně telefonu a dalších programů; výchozí 4)"
        )

    if acc.sweep_limit is not None:
        _check_sweep_limit(who, acc.sweep_limit, problems)

    classifications = acc.classification_labels if acc.own_classifications else model.classification_labels
    if acc.own_classifications:
        _check_classifications(who, classifications, problems)
    if acc.processed_label is not None:
        processed = acc.processed_label.casefold()
        for label in classifications:
            if label.casefold() == processed:
                problems.add(
                    f'{who}: klasifikační štítek "{label}" je stejný jako štítek zpracování '
                    f'"{acc.processed_label}"; zvolte pro klasifikaci jiný název'
                )
    if acc.my_label is not None and acc.my_label.casefold() not in {a.casefold() for a in acc.assignment_labels}:
        problems.add(f'{who}: "my_label" je "{acc.my_label}", ale v "assignment_labels" takový štítek není')

    return Account(
        **{setting: getattr(acc, setting) for setting in _AS_WRITTEN},
        password=password or "",
        assignment_labels=tuple(acc.assignment_labels),
        allowed_recipients=tuple(acc.allowed_recipients) if acc.limits_recipients else None,
        classification_labels=dict(classifications),
        signatures=signatures,
        aliases=tuple(
            Alias(address=a.address, name=a.name, purpose=a.purpose, default_signature=a.default_signature)
            for a in acc.aliases
        ),
        smtp_port=acc.smtp_port if acc.smtp_port is not None else model.smtp_port,
        sweep_limit=acc.sweep_limit if acc.sweep_limit is not None else model.sweep_limit,
        watch_idle=acc.watch_idle if acc.own_watch_idle else model.watch_idle,
        oauth=oauth_client if acc.auth == "oauth" else None,
        follow_up_after_s=(
            _follow_up_after(who, acc.follow_up_after, problems)
            if acc.follow_up_after is not None
            else follow_up_after_s
        ),
    )


def _refuse_password(acc: RawAccount, passwords_file: PasswordsFile | None, problems: Problems) -> None:
    """An OAuth mailbox signs in through Google: a password beside it is a mistake, never a fallback."""
    given = [key for key in ("password", "password_env") if getattr(acc, key) is not None]
    entries = passwords_file.entries if passwords_file is not None else None
    entry = entries.get(acc.name, "") if entries is not None else ""
    if entry.strip() and PLACEHOLDER not in entry:
        given.append("heslo v souboru hesel")
    if given:
        problems.add(
            f'schránka `{acc.name}` se přihlašuje přes Google ("auth": "oauth"), heslo nepotřebuje; '
            "odstraňte " + " a ".join(f'"{g}"' if g.startswith("password") else g for g in given)
        )


def _check_classifications(where: str, labels: Mapping[str, str], problems: Problems) -> None:
    """Names Gmail would reserve (`\\…`) or treat as one label (case-only differences)."""
    for label in labels:
        if label.startswith("\\"):
            problems.add(
                f'{where}: klasifikační štítek "{label}" začíná znakem „\\“, '
                "tak Gmail označuje své systémové štítky; zvolte jiný název"
            )
    by_case: dict[str, list[str]] = {}
    for label in labels:
        by_case.setdefault(label.casefold(), []).append(label)
    for same in by_case.values():
        if len(same) > 1:
            problems.add(
                f"{where}: klasifikační štítky "
                + ", ".join(f'"{s}"' for s in same)
                + " se liší jen velikostí písmen, Gmail je nerozliší; ponechte jen jeden"
            )
