"""Command line: start-up order guard → config → warnings → server (stdout carries only MCP).

Modes: the stdio server (default), `--wait` (the watcher), `--demo` (the server against the
embedded sample mailboxes) and `demo` (a guided tour for a person at a terminal).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .layout import GUARD_MESSAGE, check_location, detect_layout, is_release_build, project_dir

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

WATCHER_BAD_START = 6


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own usage text would be English and long; one Czech line on stderr is enough.
        sys.stderr.write(f"chyba: {message}\n")
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mcp-multi-gmail", description="MCP server pro více schránek Gmailu.")
    parser.add_argument("command", nargs="?", choices=["demo"], help="demo = průvodce na ukázkových schránkách")
    parser.add_argument("--version", action="store_true", help="vypíše verzi a skončí")
    parser.add_argument("--config", help="cesta k nastavení (jinak MG_CONFIG, jinak config.json)")
    parser.add_argument("--demo", action="store_true", help="MCP server nad ukázkovými schránkami (bez Googlu)")
    parser.add_argument("--lang", choices=["cs", "en"], default=None, help="jazyk průvodce (demo)")
    watcher = parser.add_argument_group("hlídač (--wait)")
    watcher.add_argument("--wait", action="store_true", help="hlídá novou poštu a skončí, když nějaká přijde")
    watcher.add_argument("--since", action="append", default=[], metavar="SCHRANKA=KOTVA", help="kotva schránky")
    watcher.add_argument("--interval", help="jak často kontrolovat, např. 5m")
    watcher.add_argument("--max", dest="max_time", help="jak dlouho nejvýš hlídat, např. 115m")
    watcher.add_argument("--hours", help="hodiny hlídání, např. 9-19")
    return parser


def config_path(value: str | None, environ: Mapping[str, str]) -> Path:
    if value is not None:
        return Path(value)
    env = environ.get("MG_CONFIG", "").strip()
    return Path(env) if env else Path("config.json")


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.version:
        print(f"mcp-multi-gmail {__version__}")
        return
    if args.config is not None and not args.config.strip():
        _stderr("chyba: --config potřebuje cestu k souboru s nastavením")
        raise SystemExit(WATCHER_BAD_START if args.wait else 1)
    if args.command == "demo":
        from .demo import tour

        raise SystemExit(tour(lang=args.lang))
    if args.demo:
        from .demo import serve_demo

        raise SystemExit(serve_demo())
    if args.wait:
        raise SystemExit(watch(args))
    raise SystemExit(serve(args.config))


def watch(args: argparse.Namespace) -> int:
    """The --wait watcher: one line on stdout, exit code for the assistant (digest §10)."""
    if check_location(project_dir(), release=is_release_build()) is not None:
        print(f"chyba: {GUARD_MESSAGE.replace(chr(10), ' ')}", flush=True)
        return WATCHER_BAD_START
    from .watch import run_watcher

    return run_watcher(
        config_path=config_path(args.config, os.environ).absolute(),
        since=list(args.since),
        interval=args.interval,
        max_time=args.max_time,
        hours=args.hours,
        layout=detect_layout(project_dir()),
        environ=os.environ,
    )


def serve(config_arg: str | None) -> int:
    # Logging goes to stderr before MCPServer configures anything: stdout is the protocol.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if check_location(project_dir(), release=is_release_build()) is not None:
        _stderr(GUARD_MESSAGE)
        return 1

    from .config import ConfigError, load_config
    from .gitwarn import secrets_in_git_warnings
    from .gmail.endpoint import EndpointError, resolve_endpoint

    layout = detect_layout(project_dir())
    path = config_path(config_arg, os.environ).absolute()
    try:
        config = load_config(path, layout=layout, environ=os.environ)
        endpoint = resolve_endpoint(os.environ)
    except (ConfigError, EndpointError) as error:
        _stderr(str(error))
        return 1
    for warning in config.warnings:
        _stderr(f"POZOR: {warning}")
    if endpoint.overridden:
        _stderr(
            f"POZOR: místo Gmailu se připojuji k {endpoint.imap_host}:{endpoint.imap_port} "
            "(MG_GMAIL_ENDPOINT, jen pro testy a ukázku)."
        )
    for warning in secrets_in_git_warnings(config.secret_files):
        _stderr(warning)

    from .runtime import Runtime
    from .server import build_server

    runtime = Runtime(config=config, endpoint=endpoint, layout=layout, environ=dict(os.environ))
    server = build_server(runtime)
    _stderr(
        f"mcp-multi-gmail {__version__} běží, nastavených schránek: {len(config.accounts)}, "
        f"přílohy do: {config.download_dir}"
    )
    import anyio

    anyio.run(_serve_stdio, server)
    return 0


async def _serve_stdio(server: MCPServer) -> None:
    from .gmail.imap import finish_logouts

    try:
        await server.run_stdio_async()
    finally:
        # LOGOUTs run after each answer; the last ones still go out when the client hangs up.
        await finish_logouts()
