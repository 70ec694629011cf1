"""Command line: start-up order guard → config → warnings → server (stdout carries only MCP).

Modes: the stdio server (default), `--wait` and `--follow` (the watcher), `--demo` (the server against
the embedded sample mailboxes), `demo` (a guided tour for a person at a terminal), `probe` (what one
real mailbox does where Gmail's behaviour is not documented) and `--sign-in NAME` (the one-time
sign-in with Google of a mailbox with "auth": "oauth").
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
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
    # No abbreviations: `--wai` must not silently become `--wait`, which is told apart before parsing.
    parser = _Parser(prog="mcp-multi-gmail", description="MCP server pro více schránek Gmailu.", allow_abbrev=False)
    parser.add_argument(
        "command",
        nargs="?",
        choices=["demo", "probe"],
        help="demo = průvodce na ukázkových schránkách; probe = změří chování Gmailu na jedné schránce",
    )
    parser.add_argument("--version", action="store_true", help="vypíše verzi a skončí")
    parser.add_argument("--config", help="cesta k nastavení (jinak MG_CONFIG, jinak config.json)")
    parser.add_argument(
        "--check-config", metavar="SOUBOR", help="zkontroluje nastavení (i z verze 1.5.0) bez připojení a skončí"
    )
    parser.add_argument("--demo", action="store_true", help="MCP server nad ukázkovými schránkami (bez Googlu)")
    parser.add_argument(
        "--sign-in", metavar="JMENO", help='jednorázové přihlášení schránky s "auth": "oauth" přes Google (v terminálu)'
    )
    parser.add_argument("--lang", choices=["cs", "en"], default=None, help="jazyk průvodce (demo)")
    probe = parser.add_argument_group("probe")
    probe.add_argument("--account", help="jméno schránky z nastavení, kterou probe změří")
    probe.add_argument(
        "--write-test", action="store_true", help="probe uloží a hned smaže jeden koncept odpovědi (jinak jen čte)"
    )
    watcher = parser.add_argument_group("hlídač (--wait, --follow)")
    watcher.add_argument("--wait", action="store_true", help="hlídá novou poštu a skončí, když nějaká přijde")
    watcher.add_argument(
        "--follow", action="store_true", help="hlídá novou poštu a každou ohlásí řádkem (nástroj Monitor v Claude Code)"
    )
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


def _value_missing(argv: Sequence[str], option: str) -> bool:
    """`option` without a path: last, followed by another option, or an empty/blank value."""
    for i, item in enumerate(argv):
        if item == option:
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if not value.strip() or value.startswith("--"):
                return True
        elif item.startswith(option + "=") and not item.partition("=")[2].strip():
            return True
    return False


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--version" in argv:  # before anything else, as 1.5.0: no config needed
        print(f"mcp-multi-gmail {__version__}")
        return
    if "--wait" in argv or "--follow" in argv:
        # The assistant reads the watcher's stdout and exit code: every argument problem is one
        # `chyba:` line with code 6, never argparse's English text with code 2 (read as a crash).
        raise SystemExit(watch(argv))
    for option in ("--config", "--check-config"):
        if _value_missing(argv, option):
            _stderr(f"chyba: {option} potřebuje cestu k souboru s nastavením")
            raise SystemExit(1)
    args = _parser().parse_args(argv)
    if args.check_config is not None:
        raise SystemExit(check_config(Path(args.check_config)))
    if args.sign_in is not None:
        from .signin import sign_in

        raise SystemExit(sign_in(config_path(args.config, os.environ).absolute(), args.sign_in))
    if args.command == "demo":
        from .demo.tour import tour

        raise SystemExit(tour(lang=args.lang))
    if args.command == "probe":
        raise SystemExit(probe(args))
    if args.demo:
        from .demo.serve import serve_demo

        raise SystemExit(serve_demo())
    raise SystemExit(serve(args.config))


def watch(argv: Sequence[str]) -> int:
    """The watcher: --wait's one line or --follow's line per new mail on stdout, exit code for the assistant
    (docs/en/watcher.md)."""
    if check_location(project_dir(), release=is_release_build()) is not None:
        print(f"chyba: {GUARD_MESSAGE.replace(chr(10), ' ')}", flush=True)
        return WATCHER_BAD_START
    from .watch.args import WatchArgs, read_watch_argv
    from .watch.loop import run_watcher

    args = read_watch_argv(argv)
    if args.ignored:
        _stderr(f"POZOR: hlídač přeskočil neznámé argumenty: {' '.join(args.ignored)}")
    return run_watcher(
        WatchArgs(
            config_path=None if args.config_missing else config_path(args.config, os.environ).absolute(),
            since=args.since,
            interval=args.interval,
            max_time=args.max_time,
            hours=args.hours,
            layout=detect_layout(project_dir()),
            environ=os.environ,
            problems=args.problems,
            follow=args.follow,
        )
    )


def probe(args: argparse.Namespace) -> int:
    """Measure one mailbox (read-only unless --write-test); the report and the matching emulator
    knobs as JSON go to stdout, problems to stderr."""
    import json

    from .config import ConfigError, load_config
    from .errors import MailError
    from .gmail.endpoint import EndpointError, resolve_endpoint
    from .gmail.probe import run_probe

    if not args.account:
        _stderr("chyba: probe potřebuje --account JMENO (jméno schránky z nastavení)")
        return 2
    path = config_path(args.config, os.environ).absolute()
    try:
        config = load_config(path, layout=detect_layout(project_dir()), environ=os.environ)
        endpoint = resolve_endpoint(os.environ)
    except (ConfigError, EndpointError) as error:
        _stderr(str(error))
        return 1
    account = config.account(args.account)
    if account is None:
        names = ", ".join(a.name for a in config.accounts)
        _stderr(f'chyba: schránka "{args.account}" v nastavení není (jsou tam: {names})')
        return 2
    if endpoint.overridden:
        _stderr(f"POZOR: místo Gmailu měřím {endpoint.imap_host}:{endpoint.imap_port} (MG_GMAIL_ENDPOINT).")
    try:
        report = run_probe(account.name, account.address, account.login, endpoint, write_test=args.write_test)
    except MailError as error:
        _stderr(f"chyba: {error.message}")
        return 1
    print("\n".join(report.lines()))
    print("emulator knobs matching this mailbox:")
    print(json.dumps(report.knobs(), ensure_ascii=False, indent=2), flush=True)
    return 1 if report.login_error is not None else 0


def check_config(path: Path) -> int:
    """`--check-config FILE`: the start-up report, then what changed since 1.5.0 for this file.

    Exit 0 when the server would start with it, 1 when not. Connects nowhere."""
    from .config.zone import zone_line
    from .migration import migration_notes
    from .runtime import check_start
    from .startup import summary

    path = path.absolute()
    layout = detect_layout(project_dir())
    check = check_start(path, project=project_dir(), release=is_release_build(), layout=layout, environ=os.environ)
    lines = list(check.lines)
    if check.runtime is not None:
        lines.append(f"V pořádku, server by naběhl: {summary(check.runtime.config)}")
        lines.append(zone_line(check.runtime.config.timezone))
    else:
        lines.append("Server by s tímto nastavením nenaběhl.")
    notes = migration_notes(path, layout)
    lines.append("Co se pro toto nastavení mění proti verzi 1.5.0:")
    lines.extend(f"- {note}" for note in notes)
    print("\n".join(lines), flush=True)
    return 0 if check.runtime is not None else 1


def serve(config_arg: str | None) -> int:
    # IMAP worker threads parse replies in Python; with the default 5 ms switch interval a few of them
    # keep the event loop, which reads requests and writes answers, waiting for the interpreter.
    sys.setswitchinterval(0.001)
    # Logging goes to stderr before MCPServer configures anything: stdout is the protocol.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from .runtime import check_start, repair_runtime
    from .startup import repair_line, running_line

    layout = detect_layout(project_dir())
    path = config_path(config_arg, os.environ).absolute()
    check = check_start(path, project=project_dir(), release=is_release_build(), layout=layout, environ=os.environ)
    runtime = check.runtime
    if runtime is None:
        # Repair mode: Claude Code shows the user only "failed" for a server that exits, and the
        # assistant never learns why. Serving on, the instructions and every mail tool carry the
        # report, and mg_reload_config brings the tools back once the file is fixed.
        runtime = repair_runtime(check)
    for line in check.lines:
        _stderr(line)

    from .server import build_server

    server = build_server(runtime)
    if runtime.repair is None:
        # The TLS trust store takes ~0.05 s of CPU to load; load it now, beside the handshake, rather
        # than in the middle of the first burst of tool calls, where it would delay every answer.
        threading.Thread(target=runtime.endpoint.tls_context, name="mg-tls-warmup", daemon=True).start()
        _stderr(running_line(runtime.config))
    else:
        _stderr(repair_line())
    # A server that never left repair mode ends as a failed start did (a trial run `< /dev/null` says so).
    return _run_stdio(server, lambda: 1 if runtime.repair is not None else 0)


def _run_stdio(server: MCPServer, exit_code: Callable[[], int]) -> int:
    """Serve until the client closes stdin; the process then ends in lifetime.py, within 2 s."""
    from .server.build import after_tools_built
    from .server.lifetime import freeze_long_lived, run_stdio

    after_tools_built(server, freeze_long_lived)  # this process only: the tests' servers share theirs
    run_stdio(server, exit_code)
