"""The rows of the table: each operation measured on both servers at one latency.

`Bench.run_latency` measures every tool row at the emulator's current latency (rows a–f); the
start-up rows (g, g2, g3) and the watcher row (w) are measured once, before and after them. What
each row calls is in operations.py, what it means in benchmarks/README.md ("The rows").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

import fixtures as fx
import operations as op
import wakeup
from common import log
from harness import Before, Cell, Driver, Operation, Reply, Sample, StartupPair, measure_side_by_side
from servers import Setup

from gmail_emulator import GmailEmulator

OURS, PEER, MINIMAL = "ours", "peer", "minimal"
Check = Callable[[list[Reply], list[Reply]], dict[str, Any]]


@dataclass
class Row:
    key: str
    title: str
    latency_ms: int
    ours: Cell
    peer: Cell
    ratio_note: str | None = None  # why the ratio is not a like-for-like comparison
    no_ratio: bool = False
    ours_last: list[Reply] = field(default_factory=list, repr=False)  # replies of the last measured run

    @property
    def ratio(self) -> float | None:
        if self.no_ratio or self.ours.median is None or not self.peer.median:
            return None
        return self.ours.median / self.peer.median

    def errors(self) -> list[str]:
        """Why a cell of this row holds no measurement: the operation failed (not "unavailable")."""
        return [f"{side}: {cell.error}" for side, cell in ((OURS, self.ours), (PEER, self.peer)) if cell.error]

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "latency_ms": self.latency_ms,
            "ratio": self.ratio,
            "ratio_note": self.ratio_note,
            "ours": self.ours.to_json(),
            "peer": self.peer.to_json(),
        }


@dataclass
class Bench:
    emu: GmailEmulator
    setup: Setup
    runs: int
    ours_trio: Driver
    ours_rest: Driver
    peer: Driver | None
    peer_reason: str | None
    only: set[str] | None = None  # --rows: measure only these
    rows: list[Row] = field(default_factory=list)

    async def pair(
        self,
        key: str,
        title: str,
        latency_ms: int,
        ours_op: Operation,
        peer_op: Callable[[Driver], Operation] | None,
        *,
        peer_missing: str | None = None,
        before: Before | None = None,
        ratio_note: str | None = None,
        no_ratio: bool = False,
        check: Check | None = None,
        always_pair: bool = False,
    ) -> Row:
        """One row: `ours_op` on our server and `peer_op(peer driver)` on the peer, in turn, `runs` times each."""
        if self.only is not None and key not in self.only:
            skipped = Cell(unavailable="not among --rows")
            return Row(key, title, latency_ms, skipped, skipped)  # not in the table
        log(f"  {key:<3} {title} @ {latency_ms} ms")
        ops = [ours_op]
        if peer_op is not None and (self.peer is not None or always_pair):
            # always_pair: the "peer" column is another way on our own server (it ignores the driver given)
            ops.append(peer_op(self.peer if self.peer is not None else self.ours_rest))
        measured = await measure_side_by_side(self.emu, ops, self.runs, before=before)
        ours, ours_replies = measured[0]
        missing = (
            (self.peer_reason or "peer unavailable")
            if self.peer is None and not always_pair
            else (peer_missing or "no equivalent")
        )
        peer, peer_replies = measured[1] if len(measured) > 1 else (Cell(unavailable=missing), [])
        row = Row(key, title, latency_ms, ours, peer, ratio_note, no_ratio, ours_replies)
        if check is not None and ours_replies:
            row.ours.check = check(ours_replies, peer_replies)
        self.rows.append(row)
        return row

    async def invoices(self, key: str, title: str, ms: int, ours: Driver, box: fx.Mailbox) -> Row:
        """Rows a and e1: the `Invoice` search on one mailbox, 20 results, the same ids on both."""
        ours_op = op.ours_search(ours, box.name, f"subject:{fx.INVOICE}")
        peer = partial(op.peer_list, account=box.name, word=fx.INVOICE)
        return await self.pair(key, title, ms, ours_op, peer, check=op.same_ids)

    async def bodies(self, key: str, title: str, ms: int, ours: Driver, box: fx.Mailbox, ids: list[str]) -> Row:
        """Rows b, c, h and e3: ours one mg_get_message per id, the peer one call with every id."""
        peer = partial(op.peer_bodies, box=box, ids=ids)
        return await self.pair(key, title, ms, op.ours_bodies(ours, box, ids), peer)

    async def run_latency(self, latency_ms: int, big_here: bool) -> None:
        """Every tool row at `latency_ms` (the emulator's delay is already set)."""
        await self.read_rows(latency_ms)
        await self.wide_rows(latency_ms)
        if big_here and self.setup.big is not None:
            await self.big_rows(latency_ms, self.setup.big)
        await self.work_rows(latency_ms)
        await self.sweep_rows(latency_ms)

    async def read_rows(self, ms: int) -> None:
        """a, b, c, c2, c4, c3: searching and reading one 1k mailbox."""
        a, ours = self.setup.trio[0], self.ours_trio
        await self.invoices("a", "search `Invoice` (67 matches) + 20 results, 1k mailbox", ms, ours, a)
        await self.bodies("b", "1 body, 1k mailbox", ms, ours, a, a.thread_ids[:1])
        ten = a.thread_ids
        await self.bodies("c", "10 bodies (ours: 10 × mg_get_message; peer: 1 call, 10 ids)", ms, ours, a, ten)
        await self.pair(
            "c2",
            "the same 10 messages as one thread (ours: 1 × mg_get_thread, headers + auth, NO bodies)",
            ms,
            op.ours_thread(ours, a),
            lambda peer: op.peer_bodies(peer, a, ten),
            ratio_note="not like for like: mg_get_thread returns no bodies; peer column = its 10-body call",
        )
        await self.pair(
            "c4",
            'the same 10 bodies (ours: mg_get_thread bodies="all", every page; peer: 1 call, 10 ids)',
            ms,
            op.ours_thread_bodies(ours, a),
            lambda peer: op.peer_bodies(peer, a, ten),
            check=op.same_bodies,
        )
        await self.pair(
            "c3",
            "10 bodies as 10 single-message calls sent at once (both servers; not one call at a time)",
            ms,
            op.ours_parallel_bodies(ours, a),
            lambda peer: op.peer_parallel_bodies(peer, a),
        )

    async def wide_rows(self, ms: int) -> None:
        """d, h: three mailboxes in one call, and the 10 MB message."""
        trio, a = self.setup.trio, self.setup.trio[0]
        await self.pair(
            "d",
            'same search over 3 mailboxes (ours: 1 call, account "all"; peer: 3 calls summed)',
            ms,
            op.ours_search_all(self.ours_trio, f"subject:{fx.INVOICE}", len(trio)),
            lambda peer: op.peer_three(peer, trio),
        )
        assert a.big_id is not None
        await self.bodies("h", "1 body of a 10 MB message (7.6 MB attachment)", ms, self.ours_trio, a, [a.big_id])

    async def big_rows(self, ms: int, big: fx.Mailbox) -> None:
        """e1–e3: the 20 000-message mailbox."""
        rest = self.ours_rest
        await self.invoices("e1", "20k mailbox: search `Invoice` (67 matches) + 20 results", ms, rest, big)
        row = await self.pair(
            "e2",
            "20k mailbox: search `Report` (10 000 matches) + 20 results",
            ms,
            op.ours_search(rest, big.name, f"subject:{fx.REPORT}", expect=None),
            lambda peer: op.peer_list(peer, big.name, fx.REPORT),
            no_ratio=True,
            ratio_note="ours answers query_too_broad above 5 000 matches (by design, as in 1.5.0)",
        )
        codes = {((r.data() or {}).get("error") or {}).get("code") for r in row.ours_last}
        row.ours.note = "error query_too_broad (limit 5 000 matches)" if "query_too_broad" in codes else None
        await self.bodies("e3", "20k mailbox: 1 body", ms, rest, big, big.thread_ids[:1])

    async def work_rows(self, ms: int) -> None:
        """f1–f4, ours only: the pass over new mail and the processed label."""
        s, a = self.setup, self.setup.trio[0]
        since = (s.now - timedelta(days=7)).date().isoformat()
        no_peer = "no equivalent (no threads, no Gmail labels)"
        for key, box in (("f1", s.pass5), ("f2", s.pass50)):
            title = f"mg_next_pass, {box.work_threads} work threads (every page)"
            ours = op.ours_pass(self.ours_rest, box, since)
            await self.pair(key, title, ms, ours, None, peer_missing=no_peer, check=op.pages_of)
        for key, count in (("f3", 4), ("f4", 40)):
            ids = a.label_ids[:count]
            await self.pair(
                key,
                f"mg_label_message on {count} messages",
                ms,
                op.ours_label(self.ours_trio, a, ids),
                None,
                peer_missing=no_peer,
                before=self._unlabeller(a, ids),
            )

    async def sweep_rows(self, ms: int) -> None:
        """s1-s3, ours only: a sweep of 5 000 messages against the same change done by paging."""
        box = self.setup.sweep
        fresh = self._unlabeller(box, box.sweep_ids)
        no_peer = "no equivalent (no Gmail labels)"
        n = f"{len(box.sweep_ids):,}".replace(",", " ")
        await self.pair(
            "s1",
            f"mg_sweep preview, processed label over {n} messages",
            ms,
            op.ours_sweep_preview(self.ours_rest, box),
            None,
            peer_missing=no_peer,
            before=fresh,
        )
        await self.pair(
            "s2",
            f"mg_sweep preview + apply over {n} messages; peer column: the same change through "
            + f"mg_search_threads (100 a page, every page) + mg_label_message ({op.LABEL_BATCH} ids a call)",
            ms,
            op.ours_sweep(self.ours_rest, box),
            lambda _peer: op.ours_paged_label(self.ours_rest, box),
            before=fresh,
            ratio_note="peer column = our own server without mg_sweep (paging + labelling), not mcp-email-server",
            always_pair=True,
        )
        turn = op.UndoTurn(self.ours_rest, box, fresh)
        await self.pair(
            "s3",
            f"mg_undo of that sweep ({n} messages set back)",
            ms,
            turn.op,
            None,
            peer_missing=no_peer,
            before=turn.prepare,
        )

    def _unlabeller(self, box: fx.Mailbox, ids: list[str]) -> Callable[[], None]:
        def run() -> None:
            fx.unlabel(self.emu, box, ids)

        return run


# ------------------------------------------------------------------ rows measured once


def timing_cell(seconds: list[float], error: str | None = None, check: dict[str, Any] | None = None) -> Cell:
    """A cell of wall times only (start-up, watcher): no IMAP, no result."""
    cell = Cell(timing_only=True)
    if error is not None and not seconds:
        cell.samples.append(Sample(0.0, 1, 0, 0, 0, 0, 0, error=error))
        return cell
    cell.samples += [Sample(s, 1, 0, 0, 0, 0, 0) for s in seconds]
    cell.check = check or {}
    return cell


def startup_rows(starts: StartupPair, peer_reason: str | None) -> list[Row]:
    """g: ours against the peer; g2, g3: ours against the minimal server on the same SDK."""

    def cell(label: str, which: str = "initialize") -> Cell:
        if label not in starts.initialize:
            return Cell(unavailable=peer_reason or "peer unavailable")
        result = getattr(starts, which)[label]
        cpu = sorted(result.cpu_s)
        check = {"cpu_s": result.cpu_s, "cpu_median_s": cpu[len(cpu) // 2]} if cpu else None
        return timing_cell(result.wall_s, result.error, check)

    floor = "peer column = minimal server on our SDK, not mcp-email-server"
    return [
        Row("g", "process start → `initialize` answer (cold process, warm file cache)", 0, cell(OURS), cell(PEER)),
        Row(
            "g2",
            "process start → `initialize` answer; peer column: a minimal MCP server on the same SDK (no tools)",
            0,
            cell(OURS),
            cell(MINIMAL),
            ratio_note=floor,
        ),
        Row(
            "g3",
            "process start → `tools/list` answer; peer column: the minimal server (no tools to build)",
            0,
            cell(OURS, "tools_list"),
            cell(MINIMAL, "tools_list"),
            ratio_note=floor,
        ),
    ]


def watcher_row(interval: str, with_idle: wakeup.Wakeups, poll_only: wakeup.Wakeups | None) -> Row:
    """w: our watcher with IDLE; the peer column is the same watcher with IDLE refused (poll only)."""

    def cell(result: wakeup.Wakeups) -> Cell:
        return timing_cell(result.seconds, result.error, {"lines": result.lines, "error": result.error})

    peer = cell(poll_only) if poll_only is not None else Cell(unavailable="poll-only side not run (smoke)")
    return Row(
        "w",
        f"watcher `--wait --interval {interval}`: delivery → exit; ours with IDLE; "
        "peer column: ours with IDLE refused = poll only, the earlier way (1 run, mail right after a poll)",
        0,
        cell(with_idle),
        peer,
        ratio_note="peer column = our watcher without IDLE, not mcp-email-server (it has no watcher)",
    )
