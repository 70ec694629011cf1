"""`mcp-multi-gmail --demo`: the MCP server over stdio against the sample mailboxes."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Mapping
from types import FrameType

import anyio

from .setup import emulator_class, running_demo, stderr_line

SERVE_NOTICE = (
    "mcp-multi-gmail --demo: toto je ukázka na vymyšlených schránkách (osobni, tym, automaty) "
    "ve vestavěném emulátoru Gmailu na tomto počítači. Žádný účet Google se nepoužívá a nic "
    "neodchází ven; změny zmizí po ukončení."
)


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

    from ..config import ConfigError
    from ..gmail.endpoint import EndpointError
    from ..runtime import Runtime
    from ..server import build_server
    from ..server.lifetime import serve_stdio

    stop_on_signals()
    try:
        with running_demo(emulator_cls) as setup:
            environ: Mapping[str, str] = {**os.environ, **setup.env()}
            try:
                # The demo's send journal lives and dies with its temporary folder.
                runtime = Runtime.load(setup.config_path, environ=environ, state_dir=setup.folder)
            except (ConfigError, EndpointError) as error:  # pragma: no cover - the demo config is fixed
                stderr_line(str(error))
                return 1
            server = build_server(runtime)
            stderr_line(SERVE_NOTICE)
            anyio.run(serve_stdio, server)  # connections still in use are cut when the client goes
    except DemoStopped as stop:
        # The folder is gone. The transport's stdin reader may still block in a worker thread, and
        # the interpreter would wait for it at exit: leave at once with the signal's exit status.
        sys.stderr.flush()
        os._exit(128 + stop.signum)
    return 0
