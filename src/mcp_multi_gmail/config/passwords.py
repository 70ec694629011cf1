"""Where each mailbox's app password comes from, and how it is tidied.

Nothing here ever puts a password, its length or the passwords file's content into a message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .models import RawAccount
from .report import HIDDEN, Problems, looks_like_app_password

# What the setup guide writes in place of a password the user has not pasted yet.
PLACEHOLDER = "SEM_VLOZ_HESLO_APLIKACE"

_APP_PASSWORD = re.compile(r"[a-z]{16}")
_WHITESPACE = re.compile(r"\s+")


def normalize_app_password(password: str) -> str:
    """Google shows app passwords as "abcd efgh ijkl mnop"; only that shape is compacted.

    Any other password is returned unchanged, spaces included.
    """
    compact = _WHITESPACE.sub("", password)
    return compact if _APP_PASSWORD.fullmatch(compact) else password


@dataclass(frozen=True)
class PasswordsFile:
    path: Path
    entries: dict[str, str] | None  # None: the file could not be used (already reported)


def read_passwords_file(path: Path, problems: Problems) -> PasswordsFile:
    """Read `{"mailbox-name": "password", …}`; problems name the file, never its content."""
    try:
        raw = path.read_bytes()
    except OSError:
        problems.add(f"soubor hesel `{path}` nejde přečíst (chybí, nebo k němu není přístup)", password=True)
        return PasswordsFile(path, None)
    data: object = None
    try:
        data = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError (their text may quote a
        data = None  # password), brackets nested too deep
    if not isinstance(data, dict):
        problems.add(
            f'soubor hesel `{path}` není platný JSON tvaru {{"jmeno-schranky": "heslo"}} '
            "(jeho obsah se kvůli heslům nevypisuje)",
            password=True,
        )
        return PasswordsFile(path, None)
    # A plain dict only holds what the file says: no inherited names like "constructor".
    entries = {str(k): v for k, v in data.items() if isinstance(v, str)}
    return PasswordsFile(path, entries)


def resolve_password(
    account: RawAccount,
    passwords_file: PasswordsFile | None,
    environ: Mapping[str, str],
    problems: Problems,
    warnings: list[str],
) -> str | None:
    """The account's password (order: literal, env variable, passwords file), or None after a problem."""
    who = f"schránka `{account.name}`"
    if account.password is not None and account.password_env is not None:
        problems.add(f'{who} má zároveň "password" i "password_env"; ponechte jen jedno', password=True)
        return None
    if account.password is not None:
        if PLACEHOLDER in account.password:
            warnings.append(
                f"{who}: heslo ještě není vložené (v nastavení je pořád zástupný text {PLACEHOLDER}), "
                "schránka se nepřihlásí"
            )
        return normalize_app_password(account.password)
    if account.password_env is not None:
        value = environ.get(account.password_env, "")
        if not value.strip():
            if looks_like_app_password(account.password_env):
                # The password itself pasted where the variable's name belongs: never echo it.
                problems.add(
                    f'{who}: v "password_env" má být název proměnné prostředí, ale je tam text, který vypadá '
                    f'jako samotné heslo {HIDDEN}; heslo patří do "password", nebo do proměnné, jejíž název '
                    'se uvede v "password_env"',
                    password=True,
                )
                return None
            problems.add(
                f"{who} čeká heslo v proměnné prostředí {account.password_env}, která není nastavená (nebo je prázdná)",
                password=True,
            )
            return None
        return normalize_app_password(value)
    if passwords_file is not None:
        if passwords_file.entries is None:
            return None  # the file's own problem is already reported
        value = passwords_file.entries.get(account.name, "")
        if not value.strip():
            problems.add(f"{who} nemá heslo v souboru hesel `{passwords_file.path}`", password=True)
            return None
        if PLACEHOLDER in value:
            warnings.append(
                f"{who}: heslo v souboru hesel `{passwords_file.path}` ještě není vložené "
                f"(je tam pořád zástupný text {PLACEHOLDER}), schránka se nepřihlásí"
            )
        return normalize_app_password(value)
    problems.add(
        f'{who} nemá ani "password", ani "password_env", ani heslo v souboru "passwords_file"',
        password=True,
    )
    return None
