"""mcp-multi-gmail against the peer MCP server `mcp-email-server`, on the same emulated Gmail.

    uv run python benchmarks/run.py            # the full run
    uv run python benchmarks/run.py --quick    # 1k mailboxes only, 0 and 25 ms, 3 calls per cell
    uv run python benchmarks/run.py --smoke    # every row once at 0 ms, for CI

Every mode exits 1 when a row's operation failed (an ERROR cell), so a broken row cannot pass
unseen. How long each mode takes, what the rows mean and the latest table: benchmarks/README.md.
The parts: servers.py (mailboxes and configurations), peer.py (the peer's venv), operations.py and
rows.py (what each row calls), harness.py (driving and measuring), report.py (table and targets).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402
import wakeup  # noqa: E402
from common import RESULTS, log  # noqa: E402
from harness import Driver, time_startups_side_by_side  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from peer import PEER_PACKAGE, PEER_VERSION, PeerStatus, ensure_peer  # noqa: E402
from rows import MINIMAL, OURS, PEER, Bench, Row, startup_rows, watcher_row  # noqa: E402
from servers import (  # noqa: E402
    SMOKE_SWEEP_SIZE,
    SWEEP_SIZE,
    ErrLogs,
    Setup,
    build_mailboxes,
    minimal_params,
    ours_params,
    peer_params,
)

from gmail_emulator import GmailEmulator, Knobs  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="1k mailboxes only, 0 and 25 ms, 3 calls per cell")
    mode.add_argument("--smoke", action="store_true", help="1 call per cell, 0 ms, no 20k mailbox, watcher once")
    parser.add_argument("--calls", type=int, default=None, help="measured calls per cell (default 5, quick 3)")
    parser.add_argument("--latencies", default=None, help="ms per IMAP command, comma separated (default 0,25,50)")
    parser.add_argument("--big-latencies", default=None, help="latencies for the 20k mailbox (default: all)")
    parser.add_argument("--no-big", action="store_true", help="skip the 20 000-message mailbox")
    parser.add_argument("--no-peer", action="store_true", help="measure ours only")
    parser.add_argument("--startup-calls", type=int, default=None, help="spawns per server for g (default 9)")
    parser.add_argument("--no-watch", action="store_true", help="skip the watcher wake-up row w")
    parser.add_argument("--watch-interval", default=None, help="the watcher's --interval for row w (default 5m)")
    parser.add_argument("--watch-calls", type=int, default=None, help="watchers started with IDLE for row w (3)")
    parser.add_argument("--peer-version", default=PEER_VERSION, help=f"{PEER_PACKAGE} version (default {PEER_VERSION})")
    parser.add_argument(
        "--rows", default=None, help="only these rows, comma separated (d needs a for its ratio: --rows a,d)"
    )
    parser.add_argument("--out", default=str(RESULTS / "latest.json"), help="the JSON; the markdown goes beside it")
    args = parser.parse_args(argv)
    # (full, quick, smoke) defaults of each option the modes change
    pick = 2 if args.smoke else 1 if args.quick else 0
    for name, values in {
        "calls": (5, 3, 1),
        "latencies": ("0,25,50", "0,25", "0"),
        "startup_calls": (9, 5, 1),
        "watch_interval": ("5m", "1m", "1m"),
        "watch_calls": (3, 3, 1),
    }.items():
        if getattr(args, name) is None:
            setattr(args, name, values[pick])
    args.latency_list = [int(x) for x in args.latencies.split(",")]
    args.big_list = [int(x) for x in args.big_latencies.split(",")] if args.big_latencies else args.latency_list
    args.with_big = not (args.quick or args.smoke or args.no_big)
    args.only = set(args.rows.split(",")) if args.rows else None
    return args


async def measure_startup(
    servers: dict[str, StdioServerParameters], args: argparse.Namespace, errlogs: ErrLogs, peer_reason: str | None
) -> list[Row]:
    """g, g2, g3, before anything else runs: the servers spawned in turn, so load hits them alike."""
    log(f"g: process start -> initialize answer ({', '.join(servers)}, interleaved)")
    starts = await time_startups_side_by_side(servers, args.startup_calls, errlogs("startup"))
    rows = startup_rows(starts, peer_reason)
    if rows[0].peer.error:
        log(f"peer start-up failed: {rows[0].peer.error}")
    return rows


async def measure_tools(bench: Bench, emu: GmailEmulator, args: argparse.Namespace) -> None:
    """Rows a–f at each latency."""
    for latency in args.latency_list:
        emu.set_latency("*", latency / 1000)
        log(f"latency {latency} ms per IMAP command")
        await bench.run_latency(latency, args.with_big and latency in args.big_list)
    emu.set_latency("*", 0.0)


async def with_drivers(
    emu: GmailEmulator,
    setup: Setup,
    args: argparse.Namespace,
    errlogs: ErrLogs,
    peer: StdioServerParameters | None,
    reason: str | None,
) -> tuple[list[Row], str | None]:
    """Our two warm processes and the peer's (when it starts), then rows a–f; (rows, why no peer)."""
    trio_params, rest_params = ours_params(emu, setup, "trio", setup.trio), ours_params(emu, setup, "rest", setup.rest)
    async with (
        Driver(OURS, trio_params, errlogs("ours-trio")) as trio,
        Driver(OURS, rest_params, errlogs("ours-rest")) as rest,
    ):
        peer_driver: Driver | None = None
        if peer is not None:
            try:
                peer_driver = await Driver(PEER, peer, errlogs("peer")).__aenter__()
            except Exception as error:  # noqa: BLE001 - the peer failing in any way must not stop our measurements
                reason = f"the peer did not start: {type(error).__name__}: {error}"
                log(reason)
        bench = Bench(emu, setup, args.calls, trio, rest, peer_driver, reason, args.only)
        try:
            await measure_tools(bench, emu, args)
        finally:
            if peer_driver is not None:
                await peer_driver.__aexit__(None, None, None)
    return bench.rows, reason


async def measure_watcher(emu: GmailEmulator, setup: Setup, args: argparse.Namespace, errlogs: ErrLogs) -> Row:
    """w: delivery -> exit with IDLE, and (not in a smoke run) once with IDLE refused, poll only."""
    config = wakeup.prepare(emu, setup.workdir)
    interval = args.watch_interval
    log(f"w: watcher wake-up with IDLE, --interval {interval}, {args.watch_calls} runs")
    with_idle = await wakeup.measure_wakeups(
        emu, config, interval=interval, runs=args.watch_calls, idle=True, errlog=errlogs("watch-idle")
    )
    poll_only = None
    if not args.smoke:
        log(f"w: watcher wake-up, poll only (IDLE refused), --interval {interval}, 1 run")
        poll_only = await wakeup.measure_wakeups(
            emu, config, interval=interval, runs=1, idle=False, errlog=errlogs("watch-poll")
        )
    return watcher_row(interval, with_idle, poll_only)


def _wanted(args: argparse.Namespace, *keys: str) -> bool:
    return args.only is None or any(key in args.only for key in keys)


async def measure_all(args: argparse.Namespace, peer: PeerStatus, errlogs: ErrLogs) -> tuple[list[Row], str | None]:
    """Every row, against one emulator; (rows, why the peer is missing)."""
    # No search-index lag: the mailboxes are built just before they are measured, and the lag would
    # turn the first lookups into index misses that real, older mail does not have.
    with GmailEmulator(knobs=Knobs(raw_search_lag_s=0.0)) as emu:
        setup = build_mailboxes(emu, args.with_big, SMOKE_SWEEP_SIZE if args.smoke else SWEEP_SIZE)
        # The emulator's store is most of this process's objects: left out of later collections, a
        # full collection no longer pauses the client (and the emulator) in the middle of a call.
        gc.collect()
        gc.freeze()
        peer_p = peer_params(emu, setup, peer) if peer.available else None
        spawned = {OURS: ours_params(emu, setup, "trio", setup.trio), MINIMAL: minimal_params(setup)}
        spawned |= {PEER: peer_p} if peer_p is not None else {}
        rows = await measure_startup(spawned, args, errlogs, peer.reason) if _wanted(args, "g", "g2", "g3") else []
        tool_rows, reason = await with_drivers(emu, setup, args, errlogs, peer_p, peer.reason)
        rows += tool_rows
        if not args.no_watch and _wanted(args, "w"):
            rows.append(await measure_watcher(emu, setup, args, errlogs))
    return rows, reason


async def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    info = report.machine_info()
    peer = PeerStatus(False, reason="--no-peer") if args.no_peer else ensure_peer(args.peer_version)
    if not peer.available:
        log(f"peer unavailable: {peer.reason}")
    with ExitStack() as stack:
        rows, reason = await measure_all(args, peer, ErrLogs(stack))
    peer_ran = any(r.peer.samples for r in rows if r.key not in ("g2", "g3", "w"))
    modes = {"quick": args.quick, "smoke": args.smoke, "calls": args.calls, "latencies_ms": args.latency_list}
    result = report.build(
        rows,
        args.latency_list,
        info,
        elapsed_s=round(time.perf_counter() - started, 1),
        options={**modes, "big_latencies_ms": args.big_list if args.with_big else []},
        servers={"peer": {"package": PEER_PACKAGE, "version": peer.version, "available": peer_ran, "reason": reason}},
    )
    out = Path(args.out)
    print(report.write(result, out))
    print(f"JSON: {out}; markdown: {out.with_suffix('.md')}")
    for error in result["errors"]:
        log(f"ERROR {error[:300]}")
    return 1 if result["errors"] else 0


def main() -> None:
    raise SystemExit(asyncio.run(run(parse_args())))


if __name__ == "__main__":
    main()
