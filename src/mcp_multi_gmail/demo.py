"""The demo: the embedded Gmail emulator with sample mailboxes, wired to the real server.

This is the only module that brings the emulator (`gmail_emulator`, a development dependency)
and the server together. `serve_demo()` serves MCP over stdio against the sample mailboxes
(`mcp-multi-gmail --demo`); `tour()` is a guided tour for a person at a terminal
(`mcp-multi-gmail demo`, see `demo_tour`). Both import the emulator lazily: an installation
without the dev group (`--no-dev`, Miládka's add-on) gets a clear Czech message and exit 1.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gmail_emulator import GmailEmulator

# The sample mailboxes of the demo seed (src/gmail_emulator/seeds/demo/README.md).
CLASSIFICATIONS = {
    "Asistent/akce": "the user has to do something",
    "Asistent/čeká": "waiting for someone else",
    "Asistent/info": "for information only",
    "Asistent/hoří": "urgent",
}
ALLOWED_RECIPIENTS = ["@example.cz", "@example.com", "@example.org", "@partner.example"]
DEMO_ACCOUNTS: list[dict[str, Any]] = [
    {
        "name": "osobni",
        "address": "jana.novakova@example.cz",
        "password": "demoosobniheslox",
        "processed_label": "Asistent",
        "classification_labels": CLASSIFICATIONS,
        "can_send": True,
        "allowed_recipients": ALLOWED_RECIPIENTS,
    },
    {
        "name": "tym",
        "address": "tym@example.com",
        "password": "demotymovaschran",
        "shared": True,
        "work_scope": "inbox",
        "processed_label": "Miladka/zpracovano",
        "classification_labels": {},
        "assignment_labels": ["Anna", "Beda", "Cyril"],
        "my_label": "Anna",
    },
    {
        "name": "automaty",
        "address": "upozorneni@example.com",
        "password": "demoupozorneniab",
        "work_scope": "inbox",
        "unread_only": True,
        "processed_label": None,
        "classification_labels": {},
    },
]

MISSING_DEV = (
    "chyba: ukázka potřebuje vývojové balíčky (chybí modul {module}). "
    "Spusťte ji v naklonovaném repozitáři příkazem `uv run mcp-multi-gmail demo` "
    "(uv doinstaluje skupinu dev); instalace bez vývojových balíčků (--no-dev, doplněk Miládky) "
    "ukázku nemá."
)
SERVE_NOTICE = (
    "mcp-multi-gmail --demo: toto je ukázka na vymyšlených schránkách (osobni, tym, automaty) "
    "ve vestavěném emulátoru Gmailu na tomto počítači. Žádný účet Google se nepoužívá a nic "
    "neodchází ven; změny zmizí po ukončení."
)


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def emulator_class() -> type[GmailEmulator] | None:
    """The emulator class, or None (after a Czech message on stderr) when the dev group is missing."""
    try:
        import aiosmtpd  # noqa: F401
        import trustme  # noqa: F401

        from gmail_emulator import GmailEmulator
    except ImportError as error:
        _stderr(MISSING_DEV.format(module=error.name or "gmail_emulator"))
        return None
    return GmailEmulator


def demo_seed() -> Path:
    return Path(str(files("gmail_emulator.seeds") / "demo" / "seed.json"))


def demo_config(download_dir: Path) -> dict[str, Any]:
    return {"accounts": DEMO_ACCOUNTS, "download_dir": str(download_dir)}


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
        return self.emulator.env()


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


class DemoStopped(KeyboardInterrupt):
    """A stop signal, raised where the main thread is so that every `with` unwinds (a KeyboardInterrupt,
    so asyncio lets it through as it does Ctrl-C)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop_on(signum: int, frame: FrameType | None) -> None:
    raise DemoStopped(signum)


def stop_on_signals() -> None:
    """SIGTERM (what some MCP clients send on exit), SIGHUP (a closed terminal) and SIGINT end the demo
    through its cleanup, not around it."""
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, _stop_on)


def serve_demo() -> int:
    """`mcp-multi-gmail --demo`: the MCP server over stdio against the sample mailboxes."""
    # stdout is the protocol: every diagnostic (ours, the emulator's, the SDK's) goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    emulator_cls = emulator_class()
    if emulator_cls is None:
        return 1

    from .config import ConfigError, load_config
    from .gmail.endpoint import EndpointError, resolve_endpoint
    from .runtime import Runtime
    from .server import build_server

    stop_on_signals()
    try:
        with running_demo(emulator_cls) as setup:
            environ: Mapping[str, str] = {**os.environ, **setup.env()}
            try:
                config = load_config(setup.config_path, layout=None, environ=environ)
                endpoint = resolve_endpoint(setup.env())
            except (ConfigError, EndpointError) as error:  # pragma: no cover - the demo config is fixed
                _stderr(str(error))
                return 1
            # The demo's send journal lives and dies with its temporary folder.
            runtime = Runtime(
                config=config, endpoint=endpoint, layout=None, environ=dict(environ), state_dir=setup.folder
            )
            server = build_server(runtime)
            _stderr(SERVE_NOTICE)
            server.run()
    except DemoStopped as stop:
        # The folder is gone. The transport's stdin reader may still block in a worker thread, and
        # the interpreter would wait for it at exit: leave at once with the signal's exit status.
        sys.stderr.flush()
        os._exit(128 + stop.signum)
    return 0


def tour(lang: str | None) -> int:
    """`mcp-multi-gmail demo [--lang cs|en]`: a guided tour for a person at a terminal."""
    emulator_cls = emulator_class()
    if emulator_cls is None:
        return 1
    from .demo_tour import pick_language, run_tour

    return run_tour(emulator_cls, pick_language(lang, os.environ))
