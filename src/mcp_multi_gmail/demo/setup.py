"""The demo's setting: the embedded Gmail emulator with the sample mailboxes and their configuration.

The emulator (`gmail_emulator`) is a development dependency, imported lazily: an installation
without the dev group (`--no-dev`, Miládka's add-on) gets a clear Czech message and exit 1.
`serve` (`mcp-multi-gmail --demo`) and `tour` (`mcp-multi-gmail demo`) build on this module;
it imports neither.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gmail_emulator import GmailEmulator

# How the demo configures each sample mailbox of the emulator's demo seed (its seeds/demo/README.md),
# by address. The addresses, passwords and order of the mailboxes are the seed's own.
CLASSIFICATIONS = {
    "Asistent/akce": "the user has to do something",
    "Asistent/čeká": "waiting for someone else",
    "Asistent/info": "for information only",
    "Asistent/hoří": "urgent",
}
ALLOWED_RECIPIENTS = ["@example.cz", "@example.com", "@example.org", "@partner.example"]
DEMO_SETTINGS: dict[str, dict[str, Any]] = {
    "jana.novakova@example.cz": {
        "name": "osobni",
        "processed_label": "Asistent",
        "classification_labels": CLASSIFICATIONS,
        "can_send": True,
        "can_unsubscribe": True,
        "allowed_recipients": ALLOWED_RECIPIENTS,
    },
    "tym@example.com": {
        "name": "tym",
        "shared": True,
        "work_scope": "inbox",
        "processed_label": "Miladka/zpracovano",
        "classification_labels": {},
        "assignment_labels": ["Anna", "Beda", "Cyril"],
        "my_label": "Anna",
    },
    "upozorneni@example.com": {
        "name": "automaty",
        "work_scope": "inbox",
        "unread_only": True,
        "processed_label": None,
        "classification_labels": {},
    },
}

MISSING_DEV = (
    "chyba: ukázka potřebuje vývojové balíčky (chybí modul {module}). "
    "Spusťte ji v naklonovaném repozitáři příkazem `uv run mcp-multi-gmail demo` "
    "(uv doinstaluje skupinu dev); instalace bez vývojových balíčků (--no-dev, doplněk Miládky) "
    "ukázku nemá."
)


def stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def emulator_class() -> type[GmailEmulator] | None:
    """The emulator class, or None (after a Czech message on stderr) when the dev group is missing."""
    try:
        import aiosmtpd  # noqa: F401
        import trustme  # noqa: F401

        from gmail_emulator import GmailEmulator
    except ImportError as error:
        stderr_line(MISSING_DEV.format(module=error.name or "gmail_emulator"))
        return None
    return GmailEmulator


def demo_seed() -> Path:
    return Path(str(files("gmail_emulator.seeds") / "demo" / "seed.json"))


def demo_accounts() -> list[dict[str, Any]]:
    """The configuration entries of the seed's mailboxes: address and password as the seed has them."""
    seed = json.loads(demo_seed().read_text(encoding="utf-8"))
    return [
        {"address": mailbox["address"], "password": mailbox["password"], **DEMO_SETTINGS[mailbox["address"]]}
        for mailbox in seed["accounts"]
    ]


def demo_config(download_dir: Path) -> dict[str, Any]:
    return {"accounts": demo_accounts(), "download_dir": str(download_dir)}


def write_demo_config(folder: Path) -> Path:
    """Write the demo configuration (and create its download folder) in `folder`."""
    downloads = folder / "prilohy"
    downloads.mkdir(parents=True, exist_ok=True)
    path = folder / "multigmail-demo.json"
    path.write_text(json.dumps(demo_config(downloads), ensure_ascii=False, indent=2), encoding="utf-8")
    return path


@dataclass(frozen=True)
class DemoSetup:
    """A running emulator with the demo seed and a configuration for its three mailboxes."""

    emulator: GmailEmulator
    folder: Path
    config_path: Path

    def env(self) -> dict[str, str]:
        """MG_GMAIL_ENDPOINT and MG_GMAIL_CA_FILE pointing at the emulator."""
        from ..gmail.endpoint import loopback_environ

        return loopback_environ(**self.emulator.env())


# The demo folder holds a config with the sample passwords, the CA key and the downloads.
FOLDER_PREFIX = "mcp-multi-gmail-demo-"
OWNER_FILE = "demo-owner.json"  # {"program": OWNER_PROGRAM, "host": ..., "pid": ...}: marks a folder as ours
OWNER_PROGRAM = "mcp-multi-gmail demo"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to judge
        return True
    except OSError:
        return True
    return True


def _stale_demo_folder(path: Path) -> bool:
    """A folder an earlier demo left behind (killed by SIGKILL): ours, with our marker, owner gone."""
    try:
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            return False
        owner = json.loads((path / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(owner, dict) or owner.get("program") != OWNER_PROGRAM:
        return False
    if owner.get("host") != socket.gethostname():  # a pid means nothing on another machine or container
        return False
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    return not _alive(pid)


def remove_stale_demo_folders(temp_root: Path | None = None) -> list[Path]:
    """Delete the demo folders of earlier runs that could not clean up; return what was removed."""
    root = Path(temp_root or tempfile.gettempdir())
    removed = []
    for path in sorted(root.glob(FOLDER_PREFIX + "*")):
        if _stale_demo_folder(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@contextmanager
def demo_folder() -> Iterator[Path]:
    """A private temporary folder marked as this process's, removed on the way out."""
    remove_stale_demo_folders()
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    try:
        owner = {"program": OWNER_PROGRAM, "host": socket.gethostname(), "pid": os.getpid()}
        (folder / OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def running_demo(emulator_cls: type[GmailEmulator]) -> Iterator[DemoSetup]:
    """Start the emulator (seeded) and write the demo configuration, all in one temporary folder."""
    with demo_folder() as folder, emulator_cls(workdir=folder / "emulator", seed=demo_seed()) as emulator:
        yield DemoSetup(emulator=emulator, folder=folder, config_path=write_demo_config(folder))
