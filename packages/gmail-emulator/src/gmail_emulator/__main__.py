"""``python -m gmail_emulator``: run the emulator as a process (for the demo and process tests).

Writes ``{"imap_port", "smtp_ssl_port", "smtp_starttls_port", "ca_file", "host"}`` to the state
file (atomically) once every listener is up, logs only to stderr (stdout stays silent: it may be an
MCP stdio stream), and stops cleanly with exit status 0 on SIGTERM or SIGINT. The state file is
removed again on a clean stop.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import json
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

log = logging.getLogger("gmail_emulator")


def _parse_latency(items: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not sep or not name.strip() or seconds < 0:
            raise argparse.ArgumentTypeError(f"--latency expects COMMAND=SECONDS, got {item!r}")
        out[name.strip()] = seconds
    return out


def _write_state(path: Path, state: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _demo_seed() -> Iterator[Path]:
    resource = importlib.resources.files("gmail_emulator") / "seeds" / "demo" / "seed.json"
    with importlib.resources.as_file(resource) as path:
        yield path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gmail_emulator",
        description="Run the local Gmail emulator (IMAP + SMTP on 127.0.0.1).",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--seed", type=Path, help="seed JSON file (accounts, labels, messages, knobs)")
    source.add_argument("--demo", action="store_true", help="use the packaged demo seed")
    parser.add_argument("--state", type=Path, required=True, help="where to write the ports and CA path (JSON)")
    parser.add_argument("--workdir", type=Path, help="directory for the CA file (default: a temporary one)")
    parser.add_argument(
        "--latency",
        action="append",
        default=[],
        metavar="CMD=SECONDS",
        help='delay before replying to an IMAP command, e.g. FETCH=0.04 or "*=0.01" (repeatable)',
    )
    parser.add_argument(
        "--oauth-client",
        type=Path,
        metavar="FILE",
        help="also serve Google's sign-in endpoints (HTTPS, same CA) and write a Desktop app client JSON here",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        latency = _parse_latency(args.latency)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("mail.log").setLevel(logging.DEBUG if args.verbose else logging.WARNING)

    from .controller import GmailEmulator
    from .seed import SeedError

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        del frame
        received.append(signum)  # no logging here: the handler may interrupt a logging call
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    state_path: Path = args.state
    with contextlib.ExitStack() as stack:
        seed: Path | None = args.seed
        if args.demo:
            seed = stack.enter_context(_demo_seed())
        emulator = GmailEmulator(seed=seed, workdir=args.workdir)
        try:
            emulator.start()
        except SeedError as exc:
            print(f"gmail_emulator: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"gmail_emulator: cannot start: {exc}", file=sys.stderr)
            return 1
        try:
            for command, seconds in latency.items():
                emulator.set_latency(command, seconds)
            if args.oauth_client is not None:
                from .oauth_http import GoogleOAuth

                google = stack.enter_context(GoogleOAuth(emulator))
                google.client_file(args.oauth_client)
                log.info("Google sign-in endpoints on %s; client file %s", google.base_url, args.oauth_client)
            _write_state(state_path, dict(emulator.env()))
            log.info(
                "listening on %s: IMAP %d, SMTP %d (implicit TLS) and %d (STARTTLS); CA %s; state %s",
                emulator.host,
                emulator.imap_port,
                emulator.smtp_ssl_port,
                emulator.smtp_starttls_port,
                emulator.ca_file,
                state_path,
            )
            while not stop.wait(0.2):
                if not emulator.running:
                    log.error("the emulator loop ended unexpectedly")
                    return 1
        finally:
            if received:
                log.info("signal %d received, stopping", received[0])
            emulator.stop()
            with contextlib.suppress(OSError):
                state_path.unlink()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
