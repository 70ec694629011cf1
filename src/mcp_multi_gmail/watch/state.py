"""The watcher's two files: the `wait.owner` claim and the `wait-known.json` known-mail state.

Both live in the project folder (in Miládka the add-on folder, which is not backed up) and are
the only files the server writes besides downloaded attachments. Both are written with mode 0600.
"""

from __future__ import annotations

import json
import os
import secrets
import string
from collections.abc import Mapping
from pathlib import Path

OWNER_FILE = "wait.owner"
KNOWN_FILE = "wait-known.json"
STATE_VERSION = 1

_BASE36 = string.digits + string.ascii_lowercase


def _base36(number: int) -> str:
    digits = []
    while True:
        number, rest = divmod(number, 36)
        digits.append(_BASE36[rest])
        if number == 0:
            return "".join(reversed(digits))


def new_token(pid: int, start_ms: int) -> str:
    """`"<pid> <start ms> <random base36>"`: unique even when a pid is reused."""
    return f"{pid} {start_ms} {_base36(secrets.randbits(64))}"


def _write_private(path: Path, text: str) -> None:
    # O_CREAT's mode only applies to a new file; chmod covers a file left by an older version.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.chmod(path, 0o600)
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def write_claim(path: Path, token: str) -> None:
    """Take over the watch; an older watcher sees a foreign token and ends. Raises OSError."""
    _write_private(path, token + "\n")


def owns_claim(path: Path, token: str) -> bool:
    """True unless the claim holds another watcher's token.

    A missing file counts as ours: it was removed by hand, and treating that as a takeover
    would leave nobody watching.
    """
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return True
    except OSError:
        return True  # unreadable is not proof of a newer watcher; the next round looks again
    return current.strip() == token


def _bare_key(key: str) -> str:
    # 1.5.0 stored the envelope's Message-ID with its angle brackets; keys are bare now.
    text = key.strip()
    if len(text) > 2 and text.startswith("<") and text.endswith(">"):
        return text[1:-1]
    return text


def load_known(path: Path) -> dict[str, set[str]]:
    """`{"version": 1, "known": {"<account>": [keys]}}`; missing or broken → empty.

    Empty means everything waiting counts as new once, which is the safe side: a wake too many
    costs one pass, a missed wake costs unanswered mail. Keys written by 1.5.0 (bracketed
    Message-IDs) are read as the bare ids used now, so an upgrade does not wake for old mail.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return {}
    known = data.get("known")
    if not isinstance(known, dict):
        return {}
    result: dict[str, set[str]] = {}
    for name, keys in known.items():
        if isinstance(name, str) and isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            result[name] = {_bare_key(k) for k in keys}
    return result


def save_known(path: Path, known: Mapping[str, set[str]]) -> None:
    """Write atomically (`<path>.tmp`, then rename) so a reader never sees half a file. Raises OSError."""
    body = {"version": STATE_VERSION, "known": {name: sorted(keys) for name, keys in sorted(known.items())}}
    tmp = path.with_name(path.name + ".tmp")
    _write_private(tmp, json.dumps(body, ensure_ascii=False, indent=1) + "\n")
    os.replace(tmp, path)
