"""Seed files: the accounts, labels and messages an emulator starts with (format in README.md).

``load_seed`` reads and validates a seed (a JSON file or an already-parsed dict) without touching
any store: every problem is collected and reported together in one ``SeedError``. Relative dates
(``"-3d"`` internaldates, ``{{DATE:-30d}}`` placeholders) are resolved against ``now`` at load time.
``apply_seed`` then fills a ``Store``; it must run on the emulator's event-loop thread.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any, Literal, cast

from .knobs import Knobs, search_zone
from .mime import ParsedMessage
from .store import SYSTEM_LABELS, Location, Store
from .trace import gmail_trace

__all__ = [
    "Seed",
    "SeedAccount",
    "SeedError",
    "SeedMessage",
    "apply_seed",
    "load_seed",
    "parse_relative",
    "validate_knobs",
]

_LOCATIONS = ("normal", "trash", "spam")
_SYSTEM_FLAGS = ("\\Seen", "\\Answered", "\\Flagged", "\\Deleted", "\\Draft")
_RELATIVE = re.compile(r"^([+-])(\d+(?:\.\d+)?)([smhdw])$")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PLACEHOLDER = re.compile(rb"\{\{DATE(?::([^{}]*))?\}\}")
_KEYWORD = re.compile(r"^[^\s(){%*\"\\\]]+$")


class SeedError(ValueError):
    """A seed that cannot be loaded; `problems` lists every issue found, one per entry."""

    def __init__(self, problems: list[str], source: str = "seed") -> None:
        self.problems = problems
        self.source = source
        listing = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid {source} ({len(problems)} problem(s)):\n{listing}")


@dataclass(frozen=True)
class SeedMessage:
    raw: bytes
    labels: tuple[str, ...]
    flags: tuple[str, ...]
    internaldate: datetime
    location: Location


@dataclass(frozen=True)
class SeedAccount:
    address: str
    password: str
    labels: tuple[str, ...]
    messages: tuple[SeedMessage, ...]


@dataclass(frozen=True)
class Seed:
    accounts: tuple[SeedAccount, ...]
    knobs: Mapping[str, object]


# --------------------------------------------------------------------------- dates


def parse_relative(text: str) -> timedelta | None:
    """``"-3d"`` / ``"+2h"`` / ``"-30m"`` / ``"-10s"`` / ``"+1w"`` as a timedelta; None if not that form."""
    m = _RELATIVE.match(text.strip())
    if m is None:
        return None
    seconds = float(m.group(2)) * _UNITS[m.group(3)]
    return timedelta(seconds=-seconds if m.group(1) == "-" else seconds)


def _parse_internaldate(value: str, now: datetime) -> datetime:
    delta = parse_relative(value)
    if delta is not None:
        return now + delta
    parsed = datetime.fromisoformat(value.strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _fill_placeholders(raw: bytes, now: datetime, where: str, problems: list[str]) -> bytes:
    def replace(m: re.Match[bytes]) -> bytes:
        arg = m.group(1)
        if arg is None or not arg.strip():
            when = now
        else:
            delta = parse_relative(arg.decode("ascii", errors="replace"))
            if delta is None:
                problems.append(
                    f"{where}: bad placeholder {m.group(0).decode('ascii', 'replace')!r} "
                    "(expected {{DATE}} or {{DATE:-30d}}, units s/m/h/d/w)"
                )
                return m.group(0)
            when = now + delta
        return format_datetime(when.astimezone(UTC).replace(microsecond=0)).encode("ascii")

    return _PLACEHOLDER.sub(replace, raw)


# --------------------------------------------------------------------------- knobs


def _check_type(value: object, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is bool:
        return isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is type(None):
        return value is None
    if origin is Literal:
        return value in typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_check_type(value, arg) for arg in typing.get_args(hint))
    if origin is dict:
        key_t, val_t = typing.get_args(hint)
        return isinstance(value, dict) and all(
            _check_type(k, key_t) and _check_type(v, val_t) for k, v in value.items()
        )
    if origin in (set, list, frozenset):
        (item_t,) = typing.get_args(hint)
        return isinstance(value, list | set | frozenset | tuple) and all(_check_type(v, item_t) for v in value)
    return True


def validate_knobs(raw: object, where: str = "knobs") -> tuple[dict[str, object], list[str]]:
    """Check a JSON knob mapping against `Knobs`; returns (values ready for Knobs.update, problems)."""
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        return {}, [f"{where}: must be an object"]
    hints = typing.get_type_hints(Knobs)
    names = {f.name for f in fields(Knobs)}
    out: dict[str, object] = {}
    for name, value in raw.items():
        if name not in names:
            problems.append(f"{where}.{name}: unknown knob (known: {', '.join(sorted(names))})")
            continue
        hint = hints[name]
        if not _check_type(value, hint):
            problems.append(f"{where}.{name}: {value!r} does not fit {_hint_text(hint)}")
            continue
        if name == "date_search_timezone":
            try:
                search_zone(str(value))
            except ValueError as error:
                problems.append(f"{where}.{name}: {error}")
                continue
        if typing.get_origin(hint) is set:
            value = set(cast("list[object]", value))
        elif typing.get_origin(hint) is dict:
            value = dict(cast("dict[object, object]", value))
        out[name] = value
    return out, problems


def _hint_text(hint: Any) -> str:
    text = str(hint).replace("typing.", "")
    return text.replace("<class '", "").replace("'>", "")


# --------------------------------------------------------------------------- loading


def _str_list(value: object, where: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: must be a list of strings")
        return []
    return list(value)


def _check_keys(obj: Mapping[str, object], allowed: set[str], where: str, problems: list[str]) -> None:
    for key in obj:
        if key not in allowed and not key.startswith("_"):
            problems.append(f"{where}.{key}: unknown key (allowed: {', '.join(sorted(allowed))})")


def load_seed(
    source: Path | str | Mapping[str, Any],
    *,
    base_dir: Path | None = None,
    now: datetime | None = None,
) -> Seed:
    """Read and validate a seed. Paths in `eml` resolve against the seed file's directory
    (`base_dir`, else the working directory, for a dict)."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    label = "seed"
    if isinstance(source, Mapping):
        data: object = source
        base = base_dir or Path.cwd()
    else:
        path = Path(source)
        label = f"seed {path}"
        base = base_dir or path.parent
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SeedError([f"cannot read the seed file: {exc.strerror or exc}"], label) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SeedError([f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"], label) from exc

    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise SeedError(["the top level must be a JSON object"], label)
    _check_keys(data, {"accounts", "knobs"}, "seed", problems)
    knobs, knob_problems = validate_knobs(data.get("knobs", {}))
    problems.extend(knob_problems)

    accounts_raw = data.get("accounts", [])
    accounts: list[SeedAccount] = []
    if not isinstance(accounts_raw, list):
        problems.append("accounts: must be a list")
        accounts_raw = []
    seen_addresses: set[str] = set()
    for i, acc in enumerate(accounts_raw):
        account = _load_account(acc, f"accounts[{i}]", base, now, problems)
        if account is None:
            continue
        key = account.address.lower()
        if key in seen_addresses:
            problems.append(f"accounts[{i}].address: {account.address!r} is listed twice")
        seen_addresses.add(key)
        accounts.append(account)
    if problems:
        raise SeedError(problems, label)
    return Seed(tuple(accounts), knobs)


def _load_account(acc: object, where: str, base: Path, now: datetime, problems: list[str]) -> SeedAccount | None:
    if not isinstance(acc, Mapping):
        problems.append(f"{where}: must be an object")
        return None
    _check_keys(acc, {"address", "password", "labels", "messages"}, where, problems)
    address = acc.get("address")
    password = acc.get("password")
    ok = True
    if not isinstance(address, str) or "@" not in address or address.strip() != address or not address:
        problems.append(f"{where}.address: must be an e-mail address string")
        ok = False
    if not isinstance(password, str) or not password:
        problems.append(f"{where}.password: must be a non-empty string")
        ok = False
    labels = _str_list(acc.get("labels"), f"{where}.labels", problems)
    declared: dict[str, str] = {}
    for j, name in enumerate(labels):
        if not name.strip("/") or name.startswith("\\"):
            problems.append(f"{where}.labels[{j}]: {name!r} is not a valid user label name")
        elif name.casefold() in declared:
            problems.append(f"{where}.labels[{j}]: {name!r} is listed twice")
        elif name.upper() == "INBOX" or name.startswith("[Gmail]") or name.startswith("[Google Mail]"):
            problems.append(f"{where}.labels[{j}]: {name!r} is a reserved name")
        else:
            declared[name.casefold()] = name
    messages_raw = acc.get("messages", [])
    messages: list[SeedMessage] = []
    if not isinstance(messages_raw, list):
        problems.append(f"{where}.messages: must be a list")
        messages_raw = []
    for k, msg in enumerate(messages_raw):
        recipient = address if isinstance(address, str) else ""
        loaded = _load_message(msg, f"{where}.messages[{k}]", base, now, declared, problems, recipient)
        if loaded is not None:
            messages.append(loaded)
    if not ok:
        return None
    assert isinstance(address, str) and isinstance(password, str)
    return SeedAccount(address, password, tuple(labels), tuple(messages))


def _load_message(
    msg: object,
    where: str,
    base: Path,
    now: datetime,
    declared: Mapping[str, str],
    problems: list[str],
    account_address: str = "",
) -> SeedMessage | None:
    if not isinstance(msg, Mapping):
        problems.append(f"{where}: must be an object")
        return None
    _check_keys(msg, {"eml", "raw", "labels", "flags", "internaldate", "location", "delivered"}, where, problems)
    before = len(problems)
    raw = _message_bytes(msg, where, base, problems)
    if raw is not None:
        raw = _fill_placeholders(raw, now, where, problems)
    canonical = _message_labels(msg, where, declared, problems)
    clean_flags = _message_flags(msg, where, problems)
    location = msg.get("location", "normal")
    if location not in _LOCATIONS:
        problems.append(f"{where}.location: must be one of {', '.join(_LOCATIONS)}, not {location!r}")
    internaldate = _message_internaldate(msg, where, now, problems)
    delivered = msg.get("delivered", False)
    if not isinstance(delivered, bool):
        problems.append(f"{where}.delivered: must be true or false")

    if len(problems) != before or raw is None:
        return None
    if internaldate is None:
        internaldate = ParsedMessage(raw).date or now
    if delivered is True:  # arrived over SMTP: Gmail's trace and verdict sit on top
        raw = gmail_trace(raw, recipient=account_address, when=internaldate) + raw
    return SeedMessage(
        raw=raw,
        labels=tuple(canonical),
        flags=tuple(clean_flags),
        internaldate=internaldate,
        location=cast(Location, location),
    )


def _message_bytes(msg: Mapping[str, object], where: str, base: Path, problems: list[str]) -> bytes | None:
    """The message from its `eml` file or its `raw` text."""
    if ("eml" in msg) == ("raw" in msg):
        problems.append(f"{where}: needs exactly one of 'eml' (a file path) or 'raw' (message text)")
        return None
    if "eml" in msg:
        eml = msg["eml"]
        if not isinstance(eml, str) or not eml:
            problems.append(f"{where}.eml: must be a path string")
            return None
        path = (base / eml) if not Path(eml).is_absolute() else Path(eml)
        try:
            return path.read_bytes()
        except OSError as exc:
            problems.append(f"{where}.eml: cannot read {str(path)!r}: {exc.strerror or exc}")
            return None
    text = msg["raw"]
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{where}.raw: must be a non-empty string (RFC 5322 text)")
        return None
    return text.encode("utf-8")


def _message_labels(
    msg: Mapping[str, object], where: str, declared: Mapping[str, str], problems: list[str]
) -> list[str]:
    """The message's labels as the account spells them (system labels in Gmail's spelling)."""
    labels = _str_list(msg.get("labels"), f"{where}.labels", problems)
    system_by_lower = {s.lower(): s for s in SYSTEM_LABELS}
    canonical: list[str] = []
    for name in labels:
        if name.startswith("\\"):
            sysname = system_by_lower.get(name.lower())
            if sysname is None:
                problems.append(f"{where}.labels: unknown system label {name!r} (known: {', '.join(SYSTEM_LABELS)})")
            else:
                canonical.append(sysname)
        elif name.casefold() not in declared:
            problems.append(f"{where}.labels: {name!r} is not one of the account's labels")
        else:
            canonical.append(declared[name.casefold()])
    return canonical


def _message_flags(msg: Mapping[str, object], where: str, problems: list[str]) -> list[str]:
    flags = _str_list(msg.get("flags"), f"{where}.flags", problems)
    flag_by_lower = {f.lower(): f for f in _SYSTEM_FLAGS}
    clean_flags: list[str] = []
    for flag in flags:
        if flag.startswith("\\"):
            known = flag_by_lower.get(flag.lower())
            if known is None:
                problems.append(f"{where}.flags: unknown system flag {flag!r} (known: {', '.join(_SYSTEM_FLAGS)})")
            else:
                clean_flags.append(known)
        elif not _KEYWORD.match(flag):
            problems.append(f"{where}.flags: {flag!r} is not a valid keyword")
        else:
            clean_flags.append(flag)
    return clean_flags


def _message_internaldate(msg: Mapping[str, object], where: str, now: datetime, problems: list[str]) -> datetime | None:
    value = msg.get("internaldate")
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(f"{where}.internaldate: must be a string (ISO-8601 or relative like -3d)")
        return None
    try:
        return _parse_internaldate(value, now)
    except ValueError:
        problems.append(f"{where}.internaldate: {value!r} is neither ISO-8601 nor relative (-3d, -2h, +1d)")
        return None


# --------------------------------------------------------------------------- applying


def apply_seed(store: Store, seed: Seed) -> None:
    """Knobs first, then accounts and their messages in the listed order (threads form on arrival)."""
    if seed.knobs:
        store.knobs.update(**dict(seed.knobs))
    for acc in seed.accounts:
        account = store.add_account(acc.address, acc.password, acc.labels)
        for msg in acc.messages:
            account.add_message(
                msg.raw,
                labels=msg.labels,
                flags=msg.flags,
                internaldate=msg.internaldate,
                location=msg.location,
            ).settle()  # old mail: the search index knows it already, whatever the lag
