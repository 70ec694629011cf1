"""The --wait watcher's arguments (watch/args.py): errors in one line, the configuration's mailboxes,
options over the configuration; durations and hours as written."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.config import parse_duration_ms, parse_hours
from mcp_multi_gmail.watch.args import DEFAULT_MAX_MS, WatchArgs, WatchArgsError, plan_watch
from mcp_multi_gmail.watch.loop import in_hours, run_watcher
from mcp_multi_gmail.watch.state import OWNER_FILE
from support import gmail_env
from support.watch_mailboxes import ACCOUNTS, OSOBNI
from support.watching import boundary

# ---------------------------------------------------------------- arguments


@pytest.fixture
def start(
    emulator: GmailEmulator, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    """run_watcher as the CLI calls it; returns the exit code and stdout."""

    def go(config_path: Path, *since: str, **options: str) -> tuple[int, str]:
        code = run_watcher(
            WatchArgs(
                config_path=config_path,
                since=list(since),
                interval=options.get("interval"),
                max_time=options.get("max_time"),
                hours=options.get("hours"),
                layout=None,
                environ=gmail_env(emulator),
            ),
            state_dir=state_dir,
        )
        return code, capsys.readouterr().out

    return go


def test_argument_errors_come_in_one_line(
    start: Callable[..., tuple[int, str]], config_path: Path, state_dir: Path
) -> None:
    code, out = start(
        config_path,
        "neznama=2026-09-01",
        "osobni=2026-09-01",
        "osobni=2026-09-02",
        "prace=zitra",
        "bez-rovnitka",
        interval="10s",
        max_time="0m",
        hours="rano",
    )
    assert code == 6
    assert out.count("\n") == 1
    problems = out.removeprefix("chyba: ").rstrip("\n").split("; ")
    assert len(problems) == 7, out
    assert "neznámou schránku „neznama“" in problems[0]
    assert "osobni má --since dvakrát" in problems[1]
    assert "kotva „zitra“ u schránky prace není datum" in problems[2]
    assert "„bez-rovnitka“ nemá tvar --since jmeno=kotva" in problems[3]
    assert problems[4].startswith("--interval „10s“")
    assert problems[5].startswith("--max „0m“")
    assert problems[6].startswith("--hours „rano“")
    assert not (state_dir / OWNER_FILE).exists()


def test_watched_mailbox_without_boundary(
    start: Callable[..., tuple[int, str]], write_config: Callable[..., Path]
) -> None:
    accounts = [{**ACCOUNTS[0], "watch": True}, {**ACCOUNTS[1], "watch": True}, ACCOUNTS[2]]
    code, out = start(write_config(accounts), f"osobni={boundary()}", f"automaty={boundary()}")
    assert code == 6
    assert out == "chyba: chybí kotva pro hlídanou schránku prace (--since prace=kotva ze system/mail-kotva.md)\n"


def test_watch_flags_choose_the_mailboxes(write_config: Callable[..., Path], emulator: GmailEmulator) -> None:
    accounts = [{**ACCOUNTS[0], "watch": True}, ACCOUNTS[1], ACCOUNTS[2]]
    plan = plan_watch(
        WatchArgs(
            config_path=write_config(accounts),
            since=[f"prace={boundary()}", f"osobni={boundary()}"],
            interval=None,
            max_time=None,
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        )
    )
    assert list(plan.watched) == ["osobni"]
    assert plan.dropped == ("prace",)
    assert (plan.interval_s, plan.max_s, plan.hours) == (300, DEFAULT_MAX_MS / 1000, None)


def test_options_override_the_config(write_config: Callable[..., Path], emulator: GmailEmulator) -> None:
    path = write_config(ACCOUNTS, watch_interval="10m", watch_hours="8-18")

    def plan(**options: str | None) -> tuple[float, tuple[int, int] | None]:
        result = plan_watch(
            WatchArgs(
                config_path=path,
                since=[f"osobni={boundary()}"],
                interval=options.get("interval"),
                max_time=options.get("max_time"),
                hours=options.get("hours"),
                layout=None,
                environ=gmail_env(emulator),
            )
        )
        return result.interval_s, result.hours

    assert plan() == (600, (8, 18))
    assert plan(interval="2m", hours="22-6") == (120, (22, 6))


def test_nothing_watched(start: Callable[..., tuple[int, str]], config_path: Path) -> None:
    assert start(config_path) == (6, "chyba: --wait potřebuje aspoň jedno --since jmeno=kotva\n")


def test_bad_config_file(start: Callable[..., tuple[int, str]], tmp_path: Path) -> None:
    broken = tmp_path / "rozbite.json"
    broken.write_text('{"accounts": [', encoding="utf-8")
    code, out = start(broken, "osobni=2026-09-01", hours="rano")
    assert code == 6
    assert out.startswith(f"chyba: Nastavení `{broken}`") or out.startswith(f"chyba: `{broken}`"), out
    assert out.count("\n") == 1
    assert out.rstrip("\n").endswith("; --hours „rano“ není rozsah hodin, čeká se třeba 9-19 nebo 22-6")
    code, out = start(tmp_path / "chybi.json", "osobni=2026-09-01")
    assert code == 6
    assert "nejde přečíst" in out


def test_missing_password_env_is_a_bad_start(
    start: Callable[..., tuple[int, str]], write_config: Callable[..., Path]
) -> None:
    entry = {"name": "osobni", "address": OSOBNI, "password_env": "MG_TEST_HESLO_KTERE_NENI"}
    code, out = start(write_config([entry]), "osobni=2026-09-01")
    assert code == 6
    assert out.startswith("chyba: ") and out.count("\n") == 1


def test_plan_errors_are_collected() -> None:
    with pytest.raises(WatchArgsError) as caught:
        plan_watch(
            WatchArgs(
                config_path=Path("/neexistuje/nastaveni.json"),
                since=["x"],
                interval="pět",
                max_time=None,
                hours="9",
                layout=None,
                environ={},
            )
        )
    assert len(caught.value.problems) == 4


# ---------------------------------------------------------------- parsing


def test_duration_and_hour_parsing() -> None:
    assert parse_duration_ms("5m") == 300_000
    assert parse_duration_ms("90s") == 90_000
    assert parse_duration_ms("2h") == 7_200_000
    assert parse_duration_ms("10") == 600_000
    assert parse_duration_ms("pět") is None
    assert parse_hours("9-19") == (9, 19)
    assert parse_hours("22-6") == (22, 6)
    assert parse_hours("9") is None


def test_hour_window_wraps_over_midnight() -> None:
    assert [h for h in range(24) if in_hours(h, (9, 19))] == list(range(9, 19))
    assert [h for h in range(24) if in_hours(h, (22, 6))] == [0, 1, 2, 3, 4, 5, 22, 23]
    assert all(in_hours(h, None) for h in range(24))


def test_anchor_in_rfc_2822_or_iso_with_a_space(config_path: Path, emulator: GmailEmulator) -> None:
    plan = plan_watch(
        WatchArgs(
            config_path=config_path,
            since=["osobni=Sun, 29 Nov 2026 08:00:00 +0100", "prace=2026-11-29 08:00"],
            interval=None,
            max_time=None,
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        )
    )
    assert plan.watched == {
        "osobni": datetime(2026, 11, 29, 7, 0, tzinfo=UTC),
        "prace": datetime(2026, 11, 29, 8, 0, tzinfo=UTC),
    }
