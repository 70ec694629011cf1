"""Czech configuration error reports.

Messages are built only from what the schema knows (key paths, error kinds, allowed values),
never from the values in the file: a value could be a password.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_core import ErrorDetails

APP_PASSWORD_HINT = (
    "Heslo aplikace (16 písmen) se vytváří v účtu Google v části Zabezpečení → Hesla aplikací; "
    "ta nabídka je dostupná jen se zapnutým dvoufázovým ověřením."
)

_LABEL_PREFIX = (
    "klíč „label_prefix“ už neexistuje: celý název štítku se teď píše do „processed_label“ "
    '(z předpony „asistent“ a štítku „zpracováno“ je tedy "processed_label": "asistent/zpracováno"). '
    "Řádek s label_prefix smažte."
)
_TIME_HORIZON = (
    "klíč „time_horizon“ už neexistuje: jak daleko do minulosti průchod pošty sahá, určuje hranice "
    "„since“, kterou asistent předává nástroji mg_next_pass. Řádek s time_horizon smažte."
)
_UNKNOWN_KEY = (
    "neznámý klíč. Pokud patří novější verzi mcp-multi-gmail, běží pořád ta stará (nová verze platí "
    "až v nové konverzaci, případně v terminálu /mcp a Reconnect); jinak jde o překlep v názvu klíče."
)


# Google's app passwords: 16 lowercase letters, shown grouped by four ("abcd efgh ijkl mnop").
_APP_PASSWORD_SHAPE = re.compile(r"[a-z]{16}")
# What a real key looks like; anything else in a key position may be a pasted password.
_KEY_SHAPE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
HIDDEN = "(nevypisuje se, vypadá jako heslo)"


def looks_like_app_password(text: str) -> bool:
    return bool(_APP_PASSWORD_SHAPE.fullmatch("".join(text.split())))


class ConfigError(Exception):
    """A configuration that cannot be used; `message` is the whole Czech report."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _problem_heading(path: Path, count: int) -> str:
    # Czech agreement: 1 problém, 2–4 problémy, 5+ problémů.
    if count == 1:
        return f"V nastavení `{path}` je 1 problém:"
    if 2 <= count <= 4:
        return f"V nastavení `{path}` jsou {count} problémy:"
    return f"V nastavení `{path}` je {count} problémů:"


@dataclass
class Problems:
    """Collects every semantic problem so the user fixes them all in one go."""

    lines: list[str] = field(default_factory=list)
    about_password: bool = False

    def add(self, line: str, *, password: bool = False) -> None:
        self.lines.append(line)
        self.about_password = self.about_password or password

    def __len__(self) -> int:
        return len(self.lines)

    def report(self, path: Path) -> str:
        parts = [_problem_heading(path, len(self.lines))]
        parts.extend(f"  {line}" for line in self.lines)
        if self.about_password:
            parts.append(APP_PASSWORD_HINT)
        return "\n".join(parts)


def _shown_key(part: int | str, *, unknown: bool) -> str:
    """A key of the file as the report may show it: never one that could be a pasted password."""
    text = str(part)
    if looks_like_app_password(text) or (unknown and not _KEY_SHAPE.fullmatch(text)):
        return HIDDEN
    # A key with a line break or another control would split the report line: show it escaped.
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _where(loc: Sequence[int | str], *, unknown_key: bool = False) -> str:
    last = len(loc) - 1
    parts = [_shown_key(p, unknown=unknown_key and i == last) for i, p in enumerate(loc)]
    if parts and parts[-1] == "[key]":  # a bad key of an object: point at the key itself
        parts = parts[:-1]
        if parts and parts[-1] == "":
            parts[-1] = '""'
    return ".".join(parts) if parts else "(root)"


def _explain(error: ErrorDetails) -> str:
    kind = error["type"]
    loc = error["loc"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else ""
        return {"label_prefix": _LABEL_PREFIX, "time_horizon": _TIME_HORIZON}.get(key, _UNKNOWN_KEY)
    if kind in ("bad_name", "not_email", "control_chars"):
        return error["msg"]  # our own texts (models.py), they never contain the value
    if kind == "too_short" and tuple(loc) == ("accounts",):
        return "nastavte aspoň jednu schránku"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace(" or ", " nebo ")
        return f"musí být {expected}"
    if kind == "string_too_short" and loc and loc[-1] == "[key]":
        return "název nesmí být prázdný"
    simple = {
        "missing": "chybí (tento klíč je povinný)",
        "string_type": "musí být text v uvozovkách",
        "bool_type": "musí být true nebo false",
        "int_type": "musí být celé číslo",
        "list_type": "musí být seznam v hranatých závorkách […]",
        "dict_type": "musí být objekt ve složených závorkách {…}",
        "model_type": "musí být objekt ve složených závorkách {…}",
        "string_too_short": "nesmí být prázdné",
        "too_short": f"musí mít aspoň {ctx.get('min_length', 1)} položku",
    }
    return simple.get(kind, "neplatná hodnota")


def schema_report(path: Path, errors: Sequence[ErrorDetails]) -> str:
    lines = [f"`{path}` není platné nastavení:"]
    lines.extend(f"  {_where(e['loc'], unknown_key=e['type'] == 'extra_forbidden')}: {_explain(e)}" for e in errors)
    return "\n".join(lines)
