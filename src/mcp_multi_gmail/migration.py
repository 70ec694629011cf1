"""What changes for a configuration written for the Node.js server 1.5.0 (`--check-config`).

The notes are read from the file as written, not from the loaded configuration, so they are
there even when the file no longer loads (which is exactly when they are needed most). Czech,
like every other message about the configuration. Values are shown only where they cannot be a
password: paths and label names, and even those are hidden when they look like an app password.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config.paths import absolute_from
from .config.report import HIDDEN, looks_like_app_password
from .layout import AddonLayout

_NEW_REFUSAL = "verze 1.5.0 ho přijala, od 2.0.0 server s takovým nastavením nenaběhne; přejmenujte ho"

# Changes that concern every user of 1.5.0, whatever the file says: the assistant's notes and habits.
GENERAL_NOTES = (
    "Message-ID se ve výsledcích vrací bez špičatých závorek <>; id se závorkami z dřívějška "
    "server dál přijímá (i ve stavu hlídače wait-known.json).",
    "Chybné argumenty nástrojů (nečitelné since, cizí page_token, prázdný štítek…) mají kód "
    "invalid_input místo not_found.",
    "Výsledek, který se povedl, nikdy nemá isError, ani když nese varování (warning).",
    'Pole "from" ve výsledku mg_save_draft a mg_send_message je objekt {name, address}, ne text.',
    "Server se spouští přes uv (uv run --no-dev --project … mcp-multi-gmail --config …) místo node; "
    "upravte příkaz v .mcp.json.",
    "Hlídač se spouští také přes uv: uv run --no-dev --project .doplnky/mcp-multi-gmail mcp-multi-gmail "
    "--config system/multigmail.json --wait --since … místo node .doplnky/mcp-multi-gmail/mcp-multi-gmail.mjs "
    "… --wait; kotvy, kódy ukončení i wait-known.json zůstávají.",
    "Ostatní rozdíly, které se z nastavení poznat nedají (HTML zprávy jako text, kurzory místo čísel "
    "stránek, limity výsledků a volání, neznámé přepínače serveru, režim opravy…), vyjmenovává README, "
    "oddíl Přechod z verze 1.5.0.",
)
_SEND_NOTE = (
    "Odesílání (can_send): tutéž zprávu odeslanou podruhé během téhož dne (UTC) server odmítne kódem "
    'duplicate_send; znovu ji pošle jen s "repeat": true.'
)


# What a mailbox that may send meets (verified against mail/sending/send.py, mail/sending/journal.py and policy/).
_SEND_CHANGES = (
    "Odesílání (can_send): server se před odesláním vždy přihlásí i do IMAPu (kontrola dvojího odeslání), "
    "na kopii v Odeslané čeká až 15 s (verze 1.5.0 3 s) a do složky doplňku zapisuje deník send-journal.json "
    "se zámkem .send-journal.lock; když je zapsat nemůže, zprávu neodešle. Nejvýš 100 adresátů (to + cc + bcc) "
    'na zprávu; "confirm_sends": true nechá každé odeslání potvrdit uživatele v Claude Code.'
)
_HARD_LINK_NOTE = (
    "Přílohy (attachment_dirs): soubor s víc jmény (pevný odkaz, hard link) server nepřiloží, odmítne ho "
    "kódem send_forbidden – mohl by ležet i mimo povolené složky; přiložit jde jeho kopie."
)
_WATCH_NOTE = (
    "Hlídač (watch, watch_interval, watch_hours): novou poštu hlídá přes IMAP IDLE a ohlásí ji hned, "
    "watch_interval už neurčuje, jak často se probudí (jen jak často se navíc zeptá), a každá hlídaná "
    'schránka drží o jedno spojení víc; "watch_idle": false vrátí hlídání jen dotazováním jako ve verzi 1.5.0.'
)


def _some_account(raw: Mapping[str, Any], key: str) -> bool:
    """Whether any mailbox of the raw configuration sets `key` to true."""
    accounts = raw.get("accounts")
    return isinstance(accounts, list) and any(isinstance(a, dict) and a.get(key) is True for a in accounts)


def _watches(raw: Mapping[str, Any]) -> bool:
    return _some_account(raw, "watch") or "watch_interval" in raw or "watch_hours" in raw


def _show(text: str) -> str:
    if looks_like_app_password(text):
        return HIDDEN
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return shown if len(shown) <= 200 else shown[:200] + "…"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    except (OSError, ValueError):
        return None  # the start-up report already says why
    return data if isinstance(data, dict) else None


def _path_notes(raw: Mapping[str, Any], base: Path, base_name: str) -> list[str]:
    written: list[tuple[str, str]] = []
    if isinstance(raw.get("download_dir"), str):
        written.append(("download_dir", raw["download_dir"]))
    if isinstance(raw.get("attachment_dirs"), list):
        written.extend(("attachment_dirs", d) for d in raw["attachment_dirs"] if isinstance(d, str))
    notes = []
    for key, value in written:
        if not value or Path(value).expanduser().is_absolute() or "\x00" in value:
            continue
        notes.append(
            f'relativní cesta "{key}" "{_show(value)}" teď znamená {absolute_from(base, value)} '
            f"(počítá se od {base_name}; verze 1.5.0 ji počítala od pracovní složky, ve které server běžel)"
        )
    return notes


def _reserved(where: str, names: list[str]) -> list[str]:
    return [
        f'{where}: klasifikační štítek "{_show(name)}" začíná znakem „\\“ (tak Gmail značí své systémové '
        f"štítky); {_NEW_REFUSAL}"
        for name in names
        if name.startswith("\\")
    ]


def _equal_to_processed(where: str, names: list[str], processed: str | None) -> list[str]:
    if processed is None:
        return []
    return [
        f'{where}: klasifikační štítek "{_show(name)}" je stejný jako štítek zpracování '
        f'"{_show(processed)}"; {_NEW_REFUSAL}'
        for name in names
        if name.casefold() == processed.casefold()
    ]


def _case_duplicates(where: str, names: list[str]) -> list[str]:
    by_case: dict[str, list[str]] = {}
    for name in names:
        by_case.setdefault(name.casefold(), []).append(name)
    return [
        f"{where}: klasifikační štítky {', '.join(f'„{_show(s)}“' for s in same)} se liší jen velikostí "
        "písmen, Gmail je nerozliší; verze 1.5.0 je přijala, od 2.0.0 server s takovým nastavením "
        "nenaběhne; ponechte jen jeden"
        for same in by_case.values()
        if len(same) > 1
    ]


def _label_names(value: object) -> list[str] | None:
    return [name for name in value if isinstance(name, str)] if isinstance(value, dict) else None


def _classification_notes(raw: Mapping[str, Any]) -> list[str]:
    top = _label_names(raw.get("classification_labels")) or []
    accounts = raw.get("accounts")
    # The shared set's own faults are named once, for the whole file.
    notes = _reserved("celý server", top) + _case_duplicates("celý server", top)
    for account in accounts if isinstance(accounts, list) else []:
        if not isinstance(account, dict):
            continue
        name = account.get("name")
        who = f"schránka `{_show(name)}`" if isinstance(name, str) else "schránka bez jména"
        processed = account.get("processed_label", "processed")  # 1.5.0 and 2.0.0 share this default
        processed = processed if isinstance(processed, str) else None
        own = _label_names(account.get("classification_labels"))
        if own is None:  # inherits the shared set
            notes.extend(_equal_to_processed(who, top, processed))
        else:
            notes.extend(_reserved(who, own) + _equal_to_processed(who, own, processed) + _case_duplicates(who, own))
    return notes


def migration_notes(path: Path, layout: AddonLayout | None) -> list[str]:
    """One Czech line per change since 1.5.0 that concerns this file, then the general ones."""
    raw = _read(path)
    notes: list[str] = []
    if raw is not None:
        if layout is not None:
            notes.extend(_path_notes(raw, layout.vault_root, f"kořene vaultu {layout.vault_root}"))
        else:
            notes.extend(_path_notes(raw, path.parent, f"složky s nastavením {path.parent}"))
        notes.extend(_classification_notes(raw))
        if _some_account(raw, "can_send"):
            notes.extend((_SEND_NOTE, _SEND_CHANGES))
        dirs = raw.get("attachment_dirs")
        if isinstance(dirs, list) and any(isinstance(d, str) and d for d in dirs):
            notes.append(_HARD_LINK_NOTE)
        if _watches(raw):
            notes.append(_WATCH_NOTE)
    notes.extend(GENERAL_NOTES)
    return notes
