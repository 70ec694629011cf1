"""mcp-multi-gmail against the peer MCP server `mcp-email-server`, on the same emulated Gmail.

    uv run python benchmarks/run.py            # full run (about 7-10 minutes on 2 cores)
    uv run python benchmarks/run.py --quick    # smoke run: 1k mailboxes, 0 and 25 ms, 3 calls

What it does, what each row means and the latest table: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fixtures as fx  # noqa: E402
import wakeup  # noqa: E402
from harness import (  # noqa: E402
    CallFailed,
    Cell,
    Driver,
    Reply,
    Sample,
    Startup,
    measure,
    time_startups_side_by_side,
)
from mcp import StdioServerParameters  # noqa: E402

from gmail_emulator import GmailEmulator, Knobs  # noqa: E402
from mcp_multi_gmail.gmail.endpoint import loopback_environ  # noqa: E402

RESULTS = HERE / "results"
PEER_VENV = HERE / ".peer-venv"
PEER_PACKAGE = "mcp-email-server"
PEER_VERSION = "1.13.3"  # the version the README tables were measured with; --peer-version to change

OURS, PEER, MINIMAL = "ours", "peer", "minimal"


def log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- the peer's venv


@dataclass
class PeerStatus:
    available: bool
    version: str | None = None
    reason: str | None = None
    command: Path | None = None


def _installed_version(python: Path) -> str | None:
    probe = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({PEER_PACKAGE!r}))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure_peer(version: str, venv: Path = PEER_VENV) -> PeerStatus:
    """The peer in its own virtual environment (it needs mcp 1.x; we run mcp 2.x)."""
    python = venv / "bin" / "python"
    command = venv / "bin" / PEER_PACKAGE
    if python.exists() and _installed_version(python) == version and command.exists():
        return PeerStatus(True, version, command=command)
    base = shutil.which("python3") or sys.executable
    try:
        if not python.exists():
            log(f"creating {venv} ({base} -m venv)")
            subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True, text=True)
        log(f"installing {PEER_PACKAGE}=={version} into {venv}")
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"{PEER_PACKAGE}=={version}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return PeerStatus(False, reason=f"could not create the peer's venv: {error}")
    if pip.returncode != 0:
        tail = " ".join((pip.stderr or pip.stdout).strip().splitlines()[-3:])
        return PeerStatus(False, reason=f"pip install {PEER_PACKAGE}=={version} failed: {tail[:400]}")
    installed = _installed_version(python)
    if installed != version or not command.exists():
        return PeerStatus(False, reason=f"{PEER_PACKAGE} {version} not importable after install ({installed})")
    return PeerStatus(True, version, command=command)


# --------------------------------------------------------------------------- configurations


@dataclass
class Setup:
    workdir: Path
    now: datetime
    trio: list[fx.Mailbox]  # three 1k mailboxes; the first also holds the 10 MB message
    big: fx.Mailbox | None  # 20k
    pass5: fx.Mailbox
    pass50: fx.Mailbox


def build_mailboxes(emu: GmailEmulator, with_big: bool) -> Setup:
    now = fx.utc_now()
    workdir = Path(tempfile.mkdtemp(prefix="mg-bench-"))
    trio = []
    for index, name in enumerate(("a", "b", "c")):
        box = fx.Mailbox(name, f"{name}@{fx.DOMAIN}", 1000)
        started = time.perf_counter()
        fx.load(emu, box, fx.general_specs(name, 1000, reports=0, big=index == 0, now=now))
        log(f"mailbox {name}: 1 000 messages in {time.perf_counter() - started:.1f} s")
        trio.append(box)
    big = None
    if with_big:
        big = fx.Mailbox("big", f"big@{fx.DOMAIN}", 20_000)
        started = time.perf_counter()
        fx.load(emu, big, fx.general_specs("big", 20_000, reports=10_000, big=False, now=now), progress=log)
        log(f"mailbox big: 20 000 messages in {time.perf_counter() - started:.1f} s")
    pass5 = fx.Mailbox("p5", f"p5@{fx.DOMAIN}", 0)
    fx.load(emu, pass5, fx.pass_specs("p5", 5, now=now))
    pass50 = fx.Mailbox("p50", f"p50@{fx.DOMAIN}", 0)
    fx.load(emu, pass50, fx.pass_specs("p50", 50, now=now))
    return Setup(workdir, now, trio, big, pass5, pass50)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def ours_params(emu: GmailEmulator, setup: Setup, name: str, boxes: list[fx.Mailbox]) -> StdioServerParameters:
    home = _private_dir(setup.workdir / f"ours-{name}")
    config = home / "config.json"
    accounts = [
        {"name": b.name, "address": b.address, "password": fx.PASSWORD, "processed_label": fx.PROCESSED} for b in boxes
    ]
    config.write_text(json.dumps({"accounts": accounts}, indent=2))
    config.chmod(0o600)
    exe = Path(sys.executable).parent / "mcp-multi-gmail"
    command, args = (str(exe), []) if exe.exists() else (sys.executable, ["-m", "mcp_multi_gmail"])
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8", **loopback_environ(**emu.env())}
    return StdioServerParameters(command=command, args=[*args, "--config", str(config)], env=env, cwd=str(home))


def peer_params(emu: GmailEmulator, setup: Setup, status: PeerStatus, boxes: list[fx.Mailbox]) -> StdioServerParameters:
    # The config directory must be 0700, or the peer switches its metadata index off.
    home = _private_dir(setup.workdir / "peer")
    config_dir = _private_dir(home / ".config" / "mcp-email-server")
    config = config_dir / "config.toml"
    lines = [
        'credential_storage = "plaintext"',
        'allowed_recipients = ["*@example.com"]',
        'allowed_mutations = ["organize"]',
    ]
    for box in boxes:
        lines += [
            "",
            "[[emails]]",
            f'account_name = "{box.name}"',
            f'full_name = "{box.name.upper()}"',
            f'email_address = "{box.address}"',
            "[emails.incoming]",
            f'user_name = "{box.address}"',
            f'password = "{fx.PASSWORD}"',
            f'host = "{emu.host}"',
            f"port = {emu.imap_port}",
            "use_ssl = true",  # implicit TLS like imap.gmail.com:993
            "start_ssl = false",
            "verify_ssl = false",  # the emulator's certificate is self-signed
        ]
    config.write_text("\n".join(lines) + "\n")
    config.chmod(0o600)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "MCP_EMAIL_SERVER_CONFIG_PATH": str(config),
    }
    assert status.command is not None
    return StdioServerParameters(command=str(status.command), args=["stdio"], env=env, cwd=str(home))


# --------------------------------------------------------------------------- rows


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
        if self.no_ratio or self.ours.median is None or self.peer.median is None or not self.peer.median:
            return None
        return self.ours.median / self.peer.median

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


def _unavailable(reason: str) -> Cell:
    return Cell(unavailable=reason)


def _ids_ours_search(reply: Reply) -> list[str]:
    data = reply.data() or {}
    return [str((t.get("newest_match") or {}).get("message_id")) for t in data.get("threads", [])]


def _ids_peer_list(reply: Reply) -> list[str]:
    data = reply.data() or {}
    return [str(e.get("message_id") or "").strip("<>") for e in data.get("emails", [])]


def _bodies_peer(reply: Reply) -> int:
    data = reply.data() or {}
    return sum(1 for e in data.get("emails", []) if e.get("body"))


@dataclass
class Bench:
    emu: GmailEmulator
    setup: Setup
    runs: int
    ours_trio: Driver
    ours_rest: Driver
    peer: Driver | None
    peer_reason: str | None
    rows: list[Row] = field(default_factory=list)

    # ------------------------------------------------------------------ helpers

    async def pair(
        self,
        key: str,
        title: str,
        latency_ms: int,
        ours_op: Callable[[], Any] | None,
        peer_op: Callable[[], Any] | None,
        *,
        peer_missing: str | None = None,
        before: Callable[[], None] | None = None,
        ratio_note: str | None = None,
        no_ratio: bool = False,
        check: Callable[[list[Reply], list[Reply]], dict[str, Any]] | None = None,
    ) -> Row:
        log(f"  {key:<3} {title} @ {latency_ms} ms")
        ours, ours_replies = (
            (await measure(self.emu, ours_op, self.runs, before=before))
            if ours_op
            else (
                _unavailable("not measured"),
                [],
            )
        )
        peer_replies: list[Reply] = []
        if self.peer is None:
            peer = _unavailable(self.peer_reason or "peer unavailable")
        elif peer_op is None:
            peer = _unavailable(peer_missing or "no equivalent")
        else:
            peer, peer_replies = await measure(self.emu, peer_op, self.runs, before=before)
        row = Row(key, title, latency_ms, ours, peer, ratio_note, no_ratio, ours_replies)
        if check is not None and ours_replies:
            row.ours.check = check(ours_replies, peer_replies)
        self.rows.append(row)
        return row

    def unlabeller(self, box: fx.Mailbox, ids: list[str]) -> Callable[[], None]:
        def run() -> None:
            fx.unlabel(self.emu, box, ids)

        return run

    # ------------------------------------------------------------------ the operations

    async def run_latency(self, latency_ms: int, with_big: bool, big_here: bool) -> None:
        s, trio = self.setup, self.setup.trio
        a = trio[0]
        ours, rest, peer = self.ours_trio, self.ours_rest, self.peer
        query_ours = f"subject:{fx.INVOICE}"

        def peer_list(account: str, word: str) -> Callable[[], Any]:
            async def op() -> list[Reply]:
                assert peer is not None
                return [
                    await peer.call("list_emails_metadata", {"account_name": account, "subject": word, "page_size": 20})
                ]

            return op

        def peer_bodies(box: fx.Mailbox, ids: list[str]) -> Callable[[], Any]:
            uids = [str(box.uid_of[i]) for i in ids]

            async def op() -> list[Reply]:
                assert peer is not None
                return [await peer.call("get_emails_content", {"account_name": box.name, "email_ids": uids})]

            return op

        def ours_search(driver: Driver, account: str, query: str, allow_error: bool = False) -> Callable[[], Any]:
            async def op() -> list[Reply]:
                args = {"account": account, "query": query, "max_results": 20}
                return [await driver.call("mg_search_threads", args, allow_error=allow_error)]

            return op

        def ours_bodies(driver: Driver, box: fx.Mailbox, ids: list[str]) -> Callable[[], Any]:
            async def op() -> list[Reply]:
                out = []
                for mid in ids:
                    reply = await driver.call("mg_get_message", {"account": box.name, "message_id": mid})
                    if not (reply.data() or {}).get("body"):
                        raise_empty(reply)
                    out.append(reply)
                return out

            return op

        def same_ids(ours_r: list[Reply], peer_r: list[Reply]) -> dict[str, Any]:
            got = _ids_ours_search(ours_r[0])
            theirs = _ids_peer_list(peer_r[0]) if peer_r else None
            return {"ours_results": len(got), "same_message_ids_as_peer": None if theirs is None else got == theirs}

        # (a) search + 20 results
        await self.pair(
            "a",
            "search `Invoice` (67 matches) + 20 results, 1k mailbox",
            latency_ms,
            ours_search(ours, a.name, query_ours),
            peer_list(a.name, fx.INVOICE),
            check=same_ids,
        )
        # (b) one body
        await self.pair(
            "b",
            "1 body, 1k mailbox",
            latency_ms,
            ours_bodies(ours, a, a.thread_ids[:1]),
            peer_bodies(a, a.thread_ids[:1]),
        )
        # (c) 10 bodies: ours 10 mg_get_message calls; the peer one call with 10 ids
        await self.pair(
            "c",
            "10 bodies (ours: 10 × mg_get_message; peer: 1 call, 10 ids)",
            latency_ms,
            ours_bodies(ours, a, a.thread_ids),
            peer_bodies(a, a.thread_ids),
        )

        async def ours_thread() -> list[Reply]:
            return [await ours.call("mg_get_thread", {"account": a.name, "thread_id": a.gm_thread_id})]

        await self.pair(
            "c2",
            "the same 10 messages as one thread (ours: 1 × mg_get_thread, headers + auth, NO bodies)",
            latency_ms,
            ours_thread,
            peer_bodies(a, a.thread_ids),
            ratio_note="not like for like: mg_get_thread returns no bodies; peer column = its 10-body call",
        )

        # (c4) the same 10 bodies in one call: mg_get_thread with bodies
        async def ours_thread_bodies() -> list[Reply]:
            args = {"account": a.name, "thread_id": a.gm_thread_id, "bodies": "all"}
            reply = await ours.call("mg_get_thread", args)
            messages = (reply.data() or {}).get("messages", [])
            if len(messages) != 10 or not all(m.get("body") for m in messages):
                raise_empty(reply)
            return [reply]

        def same_bodies(ours_r: list[Reply], peer_r: list[Reply]) -> dict[str, Any]:
            got = [m["message_id"] for m in (ours_r[0].data() or {}).get("messages", [])]
            theirs = _ids_peer_list(peer_r[0]) if peer_r else None
            return {
                "ours_bodies": sum(1 for m in (ours_r[0].data() or {}).get("messages", []) if m.get("body")),
                "peer_bodies": _bodies_peer(peer_r[0]) if peer_r else None,
                "same_message_ids_as_peer": None if theirs is None else sorted(got) == sorted(theirs),
            }

        await self.pair(
            "c4",
            'the same 10 bodies in one call (ours: mg_get_thread bodies="all"; peer: 1 call, 10 ids)',
            latency_ms,
            ours_thread_bodies,
            peer_bodies(a, a.thread_ids),
            check=same_bodies,
        )

        # (c3) the 10 bodies as 10 calls issued at once, on both servers (not one call at a time)
        def ours_parallel() -> Callable[[], Any]:
            async def op() -> list[Reply]:
                calls = [ours.call("mg_get_message", {"account": a.name, "message_id": mid}) for mid in a.thread_ids]
                return list(await asyncio.gather(*calls))

            return op

        def peer_parallel() -> Callable[[], Any]:
            uids = [str(a.uid_of[mid]) for mid in a.thread_ids]

            async def op() -> list[Reply]:
                assert peer is not None
                calls = [peer.call("get_emails_content", {"account_name": a.name, "email_ids": [u]}) for u in uids]
                return list(await asyncio.gather(*calls))

            return op

        await self.pair(
            "c3",
            "10 bodies as 10 single-message calls sent at once (both servers; not one call at a time)",
            latency_ms,
            ours_parallel(),
            peer_parallel(),
        )

        # (d) the same query over 3 mailboxes
        async def ours_all() -> list[Reply]:
            reply = await ours.call("mg_search_threads", {"account": "all", "query": query_ours, "max_results": 20})
            if len((reply.data() or {}).get("searched", [])) != 3:
                raise_empty(reply)
            return [reply]

        async def peer_three() -> list[Reply]:
            assert peer is not None
            replies = []
            for box in trio:
                args = {"account_name": box.name, "subject": fx.INVOICE, "page_size": 20}
                replies.append(await peer.call("list_emails_metadata", args))
            return replies

        await self.pair(
            "d",
            'same search over 3 mailboxes (ours: 1 call, account "all"; peer: 3 calls summed)',
            latency_ms,
            ours_all,
            peer_three,
        )

        # (h) one body of a 10 MB message
        assert a.big_id is not None
        await self.pair(
            "h",
            "1 body of a 10 MB message (7.6 MB attachment)",
            latency_ms,
            ours_bodies(ours, a, [a.big_id]),
            peer_bodies(a, [a.big_id]),
        )

        # (e) the 20 000-message mailbox
        if with_big and big_here and s.big is not None:
            big = s.big
            await self.pair(
                "e1",
                "20k mailbox: search `Invoice` (67 matches) + 20 results",
                latency_ms,
                ours_search(rest, big.name, query_ours),
                peer_list(big.name, fx.INVOICE),
                check=same_ids,
            )
            row = await self.pair(
                "e2",
                "20k mailbox: search `Report` (10 000 matches) + 20 results",
                latency_ms,
                ours_search(rest, big.name, f"subject:{fx.REPORT}", allow_error=True),
                peer_list(big.name, fx.REPORT),
                no_ratio=True,
                ratio_note="ours answers query_too_broad above 5 000 matches (by design, as in 1.5.0)",
            )
            codes = {((r.data() or {}).get("error") or {}).get("code") for r in row.ours_last}
            row.ours.note = "error query_too_broad (limit 5 000 matches)" if "query_too_broad" in codes else None
            await self.pair(
                "e3",
                "20k mailbox: 1 body",
                latency_ms,
                ours_bodies(rest, big, big.thread_ids[:1]),
                peer_bodies(big, big.thread_ids[:1]),
            )

        # (f) ours only: the pass and the processed label
        since = (s.now - timedelta(days=7)).date().isoformat()
        no_peer = "no equivalent (no threads, no Gmail labels)"
        for box in (s.pass5, s.pass50):

            async def next_pass(box: fx.Mailbox = box) -> list[Reply]:
                reply = await rest.call("mg_next_pass", {"account": box.name, "since": since, "max_threads": 50})
                if len((reply.data() or {}).get("threads", [])) != box.work_threads:
                    raise_empty(reply)
                return [reply]

            await self.pair(
                f"f{1 if box is s.pass5 else 2}",
                f"mg_next_pass, {box.work_threads} work threads",
                latency_ms,
                next_pass,
                None,
                peer_missing=no_peer,
            )
        for count, key in ((4, "f3"), (40, "f4")):
            ids = a.label_ids[:count]

            async def label(ids: list[str] = ids) -> list[Reply]:
                reply = await ours.call(
                    "mg_label_message", {"account": a.name, "message_ids": ids, "label": fx.PROCESSED}
                )
                outcomes = [o.get("outcome") for o in (reply.data() or {}).get("messages", [])]
                if len(outcomes) != len(ids) or any(o != "changed" for o in outcomes):
                    raise_empty(reply)
                return [reply]

            await self.pair(
                key,
                f"mg_label_message on {count} messages",
                latency_ms,
                label,
                None,
                peer_missing=no_peer,
                before=self.unlabeller(a, ids),
            )


def raise_empty(reply: Reply) -> None:
    raise CallFailed(reply.tool, "unexpected result: " + reply.text[:400])


def wakeup_cell(result: wakeup.Wakeups) -> Cell:
    cell = Cell(timing_only=True)
    if result.error is not None and not result.seconds:
        cell.samples.append(Sample(0.0, 1, 0, 0, 0, 0, 0, error=result.error))
        return cell
    for seconds in result.seconds:
        cell.samples.append(Sample(seconds, 1, 0, 0, 0, 0, 0))
    cell.check = {"lines": result.lines, "error": result.error}
    return cell


def minimal_params(setup: Setup) -> StdioServerParameters:
    home = _private_dir(setup.workdir / "minimal")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8"}
    return StdioServerParameters(command=sys.executable, args=[str(HERE / "minimal_server.py")], env=env, cwd=str(home))


def startup_cell(result: Startup) -> Cell:
    cell = Cell(timing_only=True)
    if result.error is not None:
        cell.samples.append(Sample(0.0, 1, 0, 0, 0, 0, 0, error=result.error))
        return cell
    for wall in result.wall_s:
        cell.samples.append(Sample(wall, 1, 0, 0, 0, 0, 0))
    if result.cpu_s:
        cell.check = {"cpu_s": result.cpu_s, "cpu_median_s": sorted(result.cpu_s)[len(result.cpu_s) // 2]}
    return cell


# --------------------------------------------------------------------------- output


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _kb(value: int | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.1f} K" if value < 10_000_000 else f"{value / 1_000_000:.1f} M"


def _cells(cell: Cell) -> list[str]:
    if cell.unavailable is not None:
        return ["n/a", "", "", "", "", ""]
    if cell.error is not None:
        return ["ERROR", "", "", "", "", ""]
    if cell.timing_only:
        return [_s(cell.median), _s(cell.p95), "-", "-", "-", "-"]
    return [
        _s(cell.median),
        _s(cell.p95),
        cell.span("commands"),
        cell.span("connections"),
        _kb(cell.text_bytes),
        _kb(cell.wire_bytes),
    ]


HEADER = [
    "row",
    "operation",
    "ms/cmd",
    "ours med s",
    "ours p95 s",
    "ours cmds",
    "ours conns",
    "ours result",
    "ours IMAP",
    "peer med s",
    "peer p95 s",
    "peer cmds",
    "peer conns",
    "peer result",
    "peer IMAP",
    "ours/peer",
]


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    for row in rows:
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
        if row.ratio_note and row.ratio is not None:
            ratio += " †"
        title = row.title
        if row.ours.note:
            title += f" — ours: {row.ours.note}"
        cells = [row.key, title, str(row.latency_ms), *_cells(row.ours), *_cells(row.peer), ratio]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _find(rows: list[Row], key: str, latency: int) -> Row | None:
    return next((r for r in rows if r.key == key and r.latency_ms == latency), None)


def evaluate(rows: list[Row], latencies: list[int]) -> list[dict[str, Any]]:
    """The issue's targets, each met / missed / not measured, with the numbers behind it."""
    top = max(latencies)
    low = min(latencies)
    out: list[dict[str, Any]] = []

    def add(name: str, met: bool | None, detail: str) -> None:
        out.append({"target": name, "met": met, "detail": detail})

    # Commands per call flat in N.
    pairs = [
        ("a", "e1", "search 1k vs 20k"),
        ("b", "e3", "1 body 1k vs 20k"),
        ("f1", "f2", "pass 5 vs 50 threads"),
        ("f3", "f4", "label 4 vs 40 messages"),
    ]
    details, flat = [], True
    for first, second, what in pairs:
        r1, r2 = _find(rows, first, low), _find(rows, second, low)
        if r1 is None or r2 is None or r1.ours.commands is None or r2.ours.commands is None:
            details.append(f"{what}: not measured")
            continue
        details.append(f"{what}: {r1.ours.commands} vs {r2.ours.commands}")
        flat = flat and r1.ours.commands == r2.ours.commands
    rb, rc = _find(rows, "b", low), _find(rows, "c", low)
    if rb and rc and rb.ours.commands and rc.ours.commands:
        per = rc.ours.commands / 10
        details.append(f"per mg_get_message call, 1 vs 10 bodies: {rb.ours.commands} vs {per:g}")
        flat = flat and per == rb.ours.commands
    add("IMAP commands per call flat in N (ours)", flat, "; ".join(details))

    def by_latency(key: str, value: Callable[[Row], float | None], fmt: str) -> str:
        parts = []
        for latency in latencies:
            row = _find(rows, key, latency)
            got = value(row) if row is not None else None
            parts.append(f"{latency} ms: {'-' if got is None else format(got, fmt)}")
        return ", ".join(parts)

    def ratio_target(key: str, limit: float, name: str, extra: str = "") -> None:
        row = _find(rows, key, top)
        if row is None or row.ratio is None:
            add(name, None, "not measured (peer unavailable?)")
            return
        add(
            name,
            row.ratio <= limit,
            f"at {top} ms/cmd: ours {_s(row.ours.median)} s, peer {_s(row.peer.median)} s, ratio {row.ratio:.2f} "
            f"(target ≤ {limit}); ratio by latency: {by_latency(key, lambda r: r.ratio, '.2f')}{extra}",
        )

    ratio_target("a", 0.5, "search + 20 results ≤ 0.5× the peer")

    def commands_of(key: str) -> str:
        return by_latency(key, lambda r: r.ours.commands, "d")

    ratio_target(
        "c4",
        0.15,
        "10 bodies of a thread ≤ 0.15× the peer (ours: one mg_get_thread with bodies)",
        f"; ours' IMAP commands by latency: {commands_of('c4')}"
        f"; 10 × mg_get_message instead: {by_latency('c', lambda r: r.ratio, '.2f')}"
        f"; 10 calls at once on both: {by_latency('c3', lambda r: r.ratio, '.2f')}",
    )

    def all_factor(row: Row) -> float | None:
        one = _find(rows, "a", row.latency_ms)
        if one is None or not one.ours.median or row.ours.median is None:
            return None
        return row.ours.median / one.ours.median

    three = _find(rows, "d", top)
    factor = all_factor(three) if three is not None else None
    if three is not None and factor is not None:
        one = _find(rows, "a", top)
        assert one is not None
        add(
            "3 mailboxes in one call ≤ 1.3× one mailbox",
            factor <= 1.3,
            f"at {top} ms/cmd: {_s(three.ours.median)} s vs {_s(one.ours.median)} s = {factor:.2f}×; "
            f"by latency: {by_latency('d', all_factor, '.2f')}",
        )
    else:
        add("3 mailboxes in one call ≤ 1.3× one mailbox", None, "not measured")
    start = next((r for r in rows if r.key == "g"), None)
    floor = next((r for r in rows if r.key == "g2"), None)
    listed = next((r for r in rows if r.key == "g3"), None)
    if start and floor and floor.ours.median is not None and floor.peer.median is not None:
        above = floor.ours.median - floor.peer.median
        extra = ""
        if listed and listed.ours.median is not None and listed.peer.median is not None:
            extra = (
                f"; start → tools/list: ours {_s(listed.ours.median)} s, minimal {_s(listed.peer.median)} s "
                f"(+{listed.ours.median - listed.peer.median:.3f} s: the tools are built at the first tools/list)"
            )
        add(
            "initialize at most 0.15 s above a minimal server on the same SDK",
            above <= 0.15,
            f"ours {_s(floor.ours.median)} s (CPU {floor.ours.check.get('cpu_median_s')} s), minimal server "
            f"{_s(floor.peer.median)} s (CPU {floor.peer.check.get('cpu_median_s')} s): +{above:.3f} s; "
            f"mcp-email-server {_s(start.peer.median)} s{extra}",
        )
    wake = next((r for r in rows if r.key == "w"), None)
    if wake and wake.ours.median is not None:
        worst = max(wake.ours.walls())
        add(
            "watcher: delivery → exit ≤ 5 s with --interval 5m",
            worst <= 5.0,
            f"with IDLE: median {_s(wake.ours.median)} s, worst {worst:.3f} s over {len(wake.ours.walls())} runs; "
            f"poll only (IDLE refused): {_s(wake.peer.median)} s",
        )
    big = _find(rows, "h", low)
    if big and big.ours.wire_bytes is not None:
        add(
            "mg_get_message on a 10 MB message transfers < 200 KB",
            big.ours.wire_bytes < 200_000,
            f"ours {big.ours.wire_bytes} B of IMAP; peer {big.peer.wire_bytes} B",
        )
    return out


def machine_info() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        uname = subprocess.run(["uname", "-a"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        uname = " ".join(platform.uname())
    return {
        "uname": uname,
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "loadavg_start": list(os.getloadavg()),
    }


def _mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


# --------------------------------------------------------------------------- main


async def run(args: argparse.Namespace) -> int:
    latencies = [int(x) for x in args.latencies.split(",")]
    big_latencies = [int(x) for x in args.big_latencies.split(",")] if args.big_latencies else latencies
    with_big = not args.quick and not args.no_big
    started = time.perf_counter()
    info = machine_info()
    RESULTS.mkdir(parents=True, exist_ok=True)
    peer_status = PeerStatus(False, reason="--no-peer") if args.no_peer else ensure_peer(args.peer_version)
    if not peer_status.available:
        log(f"peer unavailable: {peer_status.reason}")

    errlogs: list[TextIO] = []

    def errlog(name: str) -> TextIO:
        handle = open(RESULTS / f"{name}.stderr.log", "w", encoding="utf-8")  # noqa: SIM115
        errlogs.append(handle)
        return handle

    rows: list[Row] = []
    # No search-index lag: the mailboxes are built just before they are measured, and the lag would
    # turn the first lookups into index misses that real, older mail does not have.
    with GmailEmulator(knobs=Knobs(raw_search_lag_s=0.0)) as emu:
        setup = build_mailboxes(emu, with_big)
        rest_boxes = [b for b in (setup.big, setup.pass5, setup.pass50) if b is not None]
        ours_trio_p = ours_params(emu, setup, "trio", setup.trio)
        ours_rest_p = ours_params(emu, setup, "rest", rest_boxes)
        peer_p = (
            peer_params(emu, setup, peer_status, [*setup.trio, *([setup.big] if setup.big else [])])
            if (peer_status.available)
            else None
        )

        # (g) start-up, before anything else runs: ours, a minimal server on the same SDK and the
        # peer, spawned in turn so that the machine's load hits all of them alike
        log("g: process start -> initialize answer (ours, minimal server, peer, interleaved)")
        spawned = {OURS: ours_trio_p, MINIMAL: minimal_params(setup)}
        if peer_p is not None:
            spawned[PEER] = peer_p
        starts = await time_startups_side_by_side(spawned, args.startup_calls, errlog("startup"))
        ours_start = startup_cell(starts.initialize[OURS])
        peer_start = (
            startup_cell(starts.initialize[PEER])
            if peer_p
            else (_unavailable(peer_status.reason or "peer unavailable"))
        )
        if peer_p and peer_start.error:
            log(f"peer start-up failed: {peer_start.error}")
        rows.append(
            Row("g", "process start → `initialize` answer (cold process, warm file cache)", 0, ours_start, peer_start)
        )
        rows.append(
            Row(
                "g2",
                "process start → `initialize` answer; peer column: a minimal MCP server on the same SDK (no tools)",
                0,
                startup_cell(starts.initialize[OURS]),
                startup_cell(starts.initialize[MINIMAL]),
                ratio_note="peer column = minimal server on our SDK, not mcp-email-server",
            )
        )
        rows.append(
            Row(
                "g3",
                "process start → `tools/list` answer; peer column: the minimal server (no tools to build)",
                0,
                startup_cell(starts.tools_list[OURS]),
                startup_cell(starts.tools_list[MINIMAL]),
                ratio_note="peer column = minimal server on our SDK, not mcp-email-server",
            )
        )

        peer_driver: Driver | None = None
        peer_reason = peer_status.reason
        async with (
            Driver(OURS, ours_trio_p, errlog("ours-trio")) as ours_trio,
            Driver(OURS, ours_rest_p, errlog("ours-rest")) as ours_rest,
        ):
            if peer_p is not None:
                try:
                    peer_driver = await Driver(PEER, peer_p, errlog("peer")).__aenter__()
                except Exception as error:  # noqa: BLE001 - the peer failing in any way must not stop our measurements
                    peer_reason = f"the peer did not start: {type(error).__name__}: {error}"
                    log(peer_reason)
            try:
                bench = Bench(emu, setup, args.calls, ours_trio, ours_rest, peer_driver, peer_reason, rows)
                for latency in latencies:
                    emu.set_latency("*", latency / 1000)
                    log(f"latency {latency} ms per IMAP command")
                    await bench.run_latency(latency, with_big, latency in big_latencies)
                emu.set_latency("*", 0.0)
            finally:
                if peer_driver is not None:
                    await peer_driver.__aexit__(None, None, None)

        # (w) the watcher: delivery -> exit, IDLE against poll only (ours both times)
        if not args.no_watch:
            watch_config = wakeup.prepare(emu, setup.workdir)
            log(f"w: watcher wake-up with IDLE, --interval {args.watch_interval}, {args.watch_calls} runs")
            with_idle = await wakeup.measure_wakeups(
                emu, watch_config, interval=args.watch_interval, runs=args.watch_calls, idle=True,
                errlog=errlog("watch-idle"),
            )  # fmt: skip
            log(f"w: watcher wake-up, poll only (IDLE refused), --interval {args.watch_interval}, 1 run")
            poll_only = await wakeup.measure_wakeups(
                emu, watch_config, interval=args.watch_interval, runs=1, idle=False, errlog=errlog("watch-poll")
            )
            rows.append(
                Row(
                    "w",
                    f"watcher `--wait --interval {args.watch_interval}`: delivery → exit; ours with IDLE; "
                    "peer column: ours with IDLE refused = poll only, the earlier way (1 run, mail right after a poll)",
                    0,
                    wakeup_cell(with_idle),
                    wakeup_cell(poll_only),
                    ratio_note="peer column = our watcher without IDLE, not mcp-email-server (it has no watcher)",
                )
            )
    for handle in errlogs:
        handle.close()

    info["loadavg_end"] = list(os.getloadavg())
    elapsed = time.perf_counter() - started
    targets = evaluate(rows, latencies)
    text = table(rows)
    notes = [
        "Times in seconds (median and p95 over the calls); cmds/conns = IMAP commands and logged-in connections "
        "the emulator counted for the whole operation; result = bytes of the tool result's text content; "
        "IMAP = bytes the emulator sent. † = not a like-for-like comparison (see JSON ratio_note).",
    ]
    heavy = []
    for row in rows:
        shares = []
        for name, cell in (("ours", row.ours), ("peer", row.peer)):
            if cell.median and cell.emulator_s is not None and cell.emulator_s > 0.3 * cell.median:
                shares.append(f"{name} {cell.emulator_s:.3f} of {cell.median:.3f} s")
        if shares:
            heavy.append(f"{row.key} @ {row.latency_ms} ms: " + ", ".join(shares))
    if heavy:
        notes.append("Emulator processing time (latency excluded) above 30 % of the wall time: " + "; ".join(heavy))
    peer_available = peer_driver is not None or bool(peer_p and not peer_start.error)
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    report: dict[str, Any] = {
        "generated_at": generated,
        "elapsed_s": round(elapsed, 1),
        "machine": info,
        "options": {
            "quick": args.quick,
            "calls": args.calls,
            "latencies_ms": latencies,
            "big_latencies_ms": big_latencies if with_big else [],
        },
        "servers": {
            "ours": {"package": "mcp-multi-gmail", "mcp": _mcp_version()},
            "peer": {
                "package": PEER_PACKAGE,
                "version": peer_status.version,
                "available": peer_available,
                "reason": peer_reason,
            },
        },
        "rows": [r.to_json() for r in rows],
        "targets": targets,
        "table_markdown": text,
        "notes": notes,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    load = ", ".join(f"{x:.2f}" for x in info["loadavg_start"])
    load_end = ", ".join(f"{x:.2f}" for x in info["loadavg_end"])
    lines = [
        f"Run {generated} on `{info['uname']}`, {info['cpu_count']} CPUs ({info['cpu_model']}), "
        f"Python {info['python']}; load average {load} at start, {load_end} at the end; "
        f"{args.calls} calls per cell; {elapsed / 60:.1f} min; peer {PEER_PACKAGE} {peer_status.version or '-'}"
        + ("" if peer_available else f" (unavailable: {peer_reason})")
        + ".",
        "",
        text,
        "",
        *(f"{note}\n" for note in notes),
        "Targets:",
        "",
    ]
    for target in targets:
        mark = {True: "MET", False: "MISSED", None: "n/a"}[target["met"]]
        lines.append(f"- **{mark}** {target['target']}: {target['detail']}")
    markdown = "\n".join(lines) + "\n"
    out.with_suffix(".md").write_text(markdown)
    print(markdown)
    print(f"JSON: {out}; markdown: {out.with_suffix('.md')}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1k mailboxes only, 0 and 25 ms, 3 calls per cell")
    parser.add_argument("--calls", type=int, default=None, help="measured calls per cell (default 5, quick 3)")
    parser.add_argument("--latencies", default=None, help="ms per IMAP command, comma separated (default 0,25,50)")
    parser.add_argument("--big-latencies", default=None, help="latencies for the 20k mailbox (default: all)")
    parser.add_argument("--no-big", action="store_true", help="skip the 20 000-message mailbox")
    parser.add_argument("--no-peer", action="store_true", help="measure ours only")
    parser.add_argument("--startup-calls", type=int, default=None, help="spawns per server for g (default 9)")
    parser.add_argument("--no-watch", action="store_true", help="skip the watcher wake-up row w")
    parser.add_argument("--watch-interval", default=None, help="the watcher's --interval for row w (default 5m)")
    parser.add_argument("--watch-calls", type=int, default=3, help="watchers started with IDLE for row w")
    parser.add_argument("--peer-version", default=PEER_VERSION, help=f"{PEER_PACKAGE} version (default {PEER_VERSION})")
    parser.add_argument(
        "--out", default=str(RESULTS / "latest.json"), help="where the JSON goes (the markdown goes beside it, .md)"
    )
    args = parser.parse_args()
    if args.calls is None:
        args.calls = 3 if args.quick else 5
    if args.latencies is None:
        args.latencies = "0,25" if args.quick else "0,25,50"
    if args.startup_calls is None:
        args.startup_calls = 5 if args.quick else 9
    if args.watch_interval is None:
        args.watch_interval = "1m" if args.quick else "5m"
    raise SystemExit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
