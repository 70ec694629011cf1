"""The benchmark harness cannot break unseen (issue 26): it imports against today's server code,
follows the servers' continuations, fails its run on any ERROR cell, and CI runs its smoke mode."""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any, ClassVar

import pytest

from support import ROOT

BENCHMARKS = ROOT / "benchmarks"


def bench(name: str) -> Any:
    """A benchmarks/ module, imported the way `python benchmarks/run.py` imports it."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


class Pages:
    """A driver whose tool answers come from a script: a list of structured results per tool."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, tool: str, arguments: dict[str, Any], *, allow_error: bool = False) -> Any:
        self.calls.append((tool, arguments))
        return bench("harness").Reply(tool, "{}", self.answers[tool].pop(0), False)


def test_every_module_imports_and_the_smoke_mode_is_small() -> None:
    run = bench("run")
    args = run.parse_args(["--smoke"])
    assert (args.calls, args.latency_list, args.with_big, args.startup_calls, args.watch_calls) == (1, [0], False, 1, 1)
    full = run.parse_args([])
    assert (full.calls, full.latency_list, full.with_big) == (5, [0, 25, 50], True)
    for name in ("operations", "report", "rows", "servers", "peer", "fixtures", "wakeup", "common"):
        bench(name)


def test_pages_are_followed_to_the_last_one() -> None:
    operations = bench("operations")
    driver = Pages({"t": [{"next_page_token": "p2"}, {"next_page_token": "p3"}, {"next_page_token": None}]})
    replies = asyncio.run(operations.all_pages(driver, "t", {"account": "a"}))
    assert len(replies) == 3
    assert [args.get("page_token") for _tool, args in driver.calls] == [None, "p2", "p3"]
    assert all(args["account"] == "a" for _tool, args in driver.calls)


def test_a_body_cut_short_is_read_on_from_where_it_ends() -> None:
    operations = bench("operations")
    driver = Pages({"mg_get_message": [{"body": "def", "body_offset": 3, "body_truncated": False}]})
    message = {"message_id": "m@x", "body": "abc", "body_offset": 0, "body_truncated": True}
    replies = asyncio.run(operations.read_on(driver, "a", message))
    assert len(replies) == 1 and driver.calls[0][1]["body_offset"] == 3
    assert asyncio.run(operations.read_on(driver, "a", {"message_id": "m@x", "body": "x"})) == []


def test_a_token_that_never_ends_is_an_error_not_a_hang() -> None:
    operations, harness = bench("operations"), bench("harness")
    endless = Pages({"t": [{"next_page_token": "again"} for _ in range(operations.MAX_PAGES + 1)]})
    with pytest.raises(harness.CallFailed, match="next_page_token"):
        asyncio.run(operations.all_pages(endless, "t", {}))


def test_an_error_cell_is_reported_and_fails_the_run() -> None:
    harness, rows, report = bench("harness"), bench("rows"), bench("report")
    broken = harness.Cell(samples=[harness.Sample(0.1, 1, 5, 1, 0, 0, 0, error="unexpected result: {}")])
    fine = harness.Cell(samples=[harness.Sample(0.1, 1, 5, 1, 10, 10, 10)])
    missing = harness.Cell(unavailable="peer unavailable")
    table = [rows.Row("c4", "thread", 25, broken, fine), rows.Row("a", "search", 25, fine, missing)]
    assert report.errors(table) == ["c4 @ 25 ms: ours: unexpected result: {}"]
    assert "| c4 | thread | 25 | ERROR |" in report.table(table)


def test_ci_runs_the_smoke_mode_after_the_suite() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "benchmarks/run.py --smoke" in script
    assert script.index("uv run pytest") < script.index("benchmarks/run.py --smoke")


class QuietEmulator:
    """What `measure_side_by_side` reads from the emulator, with nothing to count."""

    def __init__(self) -> None:
        self.observer = self

    latency: ClassVar[dict[str, float]] = {}

    def wire_bytes(self, _direction: str, _protocol: str) -> int:
        return 0

    def reset_counters(self) -> None:
        pass

    def commands(self) -> list[Any]:
        return []

    def connections(self) -> int:
        return 0

    def open_imap_sessions(self) -> int:
        return 0


def test_a_rows_servers_take_turns_and_a_broken_one_stops_at_its_warm_up() -> None:
    harness = bench("harness")
    order: list[str] = []

    def op(name: str, fails: bool = False) -> Any:
        async def run() -> list[Any]:
            order.append(name)
            if fails:
                raise harness.CallFailed("t", "unexpected result")
            return [harness.Reply("t", "{}", {}, False)]

        return run

    both = asyncio.run(harness.measure_side_by_side(QuietEmulator(), [op("ours"), op("peer")], 2))
    assert order == ["ours", "peer"] * 3  # one warm-up each, then the measured runs in turn
    assert [len(cell.samples) for cell, _last in both] == [2, 2]
    order.clear()
    [(cell, _last), _ok] = asyncio.run(harness.measure_side_by_side(QuietEmulator(), [op("x", True), op("y")], 2))
    assert order == ["x", "y", "y", "y"] and cell.error == "unexpected result"


def test_the_sweep_diff_script_finds_each_report_equal_to_the_snapshot_diff(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/sweep_diff.py on a small mailbox (60 threads, 2 messages Gmail leaves unchanged)."""
    monkeypatch.setattr(sys, "argv", ["sweep_diff.py", "--threads", "60", "--replies", "10", "--stubborn", "2"])
    assert bench("sweep_diff").main() == 0
    out = capsys.readouterr().out
    assert "OK: every diff equals what was reported" in out
    assert "after the undo the mailbox is as before the sweep: yes" in out
    # 70 messages, 18 with Účetnictví already (15 threads, 3 of them with a reply): 52 to do, 2 will not take it.
    assert "preview would_change 52, already 18; apply changed 50, already 18, failed 2" in out
